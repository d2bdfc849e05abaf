// Draw every server-built Plotly figure on the page. A figure lives in a <script
// type="application/json"> produced by Django's json_script, so no user text is ever evaluated.
// Every chart gets an accessible name and, right after it, its numbers as a table (the text
// alternative a screen reader reads, and what a reader copies); charts follow the reader's
// light or dark scheme. builder.js and job.js draw through window.SchedbenchCharts too.
(function () {
  "use strict";
  var dark = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  var drawn = [];  // [element, figure]: redrawn when the colour scheme changes
  var MAX_ROWS = 2000;
  var DARK = { paper: "#191e27", plot: "#141922", ink: "#e3e7ef", grid: "#343b4a",
               headFill: "#232a36", cellFill: "#191e27" };

  function copy(value) { return JSON.parse(JSON.stringify(value)); }

  function titleOf(layout) {
    var title = layout && layout.title;
    return (title && (title.text || (typeof title === "string" ? title : ""))) || "";
  }

  // Plotly's mode bar (zoom, download...) is a row of buttons 24 px high at the chart's top right;
  // a phone shows it all the time (no hover), and on a phone's narrow chart it spans the title.
  // A wide chart shows it on hover, over the end of a title long enough to reach it.
  var MODE_BAR_ROW = 28, MODE_BAR_WIDTH = 280, LEGEND_ROW = 20;

  function titleReachesModeBar(layout, width) {
    var title = layout.title, size = (title.font && title.font.size) || 17;
    var left = (layout.margin && layout.margin.l) || 80;
    return left + titleOf(layout).length * size * 0.6 > width - MODE_BAR_WIDTH;
  }

  // A legend at Plotly's default place, right of the plot, took a third of a phone's width
  // from the plot (a comparison's four kernels left it 130 px wide; fifteen, 64 px): on a phone
  // it goes above. Returns the height it will take there (estimated from its names' lengths),
  // for which roomForTitle makes room; 0 when it stays where it was.
  function legendAboveOnPhone(layout, data, width) {
    var legend = layout.legend || {};
    if (width >= 600 || legend.orientation === "h" || legend.x !== undefined ||
        legend.y !== undefined) {
      return 0;
    }
    var glyph = ((layout.font && layout.font.size) || 12) * 0.6, line = width - 90;
    var rows = 0, used = line;
    data.forEach(function (trace) {  // an entry: its sample line and gaps (~45 px), its name
      if (!trace.name || trace.showlegend === false) { return; }
      var entry = 45 + String(trace.name).length * glyph;
      if (used + entry > line) { rows += 1; used = 0; }  // Plotly starts a row: it does not fit
      used += entry;
    });
    if (!rows) { return 0; }
    layout.legend = Object.assign({}, legend, { orientation: "h", x: 0, xanchor: "left",
                                                y: 1.02, yanchor: "bottom" });
    // Plotly puts a gap (tracegroupgap, 10 px) after each legend group: a comparison gives
    // every series one.
    var grouped = data.some(function (trace) { return trace.legendgroup; });
    return rows * (LEGEND_ROW + (grouped ? 10 : 0));
  }

  // On a phone (or under a long title) the title goes to the top of the chart, below the mode
  // bar, and the top margin grows by the mode bar's row; on a phone with a legend above the plot
  // (which wraps to more rows there and ran into the title) by its height as well, two rows at
  // least.
  function roomForTitle(layout, width, legendHeight) {
    if (!titleOf(layout) || (width >= 600 && !titleReachesModeBar(layout, width))) { return; }
    var legendOnTop = width < 600 && layout.legend && layout.legend.yanchor === "bottom";
    var legendRoom = legendOnTop ? Math.max(2 * LEGEND_ROW, legendHeight || 0) : 0;
    var title = typeof layout.title === "string" ? { text: layout.title } : layout.title;
    layout.title = Object.assign({}, title, { yref: "container", y: 0.99, yanchor: "top",
      pad: Object.assign({}, title.pad, { t: MODE_BAR_ROW + 6 }) });
    var margin = layout.margin || {};
    layout.margin = Object.assign({}, margin,
                                  { t: (margin.t || 70) + legendRoom + MODE_BAR_ROW });
  }

  // What the phone's title room took from the top margin is given back in height: the plot
  // kept the chart's box and shrank to a strip ~75 px high on a simulation's page.
  function keepPlotHeight(layout, before, boxHeight) {
    var grown = ((layout.margin && layout.margin.t) || 0) - before;
    if (grown > 0) { layout.height = (layout.height || boxHeight) + grown; }
  }

  // SVG text does not wrap, so a title longer than the chart is wide was cut at both ends on a
  // phone: break it at spaces into lines the chart holds, and give the lines room.  On a narrow
  // chart the title starts at the chart's left edge, not after the y axis's margin, and the
  // line length counts a monospace glyph (0.6 em) against the chart's own width.
  function wrapTitle(layout, width) {
    var text = titleOf(layout);
    if (!text || text.indexOf("<br") >= 0) { return; }
    var title = typeof layout.title === "string" ? { text: layout.title } : layout.title;
    var size = (title.font && title.font.size) || 17;
    if (width < 600) {
      title = Object.assign({}, title, { xref: "container", x: 0, xanchor: "left",
                                         pad: Object.assign({}, title.pad, { l: 8 }) });
      layout.title = title;
    }
    var perLine = Math.max(16, Math.floor((width - 24) / (size * 0.6)));
    if (text.length <= perLine) { return; }
    var lines = lineBreaks(text, perLine);
    var text2 = { text: lines.join("<br>") };
    if (title.yref === "container" && title.yanchor === "top") {
      // Plotly anchors a title of several lines by its middle line, not its first: push it
      // down by the lines above the middle so the first line is not cut at the chart's top
      var top = (title.pad && title.pad.t) || 6;
      text2.pad = Object.assign({}, title.pad,
                                { t: Math.round((lines.length - 1) * size * 0.65) + top });
    }
    layout.title = Object.assign({}, title, text2);
    var margin = layout.margin || {};
    layout.margin = Object.assign({}, margin,
                                  { t: (margin.t || 80) + Math.round((lines.length - 1) * size * 1.3) });
  }

  // On a phone the plot is short, and a y axis title that the chart's title already says ran
  // past both ends of it, over the title: drop the repeat (the chart's title keeps it).
  function dropRepeatedAxisTitles(layout, width) {
    var text = titleOf(layout);
    if (width >= 600 || !text) { return; }
    Object.keys(layout).forEach(function (key) {
      var axisTitle = /^yaxis\d*$/.test(key) && layout[key].title;
      var words = axisTitle && (typeof axisTitle === "string" ? axisTitle : axisTitle.text);
      if (words && text.indexOf(words) >= 0) { layout[key].title = { text: "" }; }
    });
  }

  // Break text at spaces into lines of at most perLine characters.
  function lineBreaks(text, perLine) {
    var lines = [], line = "";
    text.split(" ").forEach(function (word) {
      if (line && (line + " " + word).length > perLine) { lines.push(line); line = word; }
      else { line = line ? line + " " + word : word; }
    });
    lines.push(line);
    return lines;
  }

  // A y axis title longer than a phone's short plot is high ran past both its ends: break it
  // into lines the plot holds (automargin makes room for the extra lines at the left).
  function wrapAxisTitles(layout, width) {
    if (width >= 600) { return; }
    var margin = layout.margin || {};
    var plotHeight = (layout.height || 450) - (margin.t || 80) - (margin.b || 80);
    var size = ((layout.font && layout.font.size) || 12) * 1.17;  // Plotly's axis title size
    var perLine = Math.max(12, Math.floor(plotHeight / (size * 0.6)));
    Object.keys(layout).forEach(function (key) {
      var axisTitle = /^yaxis\d*$/.test(key) && layout[key].title;
      var text = axisTitle && (typeof axisTitle === "string" ? axisTitle : axisTitle.text);
      if (!text || text.length <= perLine || text.indexOf("<br") >= 0) { return; }
      var title = typeof axisTitle === "string" ? {} : axisTitle;
      layout[key].title = Object.assign({}, title,
                                        { text: lineBreaks(text, perLine).join("<br>") });
    });
  }

  // Plotly reads a subset of HTML in every text it draws (<b>, <a href>, <br>...), so a
  // comparison titled "my <b>first</b> one" came out bold and a label could carry a link.
  // Entities are the one thing it decodes without reading markup: user text goes in as them.
  function plotlyPlain(value) {
    return typeof value === "string" ?
      value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;") : value;
  }

  function plainTitle(holder) {
    if (!holder || !holder.title) { return; }
    if (typeof holder.title === "string") { holder.title = { text: holder.title }; }
    holder.title.text = plotlyPlain(holder.title.text);
  }

  function plainTexts(data, layout) {
    plainTitle(layout);
    Object.keys(layout).forEach(function (key) {
      if (/^[xy]axis\d*$/.test(key)) { plainTitle(layout[key]); }
    });
    data.forEach(function (trace) {
      trace.name = plotlyPlain(trace.name);
      ["x", "y", "text"].forEach(function (key) {
        if (Array.isArray(trace[key])) { trace[key] = trace[key].map(plotlyPlain); }
      });
      [trace.header, trace.cells].forEach(function (part) {  // a table trace
        if (part && Array.isArray(part.values)) {
          part.values = part.values.map(function (column) {
            return Array.isArray(column) ? column.map(plotlyPlain) : plotlyPlain(column);
          });
        }
      });
    });
  }

  function themed(figure, width, boxHeight) {
    var data = copy(figure.data || []), layout = copy(figure.layout || {});
    var topMargin = (layout.margin && layout.margin.t) || 80;  // Plotly's default
    layout.margin = Object.assign({}, layout.margin, { t: topMargin });
    plainTexts(data, layout);
    dropRepeatedAxisTitles(layout, width);
    roomForTitle(layout, width, legendAboveOnPhone(layout, data, width));
    wrapTitle(layout, width);
    keepPlotHeight(layout, topMargin, boxHeight);
    wrapAxisTitles(layout, width);
    Object.keys(layout).forEach(function (key) {
      if (/^[xy]axis\d*$/.test(key) && layout[key].automargin === undefined) {
        layout[key].automargin = true;
      }
    });
    if (dark && dark.matches) {
      layout.paper_bgcolor = DARK.paper;
      layout.plot_bgcolor = DARK.plot;
      layout.font = Object.assign({}, layout.font, { color: DARK.ink });
      Object.keys(layout).forEach(function (key) {
        if (/^[xy]axis\d*$/.test(key)) {
          Object.assign(layout[key], { gridcolor: DARK.grid, linecolor: DARK.grid,
                                       zerolinecolor: DARK.grid });
        }
      });
      data.forEach(function (trace) {
        if (trace.type === "table") {
          trace.header = Object.assign({}, trace.header, { fill: { color: DARK.headFill },
            font: { color: DARK.ink }, line: { color: DARK.grid } });
          trace.cells = Object.assign({}, trace.cells, { fill: { color: DARK.cellFill },
            font: { color: DARK.ink }, line: { color: DARK.grid } });
        }
      });
    }
    return { data: data, layout: layout };
  }

  function axisTitle(layout, key, fallback) {
    var axis = layout[key];
    var text = axis && axis.title && (axis.title.text || axis.title);
    return typeof text === "string" && text ? text : fallback;
  }

  function fmt(value) {
    if (value === null || value === undefined || value === "") { return "–"; }
    if (typeof value === "number") { return String(Number(value.toPrecision(6))); }
    return String(value);
  }

  // The figure's numbers as [header, rows]: one row per plotted point.
  function tableOf(figure) {
    var layout = figure.layout || {}, data = figure.data || [];
    var table = data.filter(function (t) { return t.type === "table"; })[0];
    if (table) {
      var columns = table.cells.values;
      var rows = (columns[0] || []).map(function (_, i) {
        return columns.map(function (column) { return column[i]; });
      });
      return [table.header.values, rows];
    }
    var heat = data.filter(function (t) { return t.type === "heatmap"; })[0];
    if (heat) {
      var cells = [];
      heat.y.forEach(function (y, i) {
        heat.x.forEach(function (x, j) { cells.push([y, x, heat.z[i][j]]); });
      });
      return [[axisTitle(layout, "yaxis", "row"), axisTitle(layout, "xaxis", "column"), "value"],
              cells];
    }
    var x = axisTitle(layout, "xaxis", "x");
    var header = ["series", x, axisTitle(layout, "yaxis", "value")];
    var out = [], withErrors = data.some(function (t) { return t.error_y && t.error_y.array; });
    if (withErrors) { header.push("error bar (− / +)"); }
    data.forEach(function (trace) {
      var name = trace.name || "";
      if (trace.type === "box") {
        var groups = {};
        (trace.x || []).forEach(function (xv, i) {
          (groups[xv] = groups[xv] || []).push(fmt(trace.y[i]));
        });
        Object.keys(groups).forEach(function (xv) {
          out.push([name, xv, groups[xv].join(", ")].concat(withErrors ? [""] : []));
        });
        return;
      }
      (trace.x || []).forEach(function (xv, i) {
        var row = [name, xv, trace.y[i]];
        if (withErrors) {
          var bars = trace.error_y;
          row.push(bars && bars.array ? fmt(bars.arrayminus ? bars.arrayminus[i] : bars.array[i]) +
                   " / " + fmt(bars.array[i]) : "");
        }
        out.push(row);
      });
    });
    return [header, out];
  }

  function describe(el, figure) {
    var title = titleOf(figure.layout) || el.dataset.label || "Chart";
    // "figure", not "img": Plotly's own controls inside it stay reachable (an img has no parts).
    el.setAttribute("role", "figure");
    el.setAttribute("aria-label", title + " (chart; its numbers are in the table below it)");
    el.setAttribute("aria-describedby", el.id + "-data");
    var details = document.getElementById(el.id + "-data");
    // The page came with the table (comparisons.views.chart_data): same rows, already there.
    if (details && details.dataset.server === "1") { return; }
    var parts = tableOf(figure), rows = parts[1];
    if (!details) {
      details = document.createElement("details");
      details.id = el.id + "-data";
      details.className = "chart-data";
      el.insertAdjacentElement("afterend", details);
    }
    details.textContent = "";
    var summary = document.createElement("summary");
    summary.textContent = "Chart data as a table (" + rows.length + " rows)";
    details.appendChild(summary);
    var box = document.createElement("div");
    box.className = "table-scroll";
    var table = document.createElement("table");
    table.className = "data";
    var caption = table.createCaption();
    caption.className = "sr-only";
    caption.textContent = title;
    var head = table.createTHead().insertRow();
    parts[0].forEach(function (name) {
      var th = document.createElement("th");
      th.scope = "col";
      th.textContent = fmt(name);
      head.appendChild(th);
    });
    var body = table.createTBody();
    rows.slice(0, MAX_ROWS).forEach(function (row) {
      var tr = body.insertRow();
      row.forEach(function (value) { tr.insertCell().textContent = fmt(value); });
    });
    box.appendChild(table);
    details.appendChild(box);
    if (rows.length > MAX_ROWS) {
      var more = document.createElement("p");
      more.className = "muted";
      more.textContent = "First " + MAX_ROWS + " of " + rows.length + " rows.";
      details.appendChild(more);
    }
  }

  function draw(el, figure, extra) {
    if (!window.Plotly) { return Promise.resolve(); }
    // The box's CSS min-height, not its height: a redraw must not grow on the last one's.
    var boxHeight = parseFloat(window.getComputedStyle(el).minHeight) || 450;
    var themedFigure = themed(figure, el.clientWidth || window.innerWidth, boxHeight);
    if (el.dataset.fill === "height") {
      delete themedFigure.layout.height;  // fill the frame (the embed)
      themedFigure.layout.autosize = true;
    }
    var config = Object.assign({ responsive: true, displaylogo: false,
      toImageButtonOptions: { filename: el.dataset.filename || "schedbench" } }, extra || {});
    var known = drawn.filter(function (pair) { return pair[0] === el; })[0];
    if (known) { known[1] = figure; } else { drawn.push([el, figure]); }
    describe(el, figure);
    return window.Plotly.react(el, themedFigure.data, themedFigure.layout, config)
      .then(function () {
        if (window.SchedbenchSite) { window.SchedbenchSite.markScrollable(); }
      });
  }

  window.SchedbenchCharts = { draw: draw, describe: describe, table: tableOf };

  if (dark && dark.addEventListener) {
    dark.addEventListener("change", function () {
      drawn.forEach(function (pair) { draw(pair[0], pair[1]); });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      var source = document.getElementById(el.dataset.figure);
      if (!source) { return; }
      draw(el, JSON.parse(source.textContent)).then(function () { el.dataset.rendered = "1"; });
    });
  });
})();

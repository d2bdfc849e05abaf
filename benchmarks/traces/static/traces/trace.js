// Trace pages: per-CPU timelines fetched window by window from the API (zoom and pan ask the
// server for a decimated view of the visible window), wakeup arrows on demand, the latency
// histogram and the sortable task table. All user text (comm names) goes through esc() before
// Plotly sees it and through textContent elsewhere; no HTML is ever built from it.
(function () {
  "use strict";

  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  function colour(task) {
    if (task < 0) { return "#9aa0a6"; }
    var hue = (task * 137.508) % 360;  // golden angle: neighbours get distant hues
    return "hsl(" + hue.toFixed(1) + ",62%,52%)";
  }

  var panels = [];
  var syncing = false;

  function lane(cpu) { return "CPU " + cpu; }

  function figureData(body) {
    var segs = body.segments;
    var bars = { type: "bar", orientation: "h", base: [], x: [], y: [], hovertext: [],
                 hoverinfo: "text", marker: { color: [], line: { width: 0 } },
                 name: "runs", showlegend: false };
    segs.forEach(function (s) {
      bars.base.push(s.start_ms);
      bars.x.push(Math.max(s.end_ms - s.start_ms, 1e-6));
      bars.y.push(lane(s.cpu));
      bars.marker.color.push(colour(s.task));
      var who = s.pid === null ? esc(s.comm) : esc(s.comm) + "-" + s.pid;
      bars.hovertext.push(who + "<br>CPU " + s.cpu + " · " + s.start_ms.toFixed(3) + "–" +
        s.end_ms.toFixed(3) + " ms<br>left the CPU: " + esc(s.reason));
    });
    var data = [bars];
    if (body.wakeups) {
      var arrows = { type: "scatter", mode: "lines+markers", x: [], y: [], hovertext: [],
                     hoverinfo: "text", name: "wakeups", showlegend: false,
                     line: { color: "rgba(200,40,40,0.55)", width: 1 },
                     marker: { size: 6, symbol: [], color: "rgba(200,40,40,0.8)" } };
      body.wakeups.forEach(function (w) {
        var text = "wakes " + esc(w.comm) + "-" + w.pid + " at " + w.at_ms.toFixed(3) + " ms";
        arrows.x.push(w.at_ms, w.at_ms, null);
        arrows.y.push(lane(w.from_cpu), lane(w.to_cpu), null);
        arrows.hovertext.push(text, text, "");
        arrows.marker.symbol.push("circle-open", "triangle-down", "circle");
      });
      data.push(arrows);
    }
    return data;
  }

  function layout(panel, body) {
    var lanes = body.cpus.map(lane);
    return {
      barmode: "overlay", bargap: 0.15, dragmode: "zoom", hovermode: "closest",
      height: Math.max(160, 46 * lanes.length + 70),
      margin: { l: 60, r: 10, t: 10, b: 40 },
      xaxis: { title: { text: "ms from the trace's start" }, range: [body.start_ms, body.end_ms],
               zeroline: false },
      yaxis: { type: "category", categoryorder: "array", categoryarray: lanes.slice().reverse(),
               fixedrange: true },
      uirevision: "keep"
    };
  }

  function fetchWindow(panel, start, end) {
    var el = panel.el;
    var url = el.dataset.api + "?start_ms=" + encodeURIComponent(start) + "&end_ms=" +
      encodeURIComponent(end) + (panel.wakeups ? "&wakeups=1" : "");
    if (!panel.window && !panel.wakeups && start === 0 &&
        end === Number(el.dataset.initialEnd)) {
      url = el.dataset.initial;  // the exact URL the page preloaded in its <head>
    }
    var ticket = ++panel.ticket;
    panel.status.textContent = "loading…";
    return fetch(url, { credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.json();
      })
      .then(function (body) {
        if (ticket !== panel.ticket) { return; }  // a newer window was asked for meanwhile
        panel.window = [body.start_ms, body.end_ms];
        var figureLayout = layout(panel, body);
        return window.Plotly.react(panel.chart, figureData(body), figureLayout, {
          responsive: true, displaylogo: false, scrollZoom: false
        }).then(function () {
          el.dataset.fetches = String(Number(el.dataset.fetches || 0) + 1);
          el.dataset.window = body.start_ms + "," + body.end_ms;
          el.dataset.segments = String(body.segments.length);
          el.dataset.decimated = body.decimated ? "1" : "0";
          el.dataset.wakeups = body.wakeups ? String(body.wakeups.length) : "";
          panel.status.textContent = body.segments.length + " segments" +
            (body.decimated ? " (short runs merged at this zoom; zoom in for every switch)" : "") +
            (body.wakeups ? " · " + body.wakeups.length + " wakeups" +
              (body.wakeups_thinned ? " (thinned)" : "") : "");
          el.dataset.ready = "1";
          if (!panel.bound) { bind(panel); }
        });
      })
      .catch(function (error) {
        panel.status.textContent = "could not load the timeline: " + error.message;
      });
  }

  function rangeOf(event) {
    if (event["xaxis.autorange"]) { return null; }
    var a = event["xaxis.range[0]"], b = event["xaxis.range[1]"];
    if (a === undefined && event["xaxis.range"]) { a = event["xaxis.range"][0]; b = event["xaxis.range"][1]; }
    if (a === undefined || b === undefined) { return undefined; }
    return [Number(a), Number(b)];
  }

  // The whole trace; on the side-by-side page the longest one, so both share one axis.
  function whole() {
    return [0, Math.max.apply(null, panels.map(function (panel) { return panel.duration; }))];
  }

  function bind(panel) {
    panel.bound = true;
    panel.chart.on("plotly_relayout", function (event) {
      if (syncing) { return; }
      var range = rangeOf(event);
      if (range === undefined) { return; }
      clearTimeout(panel.timer);
      panel.timer = setTimeout(function () { show(range, panel); }, 120);
    });
  }

  // Show the same relative window in every panel (the side-by-side page shares one axis).
  function show(range, origin) {
    panels.forEach(function (panel) {
      var r = range || whole(panel);
      if (panel !== origin && range) {
        syncing = true;
        window.Plotly.relayout(panel.chart, { "xaxis.range": r }).then(function () {
          syncing = false;
        });
      }
      fetchWindow(panel, r[0], r[1]);
    });
  }

  function latencyChart() {
    var el = document.getElementById("latency-chart");
    var source = document.getElementById("latency-data");
    if (!el || !source) { return; }
    var hist = JSON.parse(source.textContent);
    if (!hist.counts.length) { el.textContent = "No wakeups were followed by a run."; return; }
    var x = [], y = [];
    hist.bounds_us.forEach(function (b, i) {
      x.push(b[0] > 0 ? b[0] : b[1] / 2, b[1]);  // a log axis has no 0: draw [0, 1 µs) from 0.5
      y.push(hist.counts[i], hist.counts[i]);
    });
    window.Plotly.newPlot(el, [{ type: "scatter", mode: "lines", x: x, y: y, fill: "tozeroy",
      line: { shape: "hv" }, hovertemplate: "%{x:.3g} µs: %{y} wakeups<extra></extra>" }], {
      height: 260, margin: { l: 60, r: 10, t: 10, b: 50 },
      xaxis: { type: "log", title: { text: "wakeup-to-run latency (µs, log scale)" } },
      yaxis: { title: { text: "wakeups" }, rangemode: "tozero" }
    }, { responsive: true, displaylogo: false }).then(function () { el.dataset.rendered = "1"; });
  }

  function sortable(table) {
    var body = table.tBodies[0];
    table.querySelectorAll("th").forEach(function (th, column) {
      th.tabIndex = 0;
      th.addEventListener("click", function () {
        var descending = th.dataset.sorted !== "desc";
        table.querySelectorAll("th").forEach(function (other) { delete other.dataset.sorted; });
        th.dataset.sorted = descending ? "desc" : "asc";
        var numeric = th.dataset.type === "num";
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r1, r2) {
          var a = r1.cells[column].dataset.value, b = r2.cells[column].dataset.value;
          var order = numeric ? Number(a) - Number(b) : a.localeCompare(b);
          return descending ? -order : order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  }

  function compareLink() {
    var form = document.getElementById("compare-form");
    var select = document.getElementById("compare-select");
    var link = document.getElementById("compare-link");
    if (!form || !select || !link) { return; }
    function update() {
      link.href = form.dataset.base + form.dataset.trace + "/vs/" + select.value + "/";
      link.hidden = !select.value;
    }
    select.addEventListener("change", update);
    update();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".trace-timeline").forEach(function (el) {
      panels.push({ el: el, chart: el.querySelector(".timeline-chart"),
                    status: el.querySelector(".timeline-status"), ticket: 0, wakeups: false,
                    duration: Number(el.dataset.duration) || 1, bound: false, timer: null });
    });
    if (panels.length && window.Plotly) {
      show(null, null);
      var toggle = document.getElementById("wakeups-toggle");
      if (toggle) {
        toggle.addEventListener("change", function () {
          panels.forEach(function (panel) {
            panel.wakeups = toggle.checked;
            var r = panel.window || whole(panel);
            fetchWindow(panel, r[0], r[1]);
          });
        });
      }
      document.querySelectorAll(".reset-zoom").forEach(function (button) {
        button.addEventListener("click", function () {
          panels.forEach(function (panel) {
            syncing = true;
            window.Plotly.relayout(panel.chart, { "xaxis.range": whole(panel) }).then(function () {
              syncing = false;
            });
          });
          show(null, null);
        });
      });
    }
    if (window.Plotly) { latencyChart(); }
    document.querySelectorAll("table.sortable").forEach(sortable);
    compareLink();
  });
})();

// Trace pages: per-CPU timelines drawn on a <canvas> from windows fetched from the API (zoom and
// pan ask the server for a decimated view of the visible window), wakeup arrows on demand, the
// latency histogram as SVG and the sortable task table. No chart library: evaluating Plotly.js
// cost a cold page ~1.6 s of its 2 s budget (issue 13), and a few hundred lines draw this.
// Comm names are user text: they reach the page only through textContent, canvas fillText and
// SVG text nodes, never as markup.
(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";
  var MARGIN = { left: 64, right: 14, top: 6, bottom: 42 };  // CSS px around the plot area
  var SLOP = 3;  // px: a segment this close to the pointer is hit (sub-pixel runs too)
  var MIN_SPAN = 1e-3;  // ms: the server stores nanoseconds; a microsecond is deep enough
  var panels = [];
  var fetchTimer = null;
  var colours = {};
  var dark = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function colour(task) {
    if (task < 0) { return "#9aa0a6"; }
    if (!colours[task]) {
      var hue = (task * 137.508) % 360;  // golden angle: neighbours get distant hues
      colours[task] = "hsl(" + hue.toFixed(1) + ",62%,52%)";
    }
    return colours[task];
  }

  // The site's palette (light or dark scheme) as the element sees it, for the canvas.
  function palette(el) {
    var style = getComputedStyle(el);
    function get(name, fallback) { return style.getPropertyValue(name).trim() || fallback; }
    return { ink: get("--ink", "#1d2330"), muted: get("--muted", "#545d6e"),
             line: get("--line", "#dde1e8"), band: get("--row-hover", "#f7f9fc"),
             accent: get("--accent", "#0b5cd5"), bad: get("--bad", "#b42318"),
             font: "12px " + (style.fontFamily || "sans-serif") };
  }

  // Round tick values across [a, b]: steps of 1, 2 or 5 times a power of ten, about `count`.
  function ticks(a, b, count) {
    var raw = (b - a) / Math.max(1, count);
    if (!(raw > 0)) { return { values: [a], step: 1 }; }
    var power = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = power * (raw <= power ? 1 : raw <= 2 * power ? 2 : raw <= 5 * power ? 5 : 10);
    var values = [];
    for (var i = Math.ceil(a / step - 1e-9); i * step <= b + step * 1e-9; i++) {
      values.push(i * step);  // i * step, not a running sum: no drift in the labels
    }
    if (values.length < 2 && count < 16) { return ticks(a, b, count * 2); }  // a narrow axis
    return { values: values, step: step };
  }

  function tickLabel(value, step) {
    var decimals = Math.max(0, Math.min(9, -Math.floor(Math.log10(step) + 1e-9)));
    return value.toFixed(decimals);
  }

  // Milliseconds for text: to the microsecond, without trailing zeros.
  function ms(value) { return String(Math.round(value * 1000) / 1000); }

  // The largest i with sorted[i] <= value, or -1.
  function lastAtOrBefore(sorted, value) {
    var lo = 0, hi = sorted.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (sorted[mid] <= value) { lo = mid + 1; } else { hi = mid; }
    }
    return lo - 1;
  }

  // The whole trace; on the side-by-side page the longest one, so both share one axis.
  function whole() {
    return [0, Math.max.apply(null, panels.map(function (panel) { return panel.duration; }))];
  }

  // One lane per CPU, segments sorted by start (the hit test bisects on them), and the
  // wakeups sorted by time.
  function indexBody(panel, body) {
    var byCpu = {};
    body.cpus.forEach(function (cpu) { byCpu[cpu] = []; });
    body.segments.forEach(function (s) { (byCpu[s.cpu] = byCpu[s.cpu] || []).push(s); });
    panel.lanes = Object.keys(byCpu).map(Number).sort(function (a, b) { return a - b; })
      .map(function (cpu) {
        var segs = byCpu[cpu].sort(function (a, b) { return a.start_ms - b.start_ms; });
        return { cpu: cpu, segs: segs, starts: segs.map(function (s) { return s.start_ms; }) };
      });
    panel.laneOf = {};
    panel.lanes.forEach(function (lane, i) { panel.laneOf[lane.cpu] = i; });
    panel.arrows = (body.wakeups || []).slice().sort(function (a, b) { return a.at_ms - b.at_ms; });
    panel.arrowTimes = panel.arrows.map(function (w) { return w.at_ms; });
  }

  // Size the canvas to its box at the device's pixel ratio (crisp on HiDPI screens) and
  // work out where the plot area and the lanes are, in CSS px.
  function fit(panel) {
    var canvas = panel.canvas;
    var n = Math.max(1, panel.lanes.length);
    var lane = Math.max(14, Math.min(40, Math.floor(480 / n)));
    var width = Math.max(120, panel.chart.clientWidth);
    var height = MARGIN.top + lane * n + MARGIN.bottom;
    var dpr = window.devicePixelRatio || 1;
    canvas.style.height = height + "px";
    if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(height * dpr);
    }
    var ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    panel.geo = { width: width, height: height, lane: lane, dpr: dpr, left: MARGIN.left,
                  right: width - MARGIN.right, top: MARGIN.top, bottom: MARGIN.top + lane * n };
    // where the lanes are, for tests and scripts that point at a segment
    canvas.dataset.plot = [MARGIN.left, MARGIN.top, panel.geo.right, panel.geo.bottom].join(",");
    return ctx;
  }

  function xOf(panel, t) {
    var g = panel.geo, v = panel.view;
    return g.left + (t - v[0]) / (v[1] - v[0]) * (g.right - g.left);
  }

  function tOf(panel, x) {
    var g = panel.geo, v = panel.view;
    return v[0] + (x - g.left) / (g.right - g.left) * (v[1] - v[0]);
  }

  function laneMiddle(panel, index) {
    return panel.geo.top + (index + 0.5) * panel.geo.lane;
  }

  function draw(panel) {
    if (!panel.lanes) { return; }
    var ctx = fit(panel), g = panel.geo, colours = palette(panel.el);
    ctx.clearRect(0, 0, g.width, g.height);
    ctx.font = colours.font;
    drawLanes(ctx, panel, colours);
    drawAxis(ctx, panel, colours);
    ctx.save();
    ctx.beginPath();
    ctx.rect(g.left, g.top, g.right - g.left, g.bottom - g.top);
    ctx.clip();
    drawSegments(ctx, panel);
    if (panel.arrows.length) { drawArrows(ctx, panel, colours); }
    if (panel.drag) { drawSelection(ctx, panel, colours); }
    ctx.restore();
  }

  function drawLanes(ctx, panel, colours) {
    var g = panel.geo;
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    panel.lanes.forEach(function (lane, i) {
      if (i % 2) {  // alternate bands: which lane a bar is in, at a glance
        ctx.fillStyle = colours.band;
        ctx.fillRect(g.left, g.top + i * g.lane, g.right - g.left, g.lane);
      }
      ctx.fillStyle = colours.ink;
      ctx.fillText("CPU " + lane.cpu, g.left - 8, laneMiddle(panel, i));
    });
  }

  function drawAxis(ctx, panel, colours) {
    var g = panel.geo;
    var count = Math.max(2, Math.floor((g.right - g.left) / 110));  // a label per ~110 px
    var marks = ticks(panel.view[0], panel.view[1], count);
    ctx.strokeStyle = colours.line;
    ctx.lineWidth = 1;
    ctx.beginPath();
    marks.values.forEach(function (t) {
      var x = Math.round(xOf(panel, t)) + 0.5;  // on a pixel's centre: a sharp 1 px line
      ctx.moveTo(x, g.top);
      ctx.lineTo(x, g.bottom + 4);
    });
    ctx.moveTo(g.left, g.bottom + 0.5);
    ctx.lineTo(g.right, g.bottom + 0.5);
    ctx.stroke();
    ctx.fillStyle = colours.muted;
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    marks.values.forEach(function (t) {
      var text = tickLabel(t, marks.step), half = ctx.measureText(text).width / 2;
      var x = Math.min(xOf(panel, t), g.width - half - 1);  // the last label stays whole
      ctx.fillText(text, x, g.bottom + 6);
    });
    ctx.fillStyle = colours.ink;
    ctx.fillText("ms from the trace's start", (g.left + g.right) / 2, g.bottom + 23);
  }

  // Only the segments inside the view; a bar is at least one device pixel wide, so a run
  // shorter than a pixel still shows.
  function drawSegments(ctx, panel) {
    var g = panel.geo, minWidth = 1 / g.dpr;
    var pad = Math.max(1, Math.round(g.lane * 0.12));
    panel.lanes.forEach(function (lane, i) {
      var y = g.top + i * g.lane + pad, h = g.lane - 2 * pad;
      var first = Math.max(0, lastAtOrBefore(lane.starts, panel.view[0]));
      for (var k = first; k < lane.segs.length && lane.starts[k] <= panel.view[1]; k++) {
        var s = lane.segs[k];
        var x0 = xOf(panel, s.start_ms), x1 = xOf(panel, s.end_ms);
        ctx.fillStyle = colour(s.task);
        ctx.fillRect(x0, y, Math.max(x1 - x0, minWidth), h);
      }
    });
  }

  // Where a wakeup's arrow runs: from the waker's lane to the wakee's; on one CPU, a short
  // drop from the top of the lane to its middle.
  function arrowEnds(panel, w) {
    var from = panel.laneOf[w.from_cpu], to = panel.laneOf[w.to_cpu];
    if (from === undefined || to === undefined) { return null; }
    var y1 = laneMiddle(panel, to);
    var y0 = from === to ? panel.geo.top + to * panel.geo.lane + 2 : laneMiddle(panel, from);
    return [y0, y1];
  }

  function drawArrows(ctx, panel, colours) {
    ctx.strokeStyle = ctx.fillStyle = colours.bad;
    ctx.lineWidth = 1.25;
    var first = Math.max(0, lastAtOrBefore(panel.arrowTimes, panel.view[0]));
    for (var k = first; k < panel.arrows.length && panel.arrowTimes[k] <= panel.view[1]; k++) {
      var ends = arrowEnds(panel, panel.arrows[k]);
      if (!ends) { continue; }
      var x = Math.round(xOf(panel, panel.arrows[k].at_ms)) + 0.5;
      var dir = ends[1] >= ends[0] ? 1 : -1;
      ctx.beginPath();
      ctx.moveTo(x, ends[0]);
      ctx.lineTo(x, ends[1]);
      ctx.stroke();
      ctx.beginPath();  // the head, pointing at the wakee's lane
      ctx.moveTo(x, ends[1]);
      ctx.lineTo(x - 3.5, ends[1] - 6 * dir);
      ctx.lineTo(x + 3.5, ends[1] - 6 * dir);
      ctx.closePath();
      ctx.fill();
    }
  }

  function drawSelection(ctx, panel, colours) {
    var g = panel.geo;
    var a = Math.min(panel.drag.from, panel.drag.to), b = Math.max(panel.drag.from, panel.drag.to);
    ctx.globalAlpha = 0.18;
    ctx.fillStyle = colours.accent;
    ctx.fillRect(a, g.top, b - a, g.bottom - g.top);
    ctx.globalAlpha = 1;
    ctx.strokeStyle = colours.accent;
    ctx.lineWidth = 1;
    ctx.strokeRect(Math.round(a) + 0.5, g.top + 0.5, Math.round(b - a), g.bottom - g.top - 1);
  }

  // The segment under (x, y): the lane from y, then a bisection on the lane's start times;
  // the nearest of the neighbours within SLOP px, so a one-pixel run can be pointed at.
  function segmentAt(panel, x, y) {
    var g = panel.geo;
    var i = Math.floor((y - g.top) / g.lane);
    if (i < 0 || i >= panel.lanes.length || x < g.left || x > g.right) { return null; }
    var lane = panel.lanes[i], k = lastAtOrBefore(lane.starts, tOf(panel, x));
    var best = null, bestGap = SLOP;
    for (var j = Math.max(0, k - 1); j <= k + 1 && j < lane.segs.length; j++) {
      var s = lane.segs[j];
      var gap = Math.max(xOf(panel, s.start_ms) - x, x - xOf(panel, s.end_ms), 0);
      if (gap <= bestGap) { best = s; bestGap = gap; }
    }
    return best;
  }

  function wakeupAt(panel, x, y) {
    if (!panel.arrows.length) { return null; }
    var k = lastAtOrBefore(panel.arrowTimes, tOf(panel, x + SLOP));
    for (; k >= 0 && xOf(panel, panel.arrowTimes[k]) >= x - SLOP; k--) {
      var ends = arrowEnds(panel, panel.arrows[k]);
      var near = ends && y >= Math.min(ends[0], ends[1]) - SLOP &&
        y <= Math.max(ends[0], ends[1]) + SLOP;
      if (near) {
        return panel.arrows[k];
      }
    }
    return null;
  }

  function who(comm, pid) { return pid === null ? comm : comm + "-" + pid; }

  function tipText(panel, x, y) {
    var w = wakeupAt(panel, x, y);
    if (w) {
      return "wakes " + who(w.comm, w.pid) + " at " + ms(w.at_ms) + " ms\nCPU " + w.from_cpu +
        " → CPU " + w.to_cpu;
    }
    var s = segmentAt(panel, x, y);
    if (!s) { return ""; }
    return who(s.comm, s.pid) + "\nCPU " + s.cpu + " · " + ms(s.start_ms) + "–" + ms(s.end_ms) +
      " ms\nleft the CPU: " + s.reason;
  }

  // The tooltip beside the pointer, kept inside the chart. textContent only: comm is user text.
  function hover(panel, x, y) {
    var text = panel.geo ? tipText(panel, x, y) : "";
    var tip = panel.tip;
    if (!text) { tip.hidden = true; return; }
    tip.textContent = text;
    tip.hidden = false;
    var left = x + 14;
    if (left + tip.offsetWidth > panel.chart.clientWidth) { left = x - 14 - tip.offsetWidth; }
    tip.style.left = Math.max(0, left) + "px";
    tip.style.top = (y + 14) + "px";
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
        panel.window = panel.view = [body.start_ms, body.end_ms];
        indexBody(panel, body);
        draw(panel);
        describe(panel, body);
      })
      .catch(function (error) {
        panel.status.textContent = "could not load the timeline: " + error.message;
      });
  }

  // What was drawn, for the status line, the canvas's accessible name, and the data-*
  // attributes tests and bench/trace_render.py read.
  function describe(panel, body) {
    var el = panel.el;
    el.dataset.fetches = String(Number(el.dataset.fetches || 0) + 1);
    el.dataset.window = body.start_ms + "," + body.end_ms;
    el.dataset.segments = String(body.segments.length);
    el.dataset.decimated = body.decimated ? "1" : "0";
    el.dataset.wakeups = body.wakeups ? String(body.wakeups.length) : "";
    panel.status.textContent = body.segments.length + " segments" +
      (body.decimated ? " (grey: short runs merged at this zoom, zoom in for every switch; " +
        "blank: idle)" : " (blank: idle)") +
      (body.wakeups ? " · " + body.wakeups.length + " wakeups" +
        (body.wakeups_thinned ? " (thinned)" : "") : "");
    panel.canvas.setAttribute("aria-label", "Timeline of " + body.cpus.length + " CPU" +
      (body.cpus.length === 1 ? "" : "s") + ", " + ms(body.start_ms) + "–" + ms(body.end_ms) +
      " ms, " + body.segments.length + " segments" +
      (body.wakeups ? ", " + body.wakeups.length + " wakeup arrows" : ""));
    el.dataset.ready = "1";
  }

  // Show one window in every panel (the side-by-side page shares one axis): at once from the
  // data at hand, then, debounced, from the server. null: the whole trace, fetched at once.
  function show(range) {
    var r = range || whole();
    clearTimeout(fetchTimer);
    panels.forEach(function (panel) {
      panel.ticket++;  // a window still on its way is stale now
      if (panel.lanes) { panel.view = r.slice(); draw(panel); }
    });
    function go() { panels.forEach(function (panel) { fetchWindow(panel, r[0], r[1]); }); }
    if (range) { fetchTimer = setTimeout(go, 120); } else { go(); }
  }

  // A window inside the whole trace, at least MIN_SPAN wide.
  function clamp(a, b) {
    var all = whole(), span = Math.min(Math.max(b - a, MIN_SPAN), all[1] - all[0]);
    a = Math.max(all[0], Math.min(a, all[1] - span));
    return [a, a + span];
  }

  function zoomBy(panel, factor) {
    var v = panel.view, middle = (v[0] + v[1]) / 2, half = (v[1] - v[0]) * factor / 2;
    show(clamp(middle - half, middle + half));
  }

  // Zoom by `factor` keeping time `t` where it is on screen (under the pointer or the fingers).
  function zoomAt(panel, t, factor) {
    var v = panel.view;
    show(clamp(t - (t - v[0]) * factor, t + (v[1] - t) * factor));
  }

  function panBy(panel, fraction) {
    var v = panel.view, shift = (v[1] - v[0]) * fraction;
    show(clamp(v[0] + shift, v[1] + shift));
  }

  function localPoint(panel, event) {
    var box = panel.canvas.getBoundingClientRect();
    return [event.clientX - box.left, event.clientY - box.top];
  }

  // The wheel over the plot zooms around the pointer, plain or with Ctrl (a trackpad's pinch
  // arrives as Ctrl+wheel), as map viewers do; over the lane names it scrolls the page.
  function bindWheel(panel) {
    panel.canvas.addEventListener("wheel", function (event) {
      var p = localPoint(panel, event);
      if (!panel.view || !panel.geo || p[0] < panel.geo.left || p[0] > panel.geo.right) { return; }
      event.preventDefault();
      var steps = event.deltaMode === 1 ? event.deltaY / 3 : event.deltaY / 100;
      zoomAt(panel, tOf(panel, p[0]), Math.pow(1.25, Math.max(-4, Math.min(4, steps))));
    }, { passive: false });
  }

  // Two fingers on a touch screen: the distance between them zooms around their middle (the
  // canvas lets the browser pan the page vertically only: traces.css, touch-action).
  function bindPinch(panel) {
    var touches = {}, pinch = null;
    function spread() {
      var ids = Object.keys(touches);
      if (ids.length !== 2) { return null; }
      var a = touches[ids[0]], b = touches[ids[1]];
      return { width: Math.max(Math.abs(a[0] - b[0]), 10), middle: (a[0] + b[0]) / 2 };
    }
    panel.canvas.addEventListener("pointerdown", function (event) {
      if (event.pointerType !== "touch") { return; }
      touches[event.pointerId] = localPoint(panel, event);
      pinch = spread();
      if (pinch) { panel.drag = null; }
    });
    panel.canvas.addEventListener("pointermove", function (event) {
      if (!(event.pointerId in touches)) { return; }
      touches[event.pointerId] = localPoint(panel, event);
      var now = spread();
      if (!pinch || !now || !panel.view) { return; }
      zoomAt(panel, tOf(panel, pinch.middle), pinch.width / now.width);
      pinch = now;
    });
    ["pointerup", "pointercancel"].forEach(function (name) {
      panel.canvas.addEventListener(name, function (event) {
        delete touches[event.pointerId];
        pinch = spread();
      });
    });
  }

  // Drag across the plot to zoom into that window (the selection is drawn while dragging);
  // a plain click does nothing.
  function bindPointer(panel) {
    var canvas = panel.canvas;
    canvas.addEventListener("pointerdown", function (event) {
      if (event.pointerType === "touch" && !event.isPrimary) { return; }  // a pinch's 2nd finger
      var p = localPoint(panel, event);
      if (event.button !== 0 || !panel.geo || p[0] < panel.geo.left || p[0] > panel.geo.right) {
        return;
      }
      panel.drag = { from: p[0], to: p[0] };
      panel.tip.hidden = true;
      canvas.setPointerCapture(event.pointerId);
    });
    canvas.addEventListener("pointermove", function (event) {
      var p = localPoint(panel, event);
      if (!panel.drag) { hover(panel, p[0], p[1]); return; }
      panel.drag.to = Math.max(panel.geo.left, Math.min(panel.geo.right, p[0]));
      draw(panel);
    });
    canvas.addEventListener("pointerup", function () {
      var drag = panel.drag;
      if (!drag) { return; }
      panel.drag = null;
      if (Math.abs(drag.to - drag.from) < 3) { draw(panel); return; }  // a click, not a drag
      var a = Math.min(drag.from, drag.to), b = Math.max(drag.from, drag.to);
      show(clamp(tOf(panel, a), tOf(panel, b)));
    });
    canvas.addEventListener("pointercancel", function () { panel.drag = null; draw(panel); });
    canvas.addEventListener("pointerleave", function () { panel.tip.hidden = true; });
    canvas.addEventListener("dblclick", function () { show(null); });
  }

  // With the timeline focused: + and - zoom around the middle, the arrows pan by a fifth.
  function bindKeys(panel) {
    var keys = { "+": function () { zoomBy(panel, 0.5); }, "=": function () { zoomBy(panel, 0.5); },
                 "-": function () { zoomBy(panel, 2); }, "_": function () { zoomBy(panel, 2); },
                 ArrowLeft: function () { panBy(panel, -0.2); },
                 ArrowRight: function () { panBy(panel, 0.2); } };
    panel.canvas.addEventListener("keydown", function (event) {
      var action = keys[event.key];
      if (!action || !panel.view || event.altKey || event.ctrlKey || event.metaKey) { return; }
      event.preventDefault();
      action();
    });
  }

  function makePanel(el) {
    var chart = el.querySelector(".timeline-chart");
    var panel = { el: el, chart: chart, status: el.querySelector(".timeline-status"),
                  canvas: chart.querySelector("canvas"), tip: chart.querySelector(".timeline-tip"),
                  ticket: 0, wakeups: false, duration: Number(el.dataset.duration) || 1,
                  window: null, view: null, lanes: null, arrows: [], drag: null };
    bindPointer(panel);
    bindWheel(panel);
    bindPinch(panel);
    bindKeys(panel);
    return panel;
  }

  function svg(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    if (parent) { parent.appendChild(node); }
    return node;
  }

  function svgText(parent, x, y, text, attrs) {
    var node = svg("text", Object.assign({ x: x, y: y }, attrs || {}), parent);
    node.textContent = text;
    return node;
  }

  // Microseconds for axis labels and hover text: a few significant figures, no exponent
  // below a second.
  function us(value) {
    if (value === 0) { return "0"; }
    if (value >= 1e6) { return value.toExponential(0).replace("+", ""); }
    return Number(value.toPrecision(4)).toLocaleString("en-US", { maximumFractionDigits: 3 });
  }

  // Decades on a log axis across [lo, hi]; with fewer than two, the 2s and 5s between too.
  function logTicks(lo, hi) {
    var decades = [], all = [];
    for (var e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      [1, 2, 5].forEach(function (m) {
        var v = Number((m * Math.pow(10, e)).toPrecision(1));
        if (v < lo * 0.999 || v > hi * 1.001) { return; }
        all.push(v);
        if (m === 1) { decades.push(v); }
      });
    }
    return decades.length >= 2 ? decades : all;
  }

  // The latency histogram as SVG: log x axis (a log axis has no 0, so the [0, 1 µs) bin is
  // drawn from 0.5 µs), one bar per bin with its numbers as hover text. Colours come from
  // traces.css, so the dark scheme needs no redraw.
  function drawHistogram(el, hist) {
    var width = Math.max(240, el.clientWidth), height = 260;
    var g = { left: 64, right: width - 14, top: 10, bottom: height - 50 };
    var bins = hist.bounds_us.map(function (b, i) {
      return { from: b[0], lo: b[0] > 0 ? b[0] : b[1] / 2, hi: b[1], count: hist.counts[i] };
    });
    var l0 = Math.log10(bins[0].lo), l1 = Math.log10(bins[bins.length - 1].hi);
    var peak = Math.max.apply(null, hist.counts);
    var step = ticks(0, peak, Math.min(4, peak)).step;  // whole counts: at most `peak` ticks
    var yMax = Math.ceil(peak / step) * step;  // headroom up to a round count
    var scale = {
      x: function (v) { return g.left + (Math.log10(v) - l0) / (l1 - l0) * (g.right - g.left); },
      y: function (c) { return g.bottom - c / yMax * (g.bottom - g.top); }
    };
    var total = hist.counts.reduce(function (a, b) { return a + b; }, 0);
    var root = svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height,
                            class: "latency-svg", role: "img",
                            "aria-label": "Histogram of wakeup-to-run latency: " + total +
                              " wakeups, " + us(bins[0].from) + " to " +
                              us(bins[bins.length - 1].hi) + " µs" });
    var xValues = logTicks(bins[0].lo, bins[bins.length - 1].hi);
    histAxes(root, g, scale, ticks(0, yMax, yMax / step).values, xValues);
    histBars(root, g, scale, bins);
    el.replaceChildren(root);
    el.dataset.rendered = "1";
  }

  function histAxes(root, g, scale, yValues, xValues) {
    var axes = svg("g", {}, root);
    yValues.forEach(function (c) {
      var y = scale.y(c);
      svg("line", { x1: g.left, x2: g.right, y1: y, y2: y, class: "hist-grid" }, axes);
      svgText(axes, g.left - 6, y + 4, count(c), { "text-anchor": "end" });
    });
    xValues.forEach(function (v) {
      var x = scale.x(v);
      svg("line", { x1: x, x2: x, y1: g.bottom, y2: g.bottom + 5, class: "hist-axis" }, axes);
      svgText(axes, x, g.bottom + 18, us(v), { "text-anchor": "middle" });
    });
    svg("line", { x1: g.left, x2: g.right, y1: g.bottom, y2: g.bottom, class: "hist-axis" }, axes);
    svgText(axes, (g.left + g.right) / 2, g.bottom + 40, "wakeup-to-run latency (µs, log scale)",
            { "text-anchor": "middle", class: "hist-title" });
    var middle = (g.top + g.bottom) / 2;
    svgText(axes, 14, middle, "wakeups", { "text-anchor": "middle", class: "hist-title",
                                           transform: "rotate(-90 14 " + middle + ")" });
  }

  function histBars(root, g, scale, bins) {
    var bars = svg("g", {}, root);
    bins.forEach(function (bin) {
      if (!bin.count) { return; }
      var x0 = scale.x(bin.lo), y = scale.y(bin.count);
      var bar = svg("rect", { x: x0, y: y, width: Math.max(1, scale.x(bin.hi) - x0),
                              height: g.bottom - y, class: "hist-bar" }, bars);
      svg("title", {}, bar).textContent = us(bin.from) + "–" + us(bin.hi) + " µs: " +
        bin.count + (bin.count === 1 ? " wakeup" : " wakeups");
    });
  }

  function count(value) {
    if (value >= 1e6) { return Number((value / 1e6).toPrecision(3)) + "M"; }
    if (value >= 1e4) { return Number((value / 1e3).toPrecision(3)) + "k"; }
    return String(value);
  }

  var histogram = null;  // [element, data] once drawn: redrawn at a new width

  function latencyChart() {
    var el = document.getElementById("latency-chart");
    var source = document.getElementById("latency-data");
    if (!el || !source) { return; }
    var hist = JSON.parse(source.textContent);
    if (!hist.counts.length) {
      el.textContent = "No wakeups were followed by a run.";
      el.dataset.rendered = "1";
      return;
    }
    histogram = [el, hist];
    drawHistogram(el, hist);
  }

  // Order the rows by the column marked data-sorted (again after rows were added).
  function sortRows(table) {
    var th = table.querySelector("th[data-sorted]");
    if (!th) { return; }
    var column = th.cellIndex, descending = th.dataset.sorted === "desc";
    var numeric = th.dataset.type === "num", body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      var a = r1.cells[column].dataset.value, b = r2.cells[column].dataset.value;
      var order = numeric ? Number(a) - Number(b) : a.localeCompare(b);
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function sortable(table) {
    table.querySelectorAll("th").forEach(function (th) {
      th.tabIndex = 0;
      th.addEventListener("click", function () {
        var descending = th.dataset.sorted !== "desc";
        table.querySelectorAll("th").forEach(function (other) {
          delete other.dataset.sorted;
          other.removeAttribute("aria-sort");
        });
        th.dataset.sorted = descending ? "desc" : "asc";
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        sortRows(table);
      });
      th.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); th.click(); }
      });
    });
  }

  // A task as a table row like the server's (same columns, data-value to sort on).
  function taskRow(t) {
    var row = document.createElement("tr");
    [[t.pid, String(t.pid)], [t.comm, t.comm, "mono"],
     [t.runtime_ms, t.runtime_ms.toFixed(3), "num"], [t.switches, String(t.switches), "num"],
     [t.wakeups, String(t.wakeups), "num"], [t.migrations, String(t.migrations), "num"],
     [t.wait_sum_ms, t.wait_sum_ms.toFixed(3), "num"],
     [t.wait_max_ms, t.wait_max_ms.toFixed(3), "num"],
     [t.wait_avg_ms, t.wait_avg_ms.toFixed(3), "num"]].forEach(function (cell) {
      var td = row.insertCell();
      td.dataset.value = String(cell[0]);
      td.textContent = cell[1];
      if (cell[2]) { td.className = cell[2]; }
    });
    return row;
  }

  // The page holds the busiest tasks only (parsing every row delayed the first render of a
  // big trace); this button swaps in every task from the API, keeping the chosen order.
  function allTasks() {
    var button = document.getElementById("all-tasks");
    var table = document.getElementById("task-table");
    var note = document.getElementById("tasks-note");
    if (!button || !table || !note) { return; }
    button.addEventListener("click", function () {
      button.disabled = true;
      note.textContent = "Loading every task…";
      fetch(button.dataset.api, { credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) { throw new Error("HTTP " + response.status); }
          return response.json();
        })
        .then(function (body) {
          var rows = document.createDocumentFragment();
          body.tasks.forEach(function (t) { rows.appendChild(taskRow(t)); });
          table.tBodies[0].replaceChildren(rows);
          sortRows(table);
          note.textContent = "All " + body.tasks.length + " tasks are shown.";
          button.hidden = true;
          table.dataset.rows = "all";
        })
        .catch(function (error) {
          note.textContent = "Could not load every task (" + error.message + "); the busiest " +
            table.tBodies[0].rows.length + " are shown.";
          button.disabled = false;
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

  // Canvas pixels follow the box's width and the scheme's colours: redraw on either change
  // (once per frame however many resize events arrive).
  var redrawing = false;
  function redrawSoon() {
    if (redrawing) { return; }
    redrawing = true;
    requestAnimationFrame(function () {
      redrawing = false;
      panels.forEach(function (panel) { panel.tip.hidden = true; draw(panel); });
      if (histogram) { drawHistogram(histogram[0], histogram[1]); }
    });
  }

  function bindTools() {
    var toggle = document.getElementById("wakeups-toggle");
    if (toggle) {
      toggle.addEventListener("change", function () {
        panels.forEach(function (panel) {
          panel.wakeups = toggle.checked;
          var r = panel.view || whole();
          fetchWindow(panel, r[0], r[1]);
        });
      });
    }
    document.querySelectorAll(".reset-zoom").forEach(function (button) {
      button.addEventListener("click", function () { show(null); });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".trace-timeline").forEach(function (el) {
      panels.push(makePanel(el));
    });
    if (panels.length) {
      show(null);
      bindTools();
    }
    latencyChart();
    document.querySelectorAll("table.sortable").forEach(sortable);
    allTasks();
    compareLink();
    window.addEventListener("resize", redrawSoon);
    if (dark) { dark.addEventListener("change", redrawSoon); }
  });
})();

// Comparison builder: choose runs, ask the API what can be compared, preview, save.
(function () {
  "use strict";
  var form = document.getElementById("builder");
  var empty = document.getElementById("builder-empty");
  var previewBox = document.getElementById("builder-preview");
  var saveButton = document.getElementById("save-button");
  var signedIn = !!document.querySelector("header .account form");
  var options = null, pending = null;
  var initial = JSON.parse(document.getElementById("initial-spec").textContent || "null");

  function csrf() { return form.elements.csrfmiddlewaretoken.value; }

  function post(path, body) {
    return fetch(path, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf(), "Accept": "application/json" },
      body: JSON.stringify(body),
    }).then(function (response) {
      return response.json().then(function (data) { return { ok: response.ok, data: data }; });
    });
  }

  function selection() {
    var runs = form.elements.runs.value.trim();
    if (runs) { return { runs: runs.split(/[\s,]+/).filter(Boolean) }; }
    var filters = {};
    ["benchmark", "machine", "policy", "kernel", "tag"].forEach(function (name) {
      var value = form.elements[name].value.trim();
      if (value) { filters[name] = value; }
    });
    form.elements.param_filters.value.split("\n").forEach(function (line) {
      var eq = line.indexOf("=");
      if (eq > 0) { filters["param." + line.slice(0, eq).trim()] = line.slice(eq + 1).trim(); }
    });
    return { filters: filters };
  }

  function fill(select, values, selected, blank) {
    select.textContent = "";
    if (blank) { select.appendChild(new Option(blank, "")); }
    values.forEach(function (value) { select.appendChild(new Option(value, value)); });
    if (selected !== undefined && selected !== null && values.indexOf(selected) >= 0) { select.value = selected; }
  }

  function showEmpty(message) {
    empty.hidden = false; empty.textContent = message;
    previewBox.hidden = true; saveButton.disabled = true;
  }

  function fillBaselineValues() {
    var dim = form.elements.baseline_dim.value;
    fill(form.elements.baseline_value, dim && options ? options.values[dim] || [] : [],
         initial && initial.baseline ? initial.baseline.value : undefined);
  }

  function fillBaselineDims() {
    var current = form.elements.baseline_dim.value || (initial && initial.baseline ? initial.baseline.dim : "");
    var dims = ["x", "series", "facet"].map(function (role) { return form.elements[role].value; }).filter(Boolean);
    fill(form.elements.baseline_dim, dims, current, "none");
    fillBaselineValues();
  }

  function loadOptions() {
    var body = selection();
    document.getElementById("selection-status").textContent = "…";
    return post("/api/v1/comparisons/options/", body).then(function (result) {
      if (!result.ok) { options = null; busy(false); showEmpty(result.data.error); document.getElementById("selection-status").textContent = ""; return; }
      options = result.data;
      document.getElementById("selection-status").textContent =
        options.runs + (options.runs === 1 ? " run" : " runs");
      var spec = initial || {};
      fill(form.elements.metric, options.metrics, spec.metric);
      var varying = options.varying;
      // Default layout: what these runs vary in (the server's suggestion: a numeric param
      // with several values on x, kernels as series), unless a saved spec says otherwise.
      var suggested = options.suggested || { x: varying[0], series: varying[1] || null };
      fill(form.elements.x, options.dimensions, spec.x || suggested.x);
      fill(form.elements.series, options.dimensions, spec.x ? spec.series : suggested.series, "none");
      if (!(spec.x ? spec.series : suggested.series)) { form.elements.series.value = ""; }
      fill(form.elements.facet, options.dimensions, spec.facet, "none");
      if (!spec.facet) { form.elements.facet.value = ""; }
      ["statistic", "error", "x_scale", "chart", "title"].forEach(function (name) {
        if (spec[name]) { form.elements[name].value = spec[name]; }
      });
      fillBaselineDims();
      preview();
    });
  }

  function spec() {
    var result = selection();
    ["metric", "x", "series", "facet", "statistic", "error", "x_scale", "chart", "title"].forEach(function (name) {
      var value = form.elements[name].value;
      result[name] = value === "" ? null : value;
    });
    var dim = form.elements.baseline_dim.value;
    result.baseline = dim ? { dim: dim, value: form.elements.baseline_value.value } : null;
    return result;
  }

  // The numbers exactly as the saved page prints them (the `num`, `percent` template filters
  // in benchmarks/templatetags/schedbench.py): Python rounds a tie to even, so we do too.
  function addOne(digits) {
    var out = digits.split(""), i = out.length - 1;
    while (i >= 0 && out[i] === "9") { out[i] = "0"; i -= 1; }
    if (i < 0) { out.unshift("1"); } else { out[i] = String(Number(out[i]) + 1); }
    return out.join("");
  }

  function fixed(x, decimals) {
    var negative = x < 0 || Object.is(x, -0), abs = Math.abs(x);
    if (abs >= 1e21) { return String(x); }
    var full = abs.toFixed(100); // the double's exact decimal value
    var point = full.indexOf(".");
    var digits = full.slice(0, point) + full.slice(point + 1, point + 1 + decimals);
    var rest = full.slice(point + 1 + decimals);
    var last = Number(digits[digits.length - 1]);
    if (rest[0] > "5" || (rest[0] === "5" && (/[1-9]/.test(rest.slice(1)) || last % 2 === 1))) {
      digits = addOne(digits);
    }
    var whole = digits.slice(0, digits.length - decimals) || "0";
    var fraction = decimals ? digits.slice(digits.length - decimals) : "";
    var text = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (decimals ? "." + fraction : "");
    return (negative ? "-" : "") + text;
  }

  function general(x) { // Python's format(x, "g") for 1e-4 <= |x| < 1e6
    var exponent = Math.floor(Math.log10(Math.abs(x)));
    var text = fixed(x, Math.max(0, 5 - exponent)).replace(/,/g, "");
    return text.indexOf(".") >= 0 ? text.replace(/\.?0+$/, "") : text;
  }

  function num(value, digits) {
    digits = digits || 4;
    if (value === null || value === undefined || value === "") { return "–"; }
    var number = Number(value);
    if (!isFinite(number)) { return String(number); }
    if (number === 0 || Math.abs(number) >= Math.pow(10, digits - 1)) {
      return Number.isInteger(number) || Math.abs(number) >= 1e3 ? fixed(number, 0) : general(number);
    }
    return fixed(number, Math.max(0, digits - 1 - Math.floor(Math.log10(Math.abs(number)))));
  }

  function percent(value) { return value === null || value === undefined ? "–" : fixed(100 * value, 1) + "%"; }

  function renderCells(data) {
    // The same columns, in the same order and format, as the saved page's cell table.
    var table = document.getElementById("builder-cells");
    var spec = data.spec, baseline = !!spec.baseline;
    var columns = [[spec.x, function (c) { return c.x; }]];
    if (spec.series) { columns.push([spec.series, function (c) { return c.series; }]); }
    if (spec.facet) { columns.push([spec.facet, function (c) { return c.facet; }]); }
    columns.push(
      ["n", function (c) { return String(c.n); }],
      ["median", function (c) { return num(c.median); }],
      ["mean", function (c) { return num(c.mean); }],
      ["stdev", function (c) { return num(c.stdev, 3); }],
      ["CV", function (c) { return percent(c.cv); }],
      ["95% CI", function (c) { return c.ci95 ? num(c.ci95[0]) + " – " + num(c.ci95[1]) : "–"; }],
      ["min", function (c) { return num(c.min); }],
      ["max", function (c) { return num(c.max); }]);
    if (baseline) {
      columns.push(
        ["ratio", function (c) { return num(c.normalized); }],
        ["p", function (c) { return c.p_value === null ? "–" : num(c.p_value, 2); }],
        ["effect", function (c) { return c.effect ? c.effect.name + " " + num(c.effect.value, 2) : ""; }]);
    }
    table.tHead.textContent = ""; table.tBodies[0].textContent = "";
    var head = table.tHead.insertRow();
    columns.concat([["flags"]]).forEach(function (column) {
      var th = document.createElement("th"); th.textContent = column[0]; head.appendChild(th);
    });
    data.cells.forEach(function (cell) {
      var row = table.tBodies[0].insertRow();
      columns.forEach(function (column) { row.insertCell().textContent = column[1](cell); });
      var flags = row.insertCell();
      cell.flags.forEach(function (flag, index) {
        if (index) { flags.appendChild(document.createElement("br")); }
        var span = document.createElement("span"); span.className = "stat-flag"; span.textContent = flag;
        flags.appendChild(span);
      });
    });
  }

  // The preview follows the controls a moment after the last change (several quick changes
  // make one request), and says it is updating until the newest answer is drawn.
  var updating = document.getElementById("builder-updating"), timer = null;

  function busy(on) {
    updating.classList.toggle("active", on);
    updating.textContent = on ? "updating the preview…" : "";
    document.getElementById("builder-preview").setAttribute("aria-busy", on ? "true" : "false");
  }

  function preview() {
    if (!options) { return; }
    busy(true);
    clearTimeout(timer);
    timer = setTimeout(previewNow, 250);
  }

  function previewNow() {
    var body = spec();
    pending = body;
    post("/api/v1/comparisons/preview/", body).then(function (result) {
      if (pending !== body) { return; }
      busy(false);
      if (!result.ok) { showEmpty(result.data.error); return; }
      empty.hidden = true; previewBox.hidden = false;
      saveButton.disabled = !signedIn;
      var chart = document.getElementById("builder-chart");
      window.SchedbenchCharts.draw(chart, result.data.figure)
        .then(function () { chart.dataset.rendered = "1"; });
      renderCells(result.data);
    });
  }

  document.getElementById("load-options").addEventListener("click", function () { initial = null; loadOptions(); });
  ["x", "series", "facet"].forEach(function (name) {
    form.elements[name].addEventListener("change", function () { fillBaselineDims(); preview(); });
  });
  form.elements.baseline_dim.addEventListener("change", function () { fillBaselineValues(); preview(); });
  ["metric", "statistic", "error", "x_scale", "chart", "baseline_value"].forEach(function (name) {
    form.elements[name].addEventListener("change", preview);
  });
  form.elements.title.addEventListener("change", preview);
  saveButton.addEventListener("click", function () {
    saveButton.disabled = true;
    post("/api/v1/comparisons/", spec()).then(function (result) {
      if (result.ok) { window.location = result.data.url; }
      else { showEmpty(result.data.error); }
    });
  });

  function setControl(control, value) {
    // A saved filter holds what the API took (a machine's name, say) where the control may
    // list ids: add the saved value as an option rather than silently dropping the filter.
    if (control.tagName === "SELECT" && !Array.prototype.some.call(control.options, function (o) { return o.value === value; })) {
      control.appendChild(new Option(value, value));
    }
    control.value = value;
  }

  if (initial) {
    // A fork starts from the original's own runs (the view puts them in the spec), so it
    // shows the same run set and the same numbers even after more runs were uploaded.
    if (initial.runs) { form.elements.runs.value = initial.runs.join(", "); }
    Object.keys(initial.filters || {}).forEach(function (key) {
      if (form.elements[key]) { setControl(form.elements[key], initial.filters[key]); }
    });
    loadOptions();
  } else if (["runs", "benchmark", "machine", "policy", "kernel", "param_filters"].some(function (name) {
    return form.elements[name].value.trim();
  })) {
    loadOptions();  // a run list's "Compare all these runs", whatever it was filtered by
  }
})();

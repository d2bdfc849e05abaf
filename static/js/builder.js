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
    ["benchmark", "machine", "policy", "kernel"].forEach(function (name) {
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
      if (!result.ok) { options = null; showEmpty(result.data.error); document.getElementById("selection-status").textContent = ""; return; }
      options = result.data;
      document.getElementById("selection-status").textContent = options.runs + " runs";
      var spec = initial || {};
      fill(form.elements.metric, options.metrics, spec.metric);
      var varying = options.varying;
      fill(form.elements.x, options.dimensions, spec.x || varying[0]);
      fill(form.elements.series, options.dimensions, spec.series || (varying.length > 1 ? varying[1] : null), "none");
      if (!spec.series && varying.length < 2) { form.elements.series.value = ""; }
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

  function renderCells(data) {
    var table = document.getElementById("builder-cells");
    var columns = ["x", "series", "n", "median", "mean", "stdev", "normalized", "p_value"];
    table.tHead.textContent = ""; table.tBodies[0].textContent = "";
    var head = table.tHead.insertRow();
    columns.forEach(function (c) { var th = document.createElement("th"); th.textContent = c; head.appendChild(th); });
    data.cells.forEach(function (cell) {
      var row = table.tBodies[0].insertRow();
      columns.forEach(function (c) {
        var value = cell[c];
        row.insertCell().textContent = typeof value === "number" ? Number(value.toPrecision(4)) : (value === null ? "–" : value);
      });
    });
  }

  function preview() {
    if (!options) { return; }
    var body = spec();
    pending = body;
    post("/api/v1/comparisons/preview/", body).then(function (result) {
      if (pending !== body) { return; }
      if (!result.ok) { showEmpty(result.data.error); return; }
      empty.hidden = true; previewBox.hidden = false;
      saveButton.disabled = !signedIn;
      var chart = document.getElementById("builder-chart");
      window.Plotly.react(chart, result.data.figure.data, result.data.figure.layout, { responsive: true, displaylogo: false })
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

  if (initial) {
    if (initial.runs) { form.elements.runs.value = initial.runs.join(", "); }
    Object.keys(initial.filters || {}).forEach(function (key) {
      if (form.elements[key]) { form.elements[key].value = initial.filters[key]; }
    });
    loadOptions();
  } else if (form.elements.runs.value || form.elements.benchmark.value || form.elements.machine.value) {
    loadOptions();
  }
})();

// Draw every server-built Plotly figure on the page. A figure lives in a <script
// type="application/json"> produced by Django's json_script, so no user text is ever evaluated.
(function () {
  "use strict";
  function draw(el) {
    var source = document.getElementById(el.dataset.figure);
    if (!source || !window.Plotly) { return; }
    var figure = JSON.parse(source.textContent);
    var config = { responsive: true, displaylogo: false,
                   toImageButtonOptions: { filename: el.dataset.filename || "schedbench" } };
    window.Plotly.newPlot(el, figure.data, figure.layout, config).then(function () {
      el.dataset.rendered = "1";
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-figure]").forEach(draw);
  });
})();

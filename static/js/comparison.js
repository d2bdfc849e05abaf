// Permalink page: switch the x axis between linear and log, download the chart as PNG or SVG.
(function () {
  "use strict";
  function chart() { return document.getElementById("comparison-chart"); }
  document.addEventListener("click", function (event) {
    var toggle = event.target.closest("#toggle-x-scale");
    if (toggle) {
      var next = toggle.dataset.scale === "log" ? "linear" : "log";
      var update = {};
      Object.keys(chart().layout).forEach(function (key) {
        if (/^xaxis\d*$/.test(key)) { update[key + ".type"] = next; }
      });
      window.Plotly.relayout(chart(), update).then(function () {
        toggle.dataset.scale = next;
        toggle.textContent = "x axis: " + next;
      });
    }
    var download = event.target.closest("[data-download]");
    if (download) {
      window.Plotly.downloadImage(chart(), {
        format: download.dataset.download, filename: chart().dataset.filename || "comparison",
        width: 1200, height: 700,
      });
    }
  });
})();

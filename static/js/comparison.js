// Permalink page: switch the x axis between linear and log, download the chart as PNG or SVG,
// and fetch the live "threads about this comparison" panel (the page itself is cached whole).
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var holder = document.getElementById("comparison-threads");
    if (!holder) { return; }
    fetch(holder.dataset.fragment, { credentials: "same-origin" }).then(function (response) {
      return response.ok ? response.text() : "";
    }).then(function (html) {
      holder.innerHTML = html;  // our own server-rendered, escaped fragment
      holder.dataset.loaded = "1";
    });
  });
  // A large comparison's statistics table comes when its folded panel is first opened.
  document.addEventListener("toggle", function (event) {
    var panel = event.target;
    if (!panel.matches || !panel.matches("details.cells-panel[data-fragment]") || !panel.open) {
      return;
    }
    var url = panel.dataset.fragment;
    panel.removeAttribute("data-fragment");
    fetch(url, { credentials: "same-origin" }).then(function (response) {
      return response.ok ? response.text() : Promise.reject(response.status);
    }).then(function (html) {
      panel.querySelector(".cells-holder").innerHTML = html;  // our own escaped fragment
      panel.dataset.loaded = "1";
    }).catch(function () { panel.dataset.fragment = url; });
  }, true);
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

// The launch form: show the params of the chosen workload only, and offer its params as sweep
// axes. Fields of other workloads are disabled so they are not submitted.
(function () {
  "use strict";
  function sync() {
    var workload = document.getElementById("workload-select").value;
    document.querySelectorAll(".workload-params").forEach(function (set) {
      var mine = set.dataset.workload === workload;
      set.hidden = !mine;
      set.disabled = !mine;
    });
    document.querySelectorAll(".sweep-axis option[data-workload]").forEach(function (opt) {
      var mine = opt.dataset.workload === workload;
      opt.hidden = !mine;
      opt.disabled = !mine;
      if (!mine && opt.selected) { opt.parentNode.value = ""; }
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    var select = document.getElementById("workload-select");
    if (!select) { return; }
    select.addEventListener("change", sync);
    sync();
  });
})();

// An import's page while a worker runs it: poll the job's JSON, move the bar, and reload the
// page (which then shows the report) once the job has finished.
(function () {
  "use strict";
  var panel = document.getElementById("import-progress");
  if (!panel) { return; }
  var ACTIVE = { queued: true, running: true };

  function show(job) {
    var bar = document.getElementById("import-bar");
    document.getElementById("import-status").textContent = job.status;
    document.getElementById("import-stage").textContent =
      job.progress.stage || "waiting for a worker";
    document.getElementById("import-count").textContent =
      job.progress.total ? job.progress.done + " / " + job.progress.total : "";
    bar.max = job.progress.total || 1;
    bar.value = job.progress.done;
  }

  function poll() {
    fetch(panel.dataset.api, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (job) {
        if (job && !ACTIVE[job.status]) { window.location.reload(); return; }
        if (job) { show(job); }
        window.setTimeout(poll, 1000);
      })
      .catch(function () { window.setTimeout(poll, 3000); });
  }
  window.setTimeout(poll, 500);
})();

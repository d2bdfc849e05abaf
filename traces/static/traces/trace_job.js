// A trace upload's page while a worker ingests it: poll the job's JSON, move the bar, and
// reload the page (which then links the trace or says why it was refused) once it is done.
(function () {
  "use strict";
  var panel = document.getElementById("trace-job-progress");
  if (!panel) { return; }
  var ACTIVE = { queued: true, running: true };

  function megabytes(bytes) { return (bytes / 1048576).toFixed(1) + " MB"; }

  function show(job) {
    var bar = document.getElementById("trace-job-bar");
    document.getElementById("trace-job-status").textContent = job.status;
    document.getElementById("trace-job-stage").textContent =
      job.progress.stage || "waiting for a worker";
    document.getElementById("trace-job-count").textContent =
      megabytes(job.progress.done) + " / " + megabytes(job.progress.total);
    bar.max = job.progress.total || 1;
    bar.value = Math.min(job.progress.done, bar.max);
  }

  function poll() {
    fetch(panel.dataset.api, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (job) {
        if (job && !ACTIVE[job.status]) {
          if (job.result) { window.location.assign(job.result.url); } else { window.location.reload(); }
          return;
        }
        if (job) { show(job); }
        window.setTimeout(poll, 1000);
      })
      .catch(function () { window.setTimeout(poll, 3000); });
  }
  window.setTimeout(poll, 500);
})();

// A job page: poll the job's JSON, move the progress bar, update each point's row, and redraw
// the chart (Plotly.react) whenever more points are done. Stops once the job is finished.
(function () {
  "use strict";
  var ACTIVE = { queued: true, running: true };
  var seen = -1;

  function setText(id, text) {
    var el = document.getElementById(id);
    if (el) { el.textContent = text; }
  }

  function updatePoints(points) {
    (points || []).forEach(function (p) {
      var row = document.querySelector("#points tr[data-index='" + p.index + "']");
      if (!row) { return; }
      var status = row.querySelector(".point-status");
      status.textContent = p.status + (p.reused ? " (re-used)" : "");
      status.className = "point-status status-" + p.status;
      row.querySelector(".point-attempts").textContent = p.attempts;
      row.querySelector(".point-error").textContent = p.error || "";
      var cell = row.querySelector(".point-run");
      if (p.run && !cell.querySelector("a")) {
        var link = document.createElement("a");
        link.href = "/runs/" + p.run + "/";
        link.textContent = p.run;
        cell.appendChild(link);
      }
    });
  }

  function draw(figure) {
    var el = document.getElementById("simulation-chart");
    if (!figure || !window.Plotly) { return; }
    document.getElementById("chart-empty").hidden = true;
    window.SchedbenchCharts.draw(el, figure)
      .then(function () { el.dataset.rendered = "1"; el.dataset.points = String(seen); });
  }

  function update(job) {
    var total = job.progress.total || 1;
    var percent = Math.round(100 * job.progress.done / total);
    document.getElementById("progress-fill").style.width = percent + "%";
    var bar = document.getElementById("progress");
    bar.setAttribute("aria-valuenow", job.progress.done);
    setText("progress-text", job.progress.done + " / " + job.progress.total + " points");
    setText("progress-percent", percent + "%");
    setText("job-status", job.status);
    setText("job-events", job.events);
    var error = document.getElementById("job-error");
    error.hidden = !job.error;
    error.textContent = job.error || "";
    if (job.comparison) {
      var link = document.getElementById("comparison-link");
      link.href = "/c/" + job.comparison + "/";
      link.textContent = job.comparison;
      document.getElementById("job-comparison").hidden = false;
    }
    updatePoints(job.points);
    if ("figure" in job) { seen = job.progress.done; draw(job.figure); }
    if (!ACTIVE[job.status]) {
      var cancel = document.getElementById("cancel-form");
      if (cancel) { cancel.hidden = true; }
      document.getElementById("job").dataset.finished = job.status;
      setText("results-heading", "Results");  // nothing more is coming
    }
  }

  function poll(api) {
    fetch(api + "?points=1&figure=1&seen=" + seen, { headers: { Accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (job) {
        update(job);
        if (ACTIVE[job.status]) { setTimeout(function () { poll(api); }, 1000); }
      })
      .catch(function () { setTimeout(function () { poll(api); }, 3000); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var job = document.getElementById("job");
    if (job) { poll(job.dataset.api); }
  });
})();

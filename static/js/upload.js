// Upload page: preview (dry run) and commit through the same REST endpoint the harness uses.
// Every piece of user or parser text is inserted with textContent, never as HTML.
(function () {
  "use strict";
  var form = document.getElementById("upload-form");
  var fileInput = document.getElementById("file-input");
  var dropzone = document.getElementById("dropzone");
  var textInput = document.getElementById("text-input");
  var previewButton = document.getElementById("preview-button");
  var commitButton = document.getElementById("commit-button");
  var progress = document.getElementById("upload-progress");
  var statusLine = document.getElementById("upload-status");
  var errorBox = document.getElementById("upload-error");
  var preview = document.getElementById("preview");
  var droppedFile = null;

  function el(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (className) { node.className = className; }
    return node;
  }

  function parsePairs(text, what) {
    var result = {};
    text.split("\n").forEach(function (line, index) {
      line = line.trim();
      if (!line) { return; }
      var eq = line.indexOf("=");
      if (eq < 1) { throw new Error(what + " line " + (index + 1) + ": expected name=value"); }
      var name = line.slice(0, eq).trim(), raw = line.slice(eq + 1).trim();
      result[name] = raw !== "" && !isNaN(Number(raw)) ? Number(raw) : raw;
    });
    return result;
  }

  function kernelCorrections() {
    var map = {};
    preview.querySelectorAll("input.kernel-fix").forEach(function (input) {
      if (input.dataset.found && input.value.trim() && input.value.trim() !== input.dataset.found) {
        map[input.dataset.found] = input.value.trim();
      }
    });
    return map;
  }

  function buildData(dryRun) {
    var data = new FormData();
    var file = droppedFile || (fileInput.files.length ? fileInput.files[0] : null);
    if (file) { data.append("file", file); }
    else if (textInput.value.trim()) { data.append("text", textInput.value); }
    else { throw new Error("Choose a file or paste some text first."); }
    ["format", "benchmark", "kernel", "machine", "policy"].forEach(function (name) {
      var value = form.elements[name].value.trim();
      if (value) { data.append(name, value); }
    });
    data.append("params", JSON.stringify(parsePairs(form.elements.params_text.value, "params")));
    data.append("tunables", JSON.stringify(parsePairs(form.elements.tunables_text.value, "tunables")));
    data.append("kernel_map", JSON.stringify(dryRun ? {} : kernelCorrections()));
    if (dryRun) { data.append("dry_run", "1"); }
    return data;
  }

  function showError(body) {
    errorBox.hidden = false;
    errorBox.textContent = "";
    var message = body.error || "The upload failed.";
    if (body.line) { message = "Line " + body.line + ": " + message; }
    errorBox.appendChild(el("strong", message));
    if (body.formats) {
      errorBox.appendChild(el("p", "Known formats: " + body.formats.join(", ") +
        (body.best_guess ? ". Best guess: " + body.best_guess + "." : ".")));
    }
    if (body.line && textInput.value && !fileInput.files.length && !droppedFile) {
      var lines = textInput.value.split("\n"), pre = el("pre", null, "context");
      for (var i = Math.max(0, body.line - 3); i < Math.min(lines.length, body.line + 2); i++) {
        pre.appendChild(el("span", (i + 1) + "  " + lines[i] + "\n", i + 1 === body.line ? "bad" : ""));
      }
      errorBox.appendChild(pre);
    }
  }

  function describeValues(metrics) {
    return Object.keys(metrics).map(function (name) {
      var m = metrics[name], shown = m.values.slice(0, 6).join(", ");
      return name + (m.unit ? " (" + m.unit + ")" : "") + ": " + shown +
        (m.n > 6 ? " … (" + m.n + " values)" : "");
    }).join("\n");
  }

  function pairsText(object) {
    return Object.keys(object || {}).sort().map(function (k) { return k + "=" + object[k]; }).join(" ");
  }

  function renderPreview(body, committed) {
    preview.hidden = false;
    document.getElementById("preview-format").textContent = body.format + " v" + (body.parser_version || "");
    var warnings = document.getElementById("preview-warnings");
    warnings.textContent = "";
    (body.warnings || []).forEach(function (w) { warnings.appendChild(el("li", w)); });
    var tbody = preview.querySelector("tbody");
    tbody.textContent = "";
    body.runs.forEach(function (run) {
      var row = el("tr");
      row.appendChild(el("td", run.line, "num"));
      var kernelCell = el("td");
      if (committed) { kernelCell.appendChild(el("span", run.kernel, "mono")); }
      else {
        var input = el("input", null, "kernel-fix");
        input.value = run.kernel; input.dataset.found = run.kernel;
        kernelCell.appendChild(input);
      }
      row.appendChild(kernelCell);
      row.appendChild(el("td", run.benchmark));
      row.appendChild(el("td", typeof run.machine === "string" ? run.machine : run.machine.name));
      row.appendChild(el("td", run.policy || "–"));
      row.appendChild(el("td", pairsText(run.params), "mono"));
      row.appendChild(el("td", pairsText(run.tunables), "mono"));
      var values = el("td", null, "mono"); values.style.whiteSpace = "pre";
      values.textContent = describeValues(run.metrics);
      row.appendChild(values);
      var link = el("td");
      if (run.url) { var a = el("a", "#" + run.id); a.href = run.url; link.appendChild(a); }
      else { link.textContent = "not saved"; }
      row.appendChild(link);
      tbody.appendChild(row);
    });
  }

  function send(dryRun) {
    errorBox.hidden = true;
    var data;
    try { data = buildData(dryRun); } catch (problem) { showError({ error: problem.message }); return; }
    var request = new XMLHttpRequest();
    request.open("POST", "/api/v1/uploads/");
    request.setRequestHeader("X-CSRFToken", form.elements.csrfmiddlewaretoken.value);
    request.setRequestHeader("Accept", "application/json");
    progress.hidden = false; progress.value = 0;
    statusLine.textContent = dryRun ? "Uploading for preview…" : "Committing…";
    request.upload.onprogress = function (event) {
      if (event.lengthComputable) { progress.value = Math.round(100 * event.loaded / event.total); }
    };
    request.upload.onload = function () { progress.value = 100; statusLine.textContent = "Parsing…"; };
    request.onload = function () {
      var body;
      try { body = JSON.parse(request.responseText); } catch (e) { body = { error: "HTTP " + request.status }; }
      if (request.status === 200 || request.status === 201) {
        renderPreview(body, !dryRun);
        commitButton.disabled = !dryRun;
        statusLine.textContent = dryRun
          ? body.runs.length + " run(s) found. Correct anything above, then commit."
          : body.runs.length + " run(s) saved.";
        preview.dataset.state = dryRun ? "previewed" : "committed";
      } else {
        commitButton.disabled = true;
        statusLine.textContent = "";
        showError(body);
      }
    };
    request.onerror = function () { showError({ error: "The portal could not be reached." }); };
    request.send(data);
  }

  previewButton.addEventListener("click", function () { send(true); });
  commitButton.addEventListener("click", function () { send(false); });
  fileInput.addEventListener("change", function () {
    droppedFile = null;
    document.getElementById("file-name").textContent = fileInput.files.length ? fileInput.files[0].name : "";
    commitButton.disabled = true;
  });
  ["dragenter", "dragover"].forEach(function (name) {
    dropzone.addEventListener(name, function (event) { event.preventDefault(); dropzone.classList.add("dragging"); });
  });
  ["dragleave", "drop"].forEach(function (name) {
    dropzone.addEventListener(name, function () { dropzone.classList.remove("dragging"); });
  });
  dropzone.addEventListener("drop", function (event) {
    event.preventDefault();
    if (event.dataTransfer.files.length) {
      droppedFile = event.dataTransfer.files[0];
      document.getElementById("file-name").textContent = droppedFile.name;
      commitButton.disabled = true;
    }
  });
  [textInput, form.elements.benchmark, form.elements.kernel].forEach(function (input) {
    input.addEventListener("input", function () { commitButton.disabled = true; });
  });
})();

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

  // Preview edits, by source key: one key covers every run read from one heading (or one
  // unassigned block), so correcting a heading's kernel corrects all its rows.
  function assignments() {
    var assign = {};
    function entry(key) { return assign[key] || (assign[key] = {}); }
    preview.querySelectorAll("input.kernel-fix").forEach(function (input) {
      var value = input.value.trim();
      if (value && (value !== input.dataset.found || input.dataset.unassigned === "1")) {
        entry(input.dataset.key).kernel = value;
      }
    });
    preview.querySelectorAll("input.label-fix").forEach(function (input) {
      if (input.value.trim() !== input.dataset.found) { entry(input.dataset.key).label = input.value.trim(); }
    });
    preview.querySelectorAll("input.param-fix").forEach(function (input) {
      var raw = input.value.trim();
      if (!raw) { return; }
      var params = entry(input.dataset.key).params || (entry(input.dataset.key).params = {});
      params[input.dataset.param] = isNaN(Number(raw)) ? raw : Number(raw);
    });
    return assign;
  }

  function buildData(dryRun) {
    var data = new FormData();
    var file = droppedFile || (fileInput.files.length ? fileInput.files[0] : null);
    if (file) { data.append("file", file); }
    else if (textInput.value.trim()) { data.append("text", textInput.value); }
    else { throw new Error("Choose a file or paste some text first."); }
    ["format", "benchmark", "kernel", "machine", "policy", "bisect", "commit"].forEach(function (name) {
      var value = form.elements[name].value.trim();
      if (value) { data.append(name, value); }
    });
    data.append("params", JSON.stringify(parsePairs(form.elements.params_text.value, "params")));
    data.append("tunables", JSON.stringify(parsePairs(form.elements.tunables_text.value, "tunables")));
    data.append("assign", JSON.stringify(dryRun ? {} : assignments()));
    if (dryRun) { data.append("dry_run", "1"); }
    return data;
  }

  function showError(body) {
    errorBox.hidden = false;
    errorBox.textContent = "";
    var message = body.error || "The upload failed.";
    if (body.line) { message = "Line " + body.line + ": " + message; }
    errorBox.appendChild(el("strong", message));
    // The field the server names (kernel, machine, ...) is marked and focused, not guessed at.
    Array.prototype.forEach.call(form.querySelectorAll("[aria-invalid]"), function (input) {
      input.removeAttribute("aria-invalid");
    });
    var field = body.field && form.elements[body.field];
    if (field && field.focus) {
      field.setAttribute("aria-invalid", "true");
      field.setAttribute("aria-describedby", "upload-error");
      field.focus();
    }
    if (body.formats) {
      errorBox.appendChild(el("p", "Known formats: " + body.formats.join(", ") +
        (body.best_guess ? ". Best guess: " + body.best_guess + "." : ".")));
    }
    if (body.help) {
      var hint = el("p", null, "layout-hint");
      hint.appendChild(document.createTextNode(body.layout ? "Closest layout: " : "See "));
      var link = el("a", body.layout ? body.layout : "the accepted formats");
      link.href = body.help;
      hint.appendChild(link);
      hint.appendChild(document.createTextNode(body.layout ? " (its example shows what it expects)." : "."));
      errorBox.appendChild(hint);
    }
    if (body.line && textInput.value && !fileInput.files.length && !droppedFile) {
      var lines = textInput.value.split("\n"), pre = el("pre", null, "context");
      for (var i = Math.max(0, body.line - 3); i < Math.min(lines.length, body.line + 2); i++) {
        pre.appendChild(el("span", (i + 1) + "  " + lines[i] + "\n", i + 1 === body.line ? "bad" : ""));
      }
      errorBox.appendChild(pre);
    }
  }

  // A published statistic (mmtests, the kernel test robot) comes with no samples: without its
  // own line the preview showed its name and nothing after the colon.
  function describeSummary(summary) {
    return "published " + summary.statistic + " " + summary.value +
      (summary.stddev_pct !== null && summary.stddev_pct !== undefined ?
        " ± " + summary.stddev_pct + "%" : "") +
      (summary.n ? " (n=" + summary.n + ")" : "");
  }

  function describeValues(metrics) {
    return Object.keys(metrics).map(function (name) {
      var m = metrics[name], shown = m.values.slice(0, 6).join(", ");
      if (!m.values.length && m.summary) { shown = describeSummary(m.summary); }
      return name + (m.unit ? " (" + m.unit + ")" : "") + ": " + shown +
        (m.n > 6 ? " … (" + m.n + " values)" : "");
    }).join("\n");
  }

  function pairsText(object) {
    return Object.keys(object || {}).sort().map(function (k) { return k + "=" + object[k]; }).join(" ");
  }

  function editor(className, run, value, found) {
    var input = el("input", null, className);
    input.value = value || ""; input.dataset.found = found || ""; input.dataset.key = run.source_key;
    // Every row from the same heading shows the same correction as it is typed.
    input.addEventListener("input", function () {
      preview.querySelectorAll("input." + className).forEach(function (other) {
        if (other !== input && other.dataset.key === input.dataset.key) { other.value = input.value; }
      });
    });
    return input;
  }

  function sourceCell(run) {
    var cell = el("td", null, "source");
    var pre = el("pre", null, "mono source-lines");
    (run.source || []).forEach(function (pair) { pre.appendChild(el("span", pair[0] + "  " + pair[1] + "\n")); });
    cell.appendChild(pre);
    return cell;
  }

  function kernelCell(run, committed) {
    var cell = el("td");
    if (committed) { cell.appendChild(el("span", run.kernel, "mono")); return cell; }
    if (run.unassigned) {
      var lines = run.lines[0] === run.lines[1] ? "line " + run.lines[0] : "lines " + run.lines[0] + "–" + run.lines[1];
      cell.appendChild(el("strong", "UNASSIGNED " + lines, "tag unassigned-tag"));
      cell.appendChild(el("div", "not sure of: " + run.missing.join(", "), "muted"));
    }
    var input = editor("kernel-fix", run, run.kernel, run.kernel);
    input.dataset.unassigned = run.unassigned ? "1" : "";
    input.placeholder = "kernel";
    cell.appendChild(input);
    (run.missing || []).forEach(function (what) {
      if (what.indexOf("param.") !== 0) { return; }
      var param = what.slice(6), box = editor("param-fix", run, "", "");
      box.dataset.param = param; box.placeholder = param;
      cell.appendChild(el("label", param)); cell.appendChild(box);
    });
    return cell;
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
      var row = el("tr", null, run.unassigned ? "unassigned" : "");
      row.dataset.key = run.source_key || "";
      row.appendChild(el("td", run.lines ? run.lines[0] + (run.lines[1] !== run.lines[0] ? "–" + run.lines[1] : "") : run.line, "num"));
      row.appendChild(kernelCell(run, committed));
      var labelCell = el("td");
      if (committed) { labelCell.textContent = run.label || "–"; }
      else { var label = editor("label-fix", run, run.label, run.label); label.placeholder = "label"; labelCell.appendChild(label); }
      row.appendChild(labelCell);
      row.appendChild(el("td", run.benchmark));
      row.appendChild(el("td", typeof run.machine === "string" ? run.machine : run.machine.name));
      row.appendChild(el("td", run.policy || "–"));
      row.appendChild(el("td", pairsText(run.params), "mono"));
      row.appendChild(el("td", pairsText(run.tunables), "mono"));
      var values = el("td", null, "mono"); values.style.whiteSpace = "pre";
      values.textContent = describeValues(run.metrics);
      row.appendChild(values);
      row.appendChild(sourceCell(run));
      var link = el("td");
      if (run.url) { var a = el("a", "#" + run.id); a.href = run.url; link.appendChild(a); }
      else { link.textContent = "not saved"; }
      row.appendChild(link);
      tbody.appendChild(row);
    });
  }

  function unassignedCount(body) {
    return body.runs.filter(function (run) { return run.unassigned; }).length;
  }

  // After a commit the page says where to go next: the builder with these runs, each run's
  // page, and a new thread about them (its subject and body filled in, the first run attached).
  function showNextSteps(runs) {
    var next = document.getElementById("upload-next");
    var saved = runs.filter(function (run) { return run.id && run.url; });
    next.hidden = !saved.length;
    if (!saved.length) { return; }
    var ids = saved.map(function (run) { return run.id; });
    document.getElementById("next-compare").href = next.dataset.compare + "?runs=" + ids.join(",");
    var view = document.getElementById("next-view");
    view.textContent = "";
    saved.forEach(function (run, i) {
      if (i) { view.appendChild(document.createTextNode(" · ")); }
      var a = el("a", "#" + run.id);
      a.href = run.url;
      view.appendChild(a);
    });
    var kernels = saved.map(function (run) { return run.kernel; })
      .filter(function (k, i, all) { return k && all.indexOf(k) === i; });
    var query = new URLSearchParams({
      target_type: "run", target_id: String(ids[0]),
      subject: saved[0].benchmark + " on " + kernels.join(", "),
      body: "Results just uploaded:\n" + saved.map(function (run) {
        return "#" + run.id + " " + run.benchmark + " on " + run.kernel + ": " +
          new URL(run.url, window.location.href).href;
      }).join("\n") + "\n"
    });
    document.getElementById("next-thread").href = next.dataset.thread + "?" + query.toString();
  }

  function send(dryRun) {
    errorBox.hidden = true;
    var data;
    try { data = buildData(dryRun); } catch (problem) { showError({ error: problem.message }); return; }
    var request = new XMLHttpRequest();
    request.open("POST", "/api/v1/uploads/");
    // Until the answer comes the table shown is the last one, about to be replaced: say so
    // (what is typed into it now would be lost), and let tests wait for the new state.
    preview.dataset.state = dryRun ? "previewing" : "committing";
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
        if (dryRun) { document.getElementById("upload-next").hidden = true; }
        else { showNextSteps(body.runs); }
        commitButton.disabled = !dryRun;
        var unsure = dryRun ? unassignedCount(body) : 0;
        statusLine.textContent = dryRun
          ? body.runs.length + " run(s) found. " + (unsure
            ? unsure + " UNASSIGNED: give them a kernel (or fix the input) before committing."
            : "Correct anything above, then commit.")
          : body.runs.length + " run(s) saved.";
        preview.dataset.state = dryRun ? "previewed" : "committed";
      } else {
        commitButton.disabled = true;
        statusLine.textContent = "";
        preview.dataset.state = "refused";
        showError(body);
      }
    };
    request.onerror = function () {
      preview.dataset.state = "refused";
      showError({ error: "The portal could not be reached." });
    };
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

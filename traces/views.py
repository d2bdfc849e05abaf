"""Trace pages: list, upload form, one trace, two traces side by side."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render

import schedtrace
import simulator
from benchmarks.errors import InputError
from benchmarks.selectors import calibrated_machines

from . import jobs, selectors
from .models import Trace, TraceJob


def _trace_or_404(pk) -> Trace:
    try:
        return selectors.trace_get(pk)
    except Trace.DoesNotExist:
        raise Http404("no such trace") from None


def trace_list(request):
    return render(request, "traces/trace_list.html",
                  {"traces": selectors.traces_listed()[:200]})


def _run_numbers(trace):
    """The run's summaries (metric, median, n) to show beside the trace's numbers."""
    if trace.run is None:
        return []
    return list(trace.run.summaries.select_related("metric"))


def trace_detail(request, pk: int):
    trace = _trace_or_404(pk)
    tasks = selectors.trace_tasks(trace)
    summary = trace.summary or {}
    return render(request, "traces/trace_detail.html", {
        "trace": trace, "tasks": tasks,
        "initial_end": trace.duration_ms,
        "cpu_stats": summary.get("cpus", []), "run_numbers": _run_numbers(trace),
        "latency": selectors.latency_histogram(summary.get("latency_hist", [])),
        "others": selectors.traces_listed().exclude(pk=trace.pk)[:50],
        # the "replay on ..." form, for logged-in users only
        "replay_kernels": list(simulator.catalog()["kernels"]),
        "replay_machines": calibrated_machines() if request.user.is_authenticated else [],
    })


def trace_versus(request, a: int, b: int):
    left, right = _trace_or_404(a), _trace_or_404(b)
    # One time axis: both start on the longer trace's whole length.
    return render(request, "traces/trace_versus.html", {
        "traces": [left, right], "initial_end": max(left.duration_ms, right.duration_ms)})


class TraceUploadForm(forms.Form):
    file = forms.FileField(help_text="ftrace text, trace-cmd report or perf script output; "
                           "gzip or xz allowed")
    title = forms.CharField(required=False, max_length=200)
    run = forms.IntegerField(required=False, min_value=1, help_text="a run of yours (id)")
    format = forms.ChoiceField(required=False, choices=[("", "detect")] + [
        (name, name) for name in schedtrace.FORMATS])


def _upload_error(form, exc: InputError) -> None:
    where = f" (line {exc.line})" if exc.line else ""
    form.add_error(exc.field if exc.field in form.fields else None, f"{exc.message}{where}")


@login_required
def trace_upload(request):
    """The upload form: the file becomes a job; a small one is ingested at once (to the
    trace), a big one goes to a worker and the browser follows it on the job's page."""
    form = TraceUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            job = jobs.trace_job_create(upload=data["file"], owner=request.user,
                                        run_id=data.get("run"), format=data["format"] or None,
                                        title=data.get("title") or "")
        except InputError as exc:
            _upload_error(form, exc)
        else:
            if job.is_active:
                return redirect(job)
            if job.trace_id is not None:
                for warning in job.result["warnings"]:
                    messages.warning(request, warning)
                return redirect(job.trace)
            _upload_error(form, InputError(job.error, field=job.error_field or None,
                                           line=job.error_line))
    return render(request, "traces/trace_upload.html", {"form": form})


@login_required
def trace_job_detail(request, pk: int):
    """A trace upload's progress while a worker ingests it; then a link to the trace (or why
    it was refused)."""
    job = get_object_or_404(TraceJob, pk=pk)
    if not (request.user.is_staff or request.user.pk == job.owner_id):
        raise Http404("no such trace upload of yours")
    return render(request, "traces/trace_job.html", {"job": job})

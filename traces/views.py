"""Trace pages: list, upload form, one trace, two traces side by side."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render

import schedtrace
import simulator
from benchmarks.errors import InputError
from benchmarks.selectors import calibrated_machines

from . import selectors, services
from .models import Trace


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


@login_required
def trace_upload(request):
    form = TraceUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        uploaded = form.cleaned_data["file"]
        stream = uploaded.open("rb")
        try:
            trace = services.trace_ingest(
                stream=stream, filename=uploaded.name or "trace.txt", owner=request.user,
                run_id=form.cleaned_data.get("run"), format=form.cleaned_data["format"] or None,
                title=form.cleaned_data.get("title") or "", size=uploaded.size)
        except InputError as exc:
            where = f" (line {exc.line})" if exc.line else ""
            form.add_error(exc.field if exc.field in form.fields else None,
                           f"{exc.message}{where}")
        else:
            for warning in trace.warnings:
                messages.warning(request, warning)
            return redirect(trace)
        finally:
            stream.close()
    return render(request, "traces/trace_upload.html", {"form": form})

"""REST API v1 for traces (docs/traces.md). Parse, authorise, one service call, respond."""

import math

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.decorators import api_view, parser_classes
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

import schedtrace
from benchmarks.api.requests import RequestSerializer
from benchmarks.api.serializers import ResponseSerializer
from benchmarks.errors import InputError, TooLarge
from benchmarks.services.jsonvalues import text_problem

from . import jobs, selectors
from .models import Trace, TraceJob, TraceJobStatus

LIST_LIMIT = 100


class TraceUploadSerializer(RequestSerializer):
    tolerated = frozenset({"csrfmiddlewaretoken"})  # a page's form sends it with the fields
    file = serializers.FileField(help_text="ftrace text (trace, trace_pipe), trace-cmd report, "
                                 "perf script / perf sched script; gzip or xz allowed")
    run = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1,
                                   help_text="id of a run of yours this trace belongs to")
    format = serializers.ChoiceField(choices=schedtrace.FORMATS, required=False,
                                     help_text="detected when absent")
    title = serializers.CharField(required=False, max_length=200)

    def validate_title(self, value):
        problem = text_problem(value)
        if problem:
            raise serializers.ValidationError(f"title {problem}")
        return value


class TraceCreatedSerializer(ResponseSerializer):
    id = serializers.IntegerField()
    url = serializers.URLField(help_text="the trace page")
    api_url = serializers.URLField()
    events = serializers.IntegerField()
    cpus = serializers.IntegerField()
    tasks = serializers.IntegerField()
    duration_ms = serializers.FloatField()
    format = serializers.CharField()
    warnings = serializers.ListField(child=serializers.CharField())


class TraceJobProgressSerializer(ResponseSerializer):
    stage = serializers.CharField(allow_blank=True)
    done = serializers.IntegerField(help_text="bytes of the file read so far")
    total = serializers.IntegerField(help_text="bytes of the file")


class TraceJobQueuedSerializer(ResponseSerializer):
    """202: a worker is still ingesting the trace; poll `url`."""

    id = serializers.IntegerField()
    url = serializers.URLField()
    page = serializers.URLField()
    status = serializers.CharField()
    progress = TraceJobProgressSerializer()


class TraceJobErrorSerializer(ResponseSerializer):
    error = serializers.CharField()
    field = serializers.CharField(allow_null=True)
    line = serializers.IntegerField(allow_null=True)


class TraceJobSerializer(TraceJobQueuedSerializer):
    filename = serializers.CharField(allow_blank=True)
    error = TraceJobErrorSerializer(allow_null=True, help_text="why the trace was refused")
    result = TraceCreatedSerializer(allow_null=True, help_text="the 201 body once ingested")


class TraceTaskSerializer(ResponseSerializer):
    pid = serializers.IntegerField()
    comm = serializers.CharField(allow_blank=True)
    runtime_ms = serializers.FloatField()
    switches = serializers.IntegerField()
    wakeups = serializers.IntegerField()
    migrations = serializers.IntegerField()
    wait_sum_ms = serializers.FloatField()
    wait_max_ms = serializers.FloatField()
    wait_avg_ms = serializers.FloatField()
    waits = serializers.IntegerField()
    index = serializers.IntegerField(help_text="the task's number in timeline segments")
    parent_pid = serializers.IntegerField(allow_null=True)


class LatencyHistogramSerializer(ResponseSerializer):
    bounds_us = serializers.ListField(child=serializers.ListField(child=serializers.FloatField()))
    counts = serializers.ListField(child=serializers.IntegerField())


class TraceSummarySerializer(ResponseSerializer):
    id = serializers.IntegerField()
    url = serializers.URLField()
    api_url = serializers.URLField()
    run = serializers.IntegerField(allow_null=True)
    title = serializers.CharField(allow_blank=True)
    format = serializers.CharField()
    events = serializers.IntegerField()
    cpus = serializers.IntegerField()
    tasks_count = serializers.IntegerField()
    duration_ms = serializers.FloatField()
    lost_events = serializers.IntegerField()
    inferred_switches = serializers.IntegerField(help_text="sched_switch events the trace lacked")
    inferred_switch_ins = serializers.IntegerField(
        help_text="of them, switch-ins placed by inference (counted in the tasks' figures)")
    warnings = serializers.ListField(child=serializers.CharField())
    artifact = serializers.IntegerField()
    created = serializers.CharField()
    owner = serializers.CharField(allow_null=True)


class TraceSerializer(TraceSummarySerializer):
    tasks = TraceTaskSerializer(many=True, help_text="busiest first (every task; ?limit=N)")
    cpu_stats = serializers.ListField(child=serializers.DictField(), help_text="per CPU: busy_ms, "
                                      "idle_ms, idle_gaps, idle_max_ms")
    latency_hist = LatencyHistogramSerializer(help_text="wakeup-to-run latency, log2 buckets")


class TraceListSerializer(ResponseSerializer):
    results = TraceSummarySerializer(many=True)


class SegmentSerializer(ResponseSerializer):
    cpu = serializers.IntegerField()
    pid = serializers.IntegerField(allow_null=True, help_text="null for merged '(many)'")
    comm = serializers.CharField(allow_blank=True)
    start_ms = serializers.FloatField(help_text="ms from the trace's first event")
    end_ms = serializers.FloatField()
    state = serializers.CharField(help_text="prev_state when it left the CPU; ? unknown")
    reason = serializers.CharField()
    task = serializers.IntegerField()
    count = serializers.IntegerField(help_text="runs merged into this segment")
    busy_ms = serializers.FloatField()


class WakeupSerializer(ResponseSerializer):
    from_cpu = serializers.IntegerField()
    to_cpu = serializers.IntegerField()
    pid = serializers.IntegerField()
    comm = serializers.CharField(allow_blank=True)
    at_ms = serializers.FloatField()


@extend_schema_field(SegmentSerializer(many=True))
class _PlainList(serializers.Field):
    """Rows built by the selector as plain dicts already: passed through as they are (a window
    has up to a few thousand, and a serializer per row would cost most of the time budget)."""

    def to_representation(self, value):
        return value


@extend_schema_field(WakeupSerializer(many=True))
class _PlainWakeups(_PlainList):
    pass


class TimelineSerializer(ResponseSerializer):
    segments = _PlainList()
    decimated = serializers.BooleanField()
    level = serializers.IntegerField()
    start_ms = serializers.FloatField()
    end_ms = serializers.FloatField()
    duration_ms = serializers.FloatField()
    cpus = serializers.ListField(child=serializers.IntegerField())
    wakeups = _PlainWakeups(required=False)
    wakeups_thinned = serializers.BooleanField(required=False)


def _linked(request, trace, body: dict) -> dict:
    return {**body,
            "url": request.build_absolute_uri(trace.get_absolute_url()),
            "api_url": request.build_absolute_uri(reverse("api-trace-detail", args=[trace.pk]))}


def _trace_or_404(pk) -> Trace:
    try:
        return selectors.trace_get(pk)
    except Trace.DoesNotExist:
        raise Http404("no such trace") from None


def _refuse_too_large(request):
    """413 before Django spools a file that is over the limit anyway."""
    length = request.META.get("CONTENT_LENGTH") or ""
    limit = settings.TRACE_MAX_UPLOAD_MB * 1024 * 1024
    if length.isdigit() and int(length) > limit + 1024 * 1024:
        raise TooLarge(f"the trace is larger than {settings.TRACE_MAX_UPLOAD_MB} MB",
                       field="file")


def _upload(request):
    """Store the upload as a job (ingested here when small, else by a worker) and wait up to
    SCHEDBENCH_IMPORT_WAIT for it."""
    _refuse_too_large(request)
    try:
        form = TraceUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
    except RequestDataTooBig:
        raise TooLarge(f"the request is larger than {settings.MAX_UPLOAD_MB} MB") from None
    data = form.validated_data
    job = jobs.trace_job_create(upload=data["file"], owner=request.user, run_id=data.get("run"),
                                format=data.get("format"), title=data.get("title", ""))
    return jobs.trace_job_wait(job=job, seconds=settings.IMPORT_WAIT_SECONDS)


def _job_answer(request, job):
    """Finished: the contract's 201 body (or its error); still running: 202 with the job."""
    body = jobs.trace_job_json(job, absolute=request.build_absolute_uri)
    if job.status == TraceJobStatus.SUCCEEDED:
        return Response(TraceCreatedSerializer(body["result"]).data,
                        status=status.HTTP_201_CREATED)
    if job.status == TraceJobStatus.FAILED:
        raise InputError(job.error, field=job.error_field or None, line=job.error_line,
                         status=job.error_status or 400)
    queued = {key: body[key] for key in ("id", "url", "page", "status", "progress")}
    return Response(TraceJobQueuedSerializer(queued).data, status=status.HTTP_202_ACCEPTED)


@extend_schema(methods=["POST"], request={"multipart/form-data": TraceUploadSerializer},
               responses={201: TraceCreatedSerializer, 202: TraceJobQueuedSerializer},
               description="Upload a scheduler trace. Streams from disk; the raw file is kept "
               "as an artifact. Bad lines answer 400 with their `line`; a trace that ends in "
               "the middle of a line is kept up to its last whole event, with a warning. A "
               "trace not ingested within SCHEDBENCH_IMPORT_WAIT seconds answers 202 with a "
               "job to poll, whose `result` is the 201 body.")
@extend_schema(methods=["GET"], operation_id="v1_traces_list",
               responses=TraceListSerializer)
@api_view(["GET", "POST"])
@parser_classes([MultiPartParser])
def traces(request):
    if request.method == "GET":
        listed = selectors.traces_listed()[:LIST_LIMIT]
        body = {"results": [_linked(request, t, selectors.trace_summary_json(t))
                            for t in listed]}
        return Response(TraceListSerializer(body).data)
    return _job_answer(request, _upload(request))


@extend_schema(responses=TraceJobSerializer)
@api_view(["GET"])
def trace_job_detail(request, pk: int):
    """A trace upload's progress, and its result once ingested (its owner and staff only)."""
    job = TraceJob.objects.filter(pk=pk).first()
    if job is None or not (request.user.is_staff or request.user.pk == job.owner_id):
        raise Http404("no such trace upload of yours")
    return Response(TraceJobSerializer(
        jobs.trace_job_json(job, absolute=request.build_absolute_uri)).data)


@extend_schema(responses=TraceSerializer, parameters=[
    OpenApiParameter("limit", int, description="only the N busiest tasks (default: every task)")])
@api_view(["GET"])
def trace_detail(request, pk: int):
    raw = request.query_params.get("limit", "")
    if raw and not (raw.isdigit() and 0 < int(raw) <= 10**9):
        raise InputError("limit must be a positive whole number", field="limit")
    trace = _trace_or_404(pk)
    tasks = selectors.trace_tasks(trace, int(raw) if raw else None)
    return Response(TraceSerializer(_linked(request, trace,
                                            selectors.trace_json(trace, tasks))).data)


def _ms_param(request, name):
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return None
    try:
        value = float(raw)
    except ValueError:
        raise InputError(f"{name} must be a number of milliseconds", field=name) from None
    if not math.isfinite(value) or abs(value) > 1e12:
        raise InputError(f"{name} must be a finite number of milliseconds", field=name)
    return value


@extend_schema(responses=TimelineSerializer, parameters=[
    OpenApiParameter("start_ms", float, description="window start, ms from the trace's start"),
    OpenApiParameter("end_ms", float, description="window end (default: the trace's end)"),
    OpenApiParameter("wakeups", str, description="1: add wakeup arrows in the window"),
])
@api_view(["GET"])
def trace_timeline(request, pk: int):
    """A decimated view of the window: at most a few thousand segments whatever its width."""
    start_ms, end_ms = _ms_param(request, "start_ms"), _ms_param(request, "end_ms")
    if start_ms is not None and end_ms is not None and end_ms <= start_ms:
        raise InputError("end_ms must be after start_ms", field="end_ms")
    trace = _trace_or_404(pk)
    body = selectors.timeline_window(trace, start_ms, end_ms,
                                     wakeups=request.query_params.get("wakeups") == "1")
    return Response(TimelineSerializer(body).data)

"""REST API v1 for simulations (docs/api.md, Simulations). Errors are JSON {"error": ...}."""

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.exceptions import PermissionDenied as ApiPermissionDenied
from rest_framework.response import Response

from benchmarks.api.requests import Flag, Integer, List, Object, RequestSerializer, Text
from benchmarks.api.serializers import JSONObjectField, ResponseSerializer
from traces.models import Trace

from . import replays, selectors, services
from .models import SimulationJob


class JobSpecSerializer(RequestSerializer):
    """The job spec, checked for shape; `services.simulation_create` judges the values against
    the simulator (workload and kernel names, params, limits)."""

    workload = Text(max_length=100, help_text="threadtest, chatroom, yield-loop, ...")
    kernels = List(child=Text(max_length=100), required=False, min_length=1, max_length=100,
                   help_text="kernel profiles (required, unless `kernel` names one)")
    kernel = Text(max_length=100, required=False, help_text="one kernel profile: the same as "
                  "kernels: [kernel]")
    params = Object(required=False)
    tunables = Object(required=False)
    sweep = Object(required=False, help_text='{"loops": [1000000, 10000000]}')
    repeat = Integer(required=False, min_value=1)
    seed = Integer(required=False, min_value=0)
    cpus = Integer(required=False, min_value=1)
    topology = Text(max_length=50, required=False, help_text="SxCxT, e.g. 1x2x1")
    machine = Integer(required=False, min_value=1, help_text="a machine id with a "
                      "calibration: its costs and topology (then no cpus or topology)")
    max_events = Integer(required=False, min_value=1)
    title = Text(max_length=200, required=False)
    trace = Flag(required=False, help_text="keep each point's first repeat as a trace (when "
                 "it is small enough)")


class JobCreatedSerializer(ResponseSerializer):
    id = serializers.IntegerField()
    url = serializers.URLField()
    page = serializers.URLField()
    status = serializers.CharField()


class ProgressSerializer(ResponseSerializer):
    done = serializers.IntegerField()
    total = serializers.IntegerField()


class JobSerializer(ResponseSerializer):
    id = serializers.IntegerField()
    url = serializers.CharField()
    page = serializers.CharField()
    status = serializers.ChoiceField(["queued", "running", "succeeded", "failed", "cancelled"])
    progress = ProgressSerializer()
    failed = serializers.IntegerField()
    runs = serializers.ListField(child=serializers.IntegerField())
    comparison = serializers.CharField(allow_null=True, help_text="slug of the frozen result")
    error = serializers.CharField(allow_null=True)
    spec = JSONObjectField()
    owner = serializers.CharField()
    simulator_version = serializers.CharField(allow_blank=True, allow_null=True)
    events = serializers.IntegerField(allow_null=True)
    created = serializers.CharField()
    started = serializers.CharField(allow_null=True)
    finished = serializers.CharField(allow_null=True)
    points = serializers.ListField(child=JSONObjectField(), required=False,
                                   help_text="with ?points=1")
    figure = JSONObjectField(required=False, allow_null=True, help_text="with ?figure=1")


class JobListSerializer(ResponseSerializer):
    results = JobSerializer(many=True)


class JobCancelledSerializer(ResponseSerializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    progress = ProgressSerializer()


def _linked(request, data: dict) -> dict:
    """Absolute `url` and `page`, as the launch answer and the runs API give them."""
    return {**data, "url": request.build_absolute_uri(data["url"]),
            "page": request.build_absolute_uri(data["page"])}


@extend_schema(methods=["POST"], request=JobSpecSerializer, responses={202: JobCreatedSerializer},
               examples=[OpenApiExample("threadtest sweep", request_only=True, value={
                   "workload": "threadtest", "kernels": ["2.6.22", "2.6.24"],
                   "sweep": {"loops": [1000, 10000]}, "repeat": 3, "seed": 1, "cpus": 2})])
@extend_schema(methods=["GET"], operation_id="v1_simulations_list",
               responses=JobListSerializer)
@api_view(["GET", "POST"])
def simulations(request):
    """POST launches a job (202 {"id", "url", "status"}); GET lists recent jobs."""
    if request.method == "GET":
        jobs = selectors.jobs_listed()[:50]
        body = {"results": [_linked(request, selectors.job_json(job)) for job in jobs]}
        return Response(JobListSerializer(body).data)
    spec = JobSpecSerializer(data=request.data).validated()
    job = services.simulation_create(spec=spec, owner=request.user)
    body = {"id": job.pk, "status": job.status,
            "url": request.build_absolute_uri(reverse("api-simulation-detail", args=[job.pk])),
            "page": request.build_absolute_uri(job.get_absolute_url())}
    return Response(JobCreatedSerializer(body).data, status=status.HTTP_202_ACCEPTED)


@extend_schema(responses=JobSerializer, parameters=[
    OpenApiParameter("points", str, description="1: add per-point status"),
    OpenApiParameter("figure", str, description="1: add the live chart"),
    OpenApiParameter("seen", str, description="points done at the last poll"),
])
@api_view(["GET"])
def simulation_detail(request, pk: int):
    """Progress and results; `?points=1` adds per-point status, `?figure=1&seen=N` the chart
    (only when more than N points are done, so a poller fetches it only when it changed)."""
    job = get_object_or_404(SimulationJob.objects.select_related("owner", "comparison"), pk=pk)
    data = _linked(request, selectors.job_json(
        job, with_points=request.query_params.get("points") == "1"))
    if request.query_params.get("figure") == "1":
        seen = request.query_params.get("seen", "")
        if not seen.isdigit() or int(seen) != job.done:
            data["figure"] = selectors.job_figure(job)
    return Response(JobSerializer(data).data)


@extend_schema(request=None, responses=JobCancelledSerializer)
@api_view(["POST"])
def simulation_cancel(request, pk: int):
    job = get_object_or_404(SimulationJob, pk=pk)
    try:
        job = services.simulation_cancel(job=job, user=request.user)
    except PermissionDenied as exc:
        raise ApiPermissionDenied(str(exc)) from None
    return Response(JobCancelledSerializer({
        "id": job.pk, "status": job.status,
        "progress": {"done": job.done, "total": job.total}}).data)


class ReplayRequestSerializer(RequestSerializer):
    """Kernels to replay a trace on; `replays.replay_job_create` checks the values."""

    kernels = List(child=Text(max_length=100), min_length=1, max_length=100,
                   help_text="simulator kernel profiles, e.g. [\"2.6.22\", \"6.6-eevdf\"]")
    machine = Integer(required=False, min_value=1, help_text="a machine id with a calibration: "
                      "replay on its topology and calibration")


@extend_schema(request=ReplayRequestSerializer, responses={201: JobCreatedSerializer},
               examples=[OpenApiExample("two kernels", request_only=True, value={
                   "kernels": ["2.6.22", "6.6-eevdf"]})])
@api_view(["POST"])
def trace_replay(request, pk: int):
    """Launch a simulation job replaying the trace on each kernel (and machine, if given)."""
    trace = get_object_or_404(Trace, pk=pk)
    body = ReplayRequestSerializer(data=request.data).validated()
    job = replays.replay_job_create(trace=trace, kernels=body.get("kernels"),
                                    machine=body.get("machine"), user=request.user)
    created = {"id": job.pk, "status": job.status,
               "url": request.build_absolute_uri(reverse("api-simulation-detail", args=[job.pk])),
               "page": request.build_absolute_uri(job.get_absolute_url())}
    return Response(JobCreatedSerializer(created).data, status=status.HTTP_201_CREATED)

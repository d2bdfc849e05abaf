"""REST API v1 for simulations (DESIGN.md contract). Errors are JSON {"error": ...}."""

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import api_view
from rest_framework.exceptions import PermissionDenied as ApiPermissionDenied
from rest_framework.response import Response

from . import selectors, services
from .models import SimulationJob

JOB_SPEC = {"type": "object", "properties": {
    "workload": {"type": "string"}, "params": {"type": "object"},
    "kernels": {"type": "array", "items": {"type": "string"}}, "tunables": {"type": "object"},
    "sweep": {"type": "object", "description": '{"loops": [1000000, 10000000]}'},
    "repeat": {"type": "integer"}, "seed": {"type": "integer"}, "cpus": {"type": "integer"},
    "topology": {"type": "string", "description": "SxCxT, e.g. 1x2x1"},
    "max_events": {"type": "integer"}, "title": {"type": "string"}},
    "required": ["workload", "kernels"]}


@extend_schema(methods=["POST"], request={"application/json": JOB_SPEC},
               responses={202: OpenApiTypes.OBJECT})
@extend_schema(methods=["GET"], operation_id="v1_simulations_list",
               responses=OpenApiTypes.OBJECT)
@api_view(["GET", "POST"])
def simulations(request):
    """POST launches a job (202 {"id", "url", "status"}); GET lists recent jobs."""
    if request.method == "GET":
        jobs = selectors.jobs_listed()[:50]
        return Response({"results": [selectors.job_json(job) for job in jobs]})
    job = services.simulation_create(spec=request.data, owner=request.user)
    return Response({"id": job.pk, "url": request.build_absolute_uri(f"/api/v1/simulations/"
                                                                     f"{job.pk}/"),
                     "page": request.build_absolute_uri(job.get_absolute_url()),
                     "status": job.status}, status=status.HTTP_202_ACCEPTED)


@extend_schema(responses=OpenApiTypes.OBJECT)
@api_view(["GET"])
def simulation_detail(request, pk: int):
    """Progress and results; `?points=1` adds per-point status, `?figure=1&seen=N` the chart
    (only when more than N points are done, so a poller fetches it only when it changed)."""
    job = get_object_or_404(SimulationJob.objects.select_related("owner", "comparison"), pk=pk)
    data = selectors.job_json(job, with_points=request.query_params.get("points") == "1")
    if request.query_params.get("figure") == "1":
        seen = request.query_params.get("seen", "")
        if not seen.isdigit() or int(seen) != job.done:
            data["figure"] = selectors.job_figure(job)
    return Response(data)


@extend_schema(request=None, responses=OpenApiTypes.OBJECT)
@api_view(["POST"])
def simulation_cancel(request, pk: int):
    job = get_object_or_404(SimulationJob, pk=pk)
    try:
        job = services.simulation_cancel(job=job, user=request.user)
    except PermissionDenied as exc:
        raise ApiPermissionDenied(str(exc)) from None
    return Response({"id": job.pk, "status": job.status,
                     "progress": {"done": job.done, "total": job.total}})

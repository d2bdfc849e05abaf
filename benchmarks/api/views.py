from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.urls import NoReverseMatch, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions, status, viewsets
from rest_framework.decorators import action, api_view, permission_classes
from rest_framework.response import Response

from benchmarks import selectors
from benchmarks.api.ingest_views import (
    RUN_BULK_SCHEMA,
    RUN_CREATE_SCHEMA,
    run_bulk_response,
    run_create_response,
)
from benchmarks.api.jsonbody import DepthLimitedJSONParser
from benchmarks.api.serializers import (
    BenchmarkSerializer,
    KernelSerializer,
    MachineSerializer,
    MeSerializer,
    RunDetailSerializer,
    RunListSerializer,
    RunMovedSerializer,
    RunUpdateRequestSerializer,
)
from benchmarks.models import Benchmark, Kernel, Machine, Run
from benchmarks.services.ownership import may_edit, run_restore, run_update, run_withdraw

RUN_FILTERS = [
    OpenApiParameter(name, str, description=text)
    for name, text in (
        ("benchmark", "benchmark slug or name"),
        ("kernel", "kernel version string, exactly as reported by uname -r"),
        ("machine", "machine name or id"),
        ("policy", "policy label"),
        ("source", "upload, api, simulator, mail or demo"),
        ("tag", "a tag the run's owner gave it, e.g. cfs"),
    )
] + [
    OpenApiParameter(f"{prefix}.<name>", str, description=text)
    for prefix, text in (
        ("param", "a run parameter, e.g. param.loops=1000000"),
        ("tunable", "a scheduler tunable, e.g. tunable.sched_compat_yield=1"),
    )
]


class RunViewSet(viewsets.ReadOnlyModelViewSet):
    """Runs with every sample. Lists are in natural kernel order within each benchmark."""

    queryset = Run.objects.with_detail_relations()
    parser_classes = [DepthLimitedJSONParser]

    @RUN_CREATE_SCHEMA
    def create(self, request):
        return run_create_response(request)

    @RUN_BULK_SCHEMA
    @action(detail=False, methods=["post"], parser_classes=[], url_path="bulk")
    def bulk(self, request):
        return run_bulk_response(request)

    def get_serializer_class(self):
        return RunListSerializer if self.action == "list" else RunDetailSerializer

    @extend_schema(parameters=RUN_FILTERS)
    def list(self, request, *args, **kwargs):
        filtered = selectors.run_filter(request.query_params)
        runs = filtered.runs.with_listing_relations().in_natural_order()
        page = self.paginate_queryset(runs)
        response = self.get_paginated_response(
            RunListSerializer(page, many=True, context={"request": request}).data
        )
        if filtered.problems:
            response.data["message"] = "; ".join(filtered.problems)
        return response

    @extend_schema(
        responses={200: RunDetailSerializer, 301: OpenApiResponse(
            RunMovedSerializer, description="a reparse replaced this run: `Location` (and "
            "`url`) is its successor's API URL")},
        parameters=[OpenApiParameter("Location", OpenApiTypes.URI, OpenApiParameter.HEADER,
                                     response=[301], description="the successor's API URL")],
    )
    def retrieve(self, request, *args, **kwargs):
        try:
            run = self.get_object()
        except Http404:
            pk = kwargs["pk"]
            successor = selectors.run_successor(int(pk)) if pk.isascii() and pk.isdigit() \
                else None
            if successor is None:
                raise
            return self._moved(request, pk, successor)
        return Response(RunDetailSerializer(run, context={"request": request}).data)

    @extend_schema(request=RunUpdateRequestSerializer, responses={200: RunDetailSerializer})
    def partial_update(self, request, *args, **kwargs):
        """Set the label and/or replace the tags of a run you submitted (or any, as staff)."""
        run = self.get_object()
        if not may_edit(request.user, run):  # before the body: a stranger learns nothing
            raise PermissionDenied(f"only the submitter of run {run.pk} or staff can edit it")
        body = RunUpdateRequestSerializer(data=request.data).validated()
        run = run_update(run=run, user=request.user, **body)
        return Response(RunDetailSerializer(run, context={"request": request}).data)

    @extend_schema(request=None, responses={204: None})
    def destroy(self, request, *args, **kwargs):
        """Withdraw a run you submitted: it leaves lists, search and new comparisons; frozen
        comparisons keep their numbers. Not deleted: staff can restore it."""
        run_withdraw(run=self.get_object(), user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses={200: RunDetailSerializer})
    @action(detail=True, methods=["post"], parser_classes=[])
    def restore(self, request, pk=None):
        """Bring a withdrawn run back (staff only)."""
        run = run_restore(run=self.get_object(), user=request.user)
        return Response(RunDetailSerializer(run, context={"request": request}).data)

    @staticmethod
    def _moved(request, pk: str, successor: int) -> Response:
        """A run a reparse replaced answers like its page does: a redirect to its successor.
        Permanent, because a reparse never brings a removed id back."""
        url = request.build_absolute_uri(reverse("api-run-detail", args=[successor]))
        body = {"error": f"run {pk} was replaced by run {successor} when its input was "
                "reparsed", "successor": successor, "url": url}
        return Response(RunMovedSerializer(body).data, status=status.HTTP_301_MOVED_PERMANENTLY,
                        headers={"Location": url})


class BenchmarkViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Benchmark.objects.prefetch_related("metrics")
    serializer_class = BenchmarkSerializer
    lookup_field = "slug"

    def get_queryset(self):
        # Lists leave out names only withdrawn runs use; a direct address still answers.
        if self.action == "list":
            return selectors.benchmarks_listed().prefetch_related("metrics")
        return super().get_queryset()


class MachineViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Machine.objects.all()
    serializer_class = MachineSerializer

    def get_queryset(self):
        return selectors.machines_listed() if self.action == "list" else super().get_queryset()


class KernelViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Kernel.objects.order_by("sort_key", "version")
    serializer_class = KernelSerializer
    lookup_field = "version"
    lookup_value_regex = "[^/]+"

    def get_queryset(self):
        return selectors.kernels_listed() if self.action == "list" else super().get_queryset()


@extend_schema(responses={200: MeSerializer})
@api_view(["GET"])
@permission_classes([permissions.IsAuthenticated])
def me(request):
    """Who the token or session belongs to: lets a harness check its token before a long run."""
    return Response(MeSerializer({"username": request.user.get_username(),
                                  "is_staff": request.user.is_staff}).data)


# What /api/v1/ lists (as DRF's browsable root did): the collections, by URL name.
API_COLLECTIONS = {
    "runs": "api-run-list", "benchmarks": "api-benchmark-list", "machines": "api-machine-list",
    "kernels": "api-kernel-list", "comparisons": "api-comparison-list",
    "regressions": "api-regression-list", "simulations": "api-simulations",
    "threads": "api-threads", "traces": "api-traces", "bisections": "api-bisections",
    "search": "api-search", "uploads": "api-upload",
}


@extend_schema(exclude=True)
@api_view(["GET"])
@permission_classes([permissions.AllowAny])
def api_root(request):
    """The API's collections, each with its URL; those of apps not installed are left out."""
    links = {}
    for name, url_name in API_COLLECTIONS.items():
        try:
            links[name] = request.build_absolute_uri(reverse(url_name))
        except NoReverseMatch:
            continue
    return Response(links)

"""Comparisons over REST: options for a selection, preview, create (frozen), list, read."""

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

from benchmarks.api.jsonbody import DepthLimitedJSONParser
from benchmarks.api.serializers import (
    ComparisonChoicesSerializer,
    ComparisonCreatedSerializer,
    ComparisonListItemSerializer,
    ComparisonPreviewSerializer,
    ComparisonSerializer,
    ComparisonSpecSerializer,
)
from benchmarks.comparisons import dimensions
from benchmarks.comparisons.compute import compute, resolve_runs
from benchmarks.comparisons.report import as_json
from benchmarks.comparisons.spec import parse_spec
from benchmarks.models import Comparison, MetricSummary
from benchmarks.services.comparisons import comparison_create

SPEC_EXAMPLE = OpenApiExample("kernels over loops", request_only=True, value={
    "title": "threadtest: 2.6.22 vs 2.6.24", "filters": {"benchmark": "threadtest"},
    "metric": "time_ms", "x": "param.loops", "series": "kernel", "statistic": "median",
    "error": "ci95", "chart": "line"})


class ComparisonViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Frozen comparisons. Create computes from today's runs; reading never recomputes."""

    queryset = Comparison.objects.select_related("author").defer("frozen")
    lookup_field = "slug"
    parser_classes = [DepthLimitedJSONParser]
    serializer_class = ComparisonSpecSerializer  # what OPTIONS describes

    @extend_schema(responses=ComparisonListItemSerializer(many=True))
    def list(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(ComparisonListItemSerializer([
            {"slug": c.slug, "title": c.title, "url": request.build_absolute_uri(
                c.get_absolute_url()), "created": c.created, "runs": len(c.run_ids)}
            for c in page
        ], many=True).data)

    @extend_schema(responses=ComparisonSerializer)
    def retrieve(self, request, slug=None):
        comparison = Comparison.objects.filter(slug=slug).first()
        if comparison is None:
            raise NotFound(f"no comparison {slug!r}")
        return Response(ComparisonSerializer(as_json(comparison)).data)

    @extend_schema(request=ComparisonSpecSerializer, examples=[SPEC_EXAMPLE],
                   responses={201: ComparisonCreatedSerializer})
    def create(self, request):
        spec = parse_spec(ComparisonSpecSerializer(data=request.data).validated())
        comparison = comparison_create(spec=spec, author=request.user)
        body = {"slug": comparison.slug,
                "url": request.build_absolute_uri(comparison.get_absolute_url())}
        return Response(ComparisonCreatedSerializer(body).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=ComparisonSpecSerializer, examples=[SPEC_EXAMPLE],
                   responses={200: ComparisonPreviewSerializer})
    @action(detail=False, methods=["post"], permission_classes=[AllowAny])
    def preview(self, request):
        """Compute without saving: what the builder page draws while you choose."""
        spec = parse_spec(ComparisonSpecSerializer(data=request.data).validated())
        return Response(ComparisonPreviewSerializer(compute(spec)).data)

    @extend_schema(request=ComparisonSpecSerializer, examples=[SPEC_EXAMPLE],
                   responses={200: ComparisonChoicesSerializer})
    # Named `choices`: a method called `options` would replace the viewset's HTTP OPTIONS
    # handler for every comparisons URL. The public path stays /api/v1/comparisons/options/.
    @action(detail=False, methods=["post"], permission_classes=[AllowAny], url_path="options",
            url_name="options")
    def choices(self, request):
        """For a selection of runs: the metrics and dimensions (with their values) on offer."""
        body = ComparisonSpecSerializer(data=request.data).validated()
        spec = parse_spec({**body, "x": "kernel", "series": None, "facet": None,
                           "baseline": None})
        runs = resolve_runs(spec)
        metrics = sorted(set(MetricSummary.objects.filter(run__in=runs)
                             .values_list("metric__name", flat=True)))
        dims = dimensions.available(runs)
        values, raw = {}, {}
        for dim in dims:
            found = {dimensions.label(dimensions.value_of(run, dim)):
                     dimensions.value_of(run, dim) for run in runs}
            ordered = sorted(found.values(), key=lambda v, d=dim: dimensions.sort_key(d, v))
            values[dim] = [dimensions.label(v) for v in ordered]
            raw[dim] = ordered
        useful = [d for d in dims if len(values[d]) > 1] or ["kernel"]
        return Response(ComparisonChoicesSerializer({
            "runs": len(runs), "metrics": metrics, "dimensions": dims, "varying": useful,
            "suggested": dimensions.suggest_layout(useful, raw), "values": values}).data)

"""`/api/v1/regressions/`: list with filters, one finding, PATCH its status."""

from django.http import HttpResponsePermanentRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.permissions import IsAuthenticatedOrReadOnly
from rest_framework.response import Response

from benchmarks.api.jsonbody import DepthLimitedJSONParser
from benchmarks.api.requests import Choice, Integer, Number, RequestSerializer, Text
from benchmarks.api.serializers import ErrorSerializer, ResponseSerializer
from benchmarks.models import Benchmark

from . import selectors, services
from .models import FindingUpdate, Regression, Status


class FindingUpdateSerializer(serializers.ModelSerializer):
    class Meta:
        model = FindingUpdate
        fields = ["at", "event", "good", "bad", "change", "p_value", "n_good", "n_bad", "note"]
        read_only_fields = fields


class RegressionSerializer(serializers.ModelSerializer):
    benchmark = serializers.CharField(source="benchmark.slug")
    machine = serializers.CharField(source="machine.name")
    machine_id = serializers.IntegerField()
    metric = serializers.CharField(source="metric.name")
    good = serializers.CharField(source="good.version", help_text="last kernel before the change")
    bad = serializers.CharField(source="bad.version", help_text="first kernel after it")
    ci95 = serializers.SerializerMethodField(help_text="[low, high] of change, or null")
    runs_good = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    runs_bad = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    status_changed_by = serializers.CharField(source="status_changed_by.username",
                                              allow_null=True, default=None)
    url = serializers.SerializerMethodField()
    verdict = serializers.CharField(
        help_text="regression | improvement | needs repeats (too few values at the change)")
    seen = serializers.CharField(source="seen_text",
                                 help_text="current, or `not_since <kernel>` when the last "
                                           "detection pass no longer showed the change")
    history = FindingUpdateSerializer(many=True, read_only=True)
    comparison = serializers.SerializerMethodField(
        help_text="POST here to freeze the comparison that reproduces the verdict")

    class Meta:
        model = Regression
        fields = ["id", "kind", "verdict", "benchmark", "machine", "machine_id", "metric",
                  "policy", "params", "tunables", "good", "bad", "statistic", "change", "ci95",
                  "p_value", "effect_size", "test", "n_good", "n_bad", "needs_repeats",
                  "runs_good", "runs_bad", "inputs", "seen", "status", "status_changed_by",
                  "status_changed_at", "created", "updated", "history", "url", "comparison"]
        read_only_fields = fields

    def get_ci95(self, obj) -> list[float] | None:
        if obj.ci95_low is None or obj.ci95_high is None:
            return None
        return [obj.ci95_low, obj.ci95_high]

    def get_url(self, obj) -> str:
        return self._absolute(obj.get_absolute_url())

    def get_comparison(self, obj) -> str:
        return self._absolute(reverse("regression-compare", args=[obj.pk]))

    def _absolute(self, url: str) -> str:
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request else url


class ThresholdsSerializer(RequestSerializer):
    min_change = Number(required=False, min_value=0, max_value=10)
    alpha = Number(required=False, min_value=1e-12, max_value=0.5)
    min_effect = Number(required=False, min_value=0, max_value=1)
    min_repeats = Integer(required=False, min_value=2, max_value=1000)
    verdict_alpha = Number(required=False, min_value=1e-12, max_value=0.5)
    owner = Text(required=False, max_length=150,
                 help_text="username who may change these (staff only); null: nobody but staff")


class ThresholdValuesSerializer(ResponseSerializer):
    min_change = serializers.FloatField()
    alpha = serializers.FloatField()
    min_effect = serializers.FloatField()
    min_repeats = serializers.IntegerField()
    verdict_alpha = serializers.FloatField()
    source = serializers.CharField(help_text="benchmark (set for it) or default")


class ThresholdsAnswerSerializer(ThresholdValuesSerializer):
    """The thresholds that apply to a benchmark, who may change them, and the defaults."""

    benchmark = serializers.CharField()
    owner = serializers.CharField(allow_null=True)
    defaults = ThresholdValuesSerializer()


class StatusRequestSerializer(RequestSerializer):
    status = Choice(Status.values)


LIST_FILTERS = [
    OpenApiParameter("benchmark", str, description="benchmark slug or name"),
    OpenApiParameter("machine", str, description="machine name or id"),
    OpenApiParameter("metric", str, description="metric name, e.g. time_ms"),
    OpenApiParameter("status", str, enum=[*Status.values, "all"],
                     description="default: every status"),
    OpenApiParameter("from", str, description="oldest good kernel (natural order)"),
    OpenApiParameter("to", str, description="newest bad kernel (natural order)"),
]


class RegressionViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin,
                        viewsets.GenericViewSet):
    """Findings of the regression detector, newest first."""

    serializer_class = RegressionSerializer
    permission_classes = [IsAuthenticatedOrReadOnly]
    parser_classes = [DepthLimitedJSONParser]
    http_method_names = ["get", "patch", "head", "options"]
    lookup_value_regex = "[0-9]{1,18}"  # anything else is a 404, never a database error

    def get_queryset(self):
        if self.action == "list":
            filters = selectors.RegressionFilters.from_query(self.request.query_params)
            return selectors.regressions_list(filters)
        return selectors.regressions_list(selectors.RegressionFilters(), merged=True)

    def retrieve(self, request, *args, **kwargs):
        """A finding merged into another answers with a permanent redirect to that one."""
        finding = self.get_object()
        if finding.merged_into_id:
            target = selectors.merge_target(finding)
            return HttpResponsePermanentRedirect(
                reverse("api-regression-detail", args=[target.pk]))
        return Response(self.get_serializer(finding).data)

    @extend_schema(request=ThresholdsSerializer, responses={
        200: OpenApiResponse(ThresholdsAnswerSerializer,
                             description="the thresholds that apply to the benchmark"),
        400: ErrorSerializer, 403: ErrorSerializer, 404: ErrorSerializer})
    @action(detail=False, methods=["get", "patch"],
            url_path=r"thresholds/(?P<slug>[-a-zA-Z0-9_]{1,100})")
    def thresholds(self, request, slug=None):
        """GET a benchmark's detection thresholds; PATCH them (its owner or staff)."""
        benchmark = Benchmark.objects.filter(slug=slug).first()
        if benchmark is None:
            raise NotFound(f"no benchmark {slug!r}")
        if request.method == "PATCH":
            if not services.may_set_thresholds(request.user, benchmark):
                raise PermissionDenied("only the benchmark's owner or staff may change its "
                                       "thresholds")
            values = ThresholdsSerializer(data=request.data).validated()
            services.thresholds_set(benchmark=benchmark, user=request.user, values=values)
        return Response(ThresholdsAnswerSerializer(services.thresholds_answer(benchmark)).data)

    @extend_schema(parameters=LIST_FILTERS)
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(request=StatusRequestSerializer, responses={
        200: RegressionSerializer, 400: ErrorSerializer,
        403: OpenApiResponse(ErrorSerializer, description="not the runs' owner nor staff"),
        404: ErrorSerializer})
    def partial_update(self, request, pk=None):
        regression = get_object_or_404(Regression.objects.live(), pk=pk)
        status = StatusRequestSerializer(data=request.data).validated()["status"]
        if not services.may_set_status(request.user, regression, status):
            raise PermissionDenied("only the owner of the finding's runs or staff may mark it "
                                   "invalid")
        services.regression_status_set(regression=regression, user=request.user, status=status)
        fresh = self.get_queryset().get(pk=regression.pk)
        return Response(RegressionSerializer(fresh, context={"request": request}).data)

"""`/api/v1/regressions/`: list with filters, one finding, PATCH its status."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticatedOrReadOnly
from rest_framework.response import Response

from benchmarks.api.serializers import ErrorSerializer, ServiceValidatedSerializer

from . import selectors, services
from .models import Regression, Status


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

    class Meta:
        model = Regression
        fields = ["id", "kind", "benchmark", "machine", "machine_id", "metric", "policy",
                  "params", "tunables", "good", "bad", "statistic", "change", "ci95", "p_value",
                  "effect_size", "n_good", "n_bad", "needs_repeats", "runs_good", "runs_bad",
                  "status", "status_changed_by", "status_changed_at", "created", "url"]
        read_only_fields = fields

    def get_ci95(self, obj) -> list[float] | None:
        if obj.ci95_low is None or obj.ci95_high is None:
            return None
        return [obj.ci95_low, obj.ci95_high]

    def get_url(self, obj) -> str:
        request = self.context.get("request")
        url = obj.get_absolute_url()
        return request.build_absolute_uri(url) if request else url


class StatusRequestSerializer(ServiceValidatedSerializer):
    status = serializers.ChoiceField(choices=Status.choices)


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
    parser_classes = [JSONParser]
    http_method_names = ["get", "patch", "head", "options"]
    lookup_value_regex = "[0-9]{1,18}"  # anything else is a 404, never a database error

    def get_queryset(self):
        if self.action == "list":
            filters = selectors.RegressionFilters.from_query(self.request.query_params)
            return selectors.regressions_list(filters)
        return selectors.regressions_list(selectors.RegressionFilters())

    @extend_schema(parameters=LIST_FILTERS)
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(request=StatusRequestSerializer, responses={
        200: RegressionSerializer, 400: ErrorSerializer,
        403: OpenApiResponse(ErrorSerializer, description="not the runs' owner nor staff"),
        404: ErrorSerializer})
    def partial_update(self, request, pk=None):
        regression = get_object_or_404(Regression, pk=pk)
        status = services.status_checked(StatusRequestSerializer(data=request.data).validated())
        if not services.may_set_status(request.user, regression, status):
            raise PermissionDenied("only the owner of the finding's runs or staff may mark it "
                                   "invalid")
        services.regression_status_set(regression=regression, user=request.user, status=status)
        fresh = self.get_queryset().get(pk=regression.pk)
        return Response(RegressionSerializer(fresh, context={"request": request}).data)

"""REST API v1 for bisections (docs/bisect.md). Parse, authorise, one call, respond."""

import statistics

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from benchmarks.api.requests import (
    Choice,
    Integer,
    NamedErrors,
    Object,
    RequestSerializer,
    Text,
)
from benchmarks.api.serializers import JSONObjectField, ResponseSerializer

from . import selectors, services
from .models import Bisection

VERDICTS = ["good", "bad", "unknown"]


@extend_schema_field({"oneOf": [
    {"type": "integer", "minimum": 0},
    {"type": "string", "description": "git's line: 'Bisecting: 675 revisions left to test "
     "after this (roughly 10 steps)'"}]})
class EstimateField(NamedErrors, serializers.JSONField):
    """A number, or the line `git bisect` printed (the service reads the number from it)."""

    default_error_messages = {"invalid_kind": "{name} must be a number or git's 'Bisecting: "
                              "...' line"}

    def __init__(self, **kwargs):
        super().__init__(required=False, allow_null=True, **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (int, str)):
            self.fail("invalid_kind")
        return data


class BisectionCreateSerializer(RequestSerializer):
    good = Text(required=False, max_length=200, help_text="good (older) kernel or commit")
    bad = Text(required=False, max_length=200, help_text="bad (newer) kernel or commit")
    regression = Integer(required=False, min_value=1, help_text="a finding's id: its "
                         "kernels, benchmark, machine, params and metric")
    log = Text(required=False, max_length=1_000_000, help_text="`git bisect log` output to "
               "continue")
    benchmark = Text(required=False, max_length=200)
    machine = Text(required=False, max_length=200, help_text="name or id")
    metric = Text(required=False, max_length=200, help_text="default: time_ms, else the "
                  "first metric of the first run that joins")
    params = Object(required=False)
    steps_left = EstimateField()
    revisions_left = EstimateField()


class BisectionUpdateSerializer(RequestSerializer):
    first_bad = Text(required=False, max_length=1000, help_text="ends the session; git's "
                     "'<sha> is the first bad commit' line is fine")
    first_bad_subject = Text(required=False, max_length=1000)
    steps_left = EstimateField()
    revisions_left = EstimateField()


class StepMarkSerializer(RequestSerializer):
    commit = Text(max_length=200, help_text="the commit git checked out")
    verdict = Choice(["good", "bad", "skip", ""], required=False, help_text="mark by hand; "
                     "empty or null: judge from the runs")
    kernel = Text(required=False, max_length=200)
    subject = Text(required=False, max_length=1000)


class SideSerializer(ResponseSerializer):
    kernel = serializers.CharField(help_text="as given: a kernel version or a commit")
    commit = serializers.CharField(help_text="what git calls it: a commit id or a tag")
    subject = serializers.CharField(allow_blank=True)
    runs = serializers.ListField(child=serializers.IntegerField())
    n = serializers.IntegerField()
    median = serializers.FloatField(allow_null=True)


class StepSerializer(ResponseSerializer):
    position = serializers.IntegerField()
    commit = serializers.CharField()
    kernel = serializers.CharField(allow_blank=True)
    subject = serializers.CharField(allow_blank=True)
    dirty = serializers.BooleanField()
    verdict = serializers.ChoiceField(VERDICTS)
    reason = serializers.CharField(help_text="why: the test, or who marked it")
    marked = serializers.CharField(allow_blank=True, help_text="log or user when marked "
                                   "by hand; empty when judged from the runs")
    skipped = serializers.BooleanField()
    runs = serializers.ListField(child=serializers.IntegerField())
    n = serializers.IntegerField()
    median = serializers.FloatField(allow_null=True)
    p_good = serializers.FloatField(allow_null=True)
    p_bad = serializers.FloatField(allow_null=True)
    test = serializers.CharField(allow_null=True)


class BisectionSerializer(ResponseSerializer):
    id = serializers.IntegerField()
    url = serializers.URLField()
    page = serializers.URLField()
    log_url = serializers.URLField(help_text="the session as a `git bisect log`")
    owner = serializers.CharField()
    good = SideSerializer()
    bad = SideSerializer()
    benchmark = serializers.CharField(allow_null=True)
    machine = serializers.CharField(allow_null=True)
    metric = serializers.CharField(allow_null=True)
    params = JSONObjectField()
    regression = serializers.IntegerField(allow_null=True)
    steps = StepSerializer(many=True)
    next = serializers.CharField(allow_null=True, help_text="the `git bisect good|bad <commit>` "
                                 "line to type now; null when there is nothing to type")
    next_hint = serializers.CharField(allow_blank=True)
    steps_left = serializers.IntegerField(allow_null=True)
    revisions_left = serializers.IntegerField(allow_null=True)
    first_bad = serializers.CharField(allow_null=True)
    first_bad_subject = serializers.CharField(allow_blank=True)
    suggested_first_bad = serializers.CharField(
        allow_null=True, help_text="no steps left by git's rough estimate: the first bad commit "
        "the decided steps imply; PATCH it as first_bad to end (the session ends by itself "
        "when git said 0 revisions were left)")
    ended = serializers.DateTimeField(allow_null=True)
    created = serializers.DateTimeField()


class BisectionListItemSerializer(ResponseSerializer):
    id = serializers.IntegerField()
    url = serializers.URLField()
    good = serializers.CharField()
    bad = serializers.CharField()
    benchmark = serializers.CharField(allow_null=True)
    first_bad = serializers.CharField(allow_null=True)
    regression = serializers.IntegerField(allow_null=True)
    owner = serializers.CharField()
    created = serializers.DateTimeField()


class BisectionListSerializer(ResponseSerializer):
    results = BisectionListItemSerializer(many=True)


def _median(values: list[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def bisection_json(request, state: selectors.BisectionState) -> dict:
    bisection = state.bisection
    absolute = request.build_absolute_uri
    return {
        "id": bisection.pk,
        "url": absolute(reverse("api-bisection-detail", args=[bisection.pk])),
        "page": absolute(bisection.get_absolute_url()),
        "log_url": absolute(reverse("bisect-log", args=[bisection.pk])),
        "owner": bisection.owner.get_username(),
        "good": _side_json(state.good), "bad": _side_json(state.bad),
        "benchmark": bisection.benchmark.slug if bisection.benchmark else None,
        "machine": bisection.machine.name if bisection.machine else None,
        "metric": bisection.metric.name if bisection.metric else None,
        "params": bisection.params,
        "regression": getattr(bisection, "regression_id", None),
        "steps": [_step_json(s) for s in state.steps],
        "next": state.next, "next_hint": state.next_hint,
        "steps_left": state.steps_left, "revisions_left": bisection.revisions_left,
        "first_bad": bisection.first_bad or None,
        "first_bad_subject": bisection.first_bad_subject,
        "suggested_first_bad": state.conclusion or None,
        "ended": bisection.ended, "created": bisection.created,
    }


def _side_json(side: selectors.SideState) -> dict:
    values = side.values.tolist()
    return {"kernel": side.kernel, "commit": side.ref, "subject": side.subject,
            "runs": [r.pk for r in side.runs], "n": len(values), "median": _median(values)}


def _step_json(state: selectors.StepState) -> dict:
    step, verdict, values = state.step, state.verdict, state.values.tolist()
    return {"position": step.position, "commit": step.commit, "kernel": step.kernel,
            "subject": step.subject, "dirty": step.dirty, "verdict": verdict.verdict,
            "reason": verdict.reason, "marked": step.mark_source if state.marked else "",
            "skipped": state.skipped, "runs": [r.pk for r in state.runs], "n": len(values),
            "median": _median(values), "p_good": verdict.p_good, "p_bad": verdict.p_bad,
            "test": verdict.test}


def _respond(request, bisection: Bisection, code=status.HTTP_200_OK) -> Response:
    state = selectors.bisection_state(selectors.bisection_get(bisection.pk))
    return Response(BisectionSerializer(bisection_json(request, state)).data, status=code)


@extend_schema(methods=["POST"], request=BisectionCreateSerializer,
               responses={201: BisectionSerializer}, examples=[
                   OpenApiExample("two kernels", request_only=True, value={
                       "good": "2.6.22", "bad": "2.6.24", "benchmark": "threadtest",
                       "machine": "core2-laptop", "params": {"loops": 1000000}})])
@extend_schema(methods=["GET"], operation_id="v1_bisections_list",
               responses=BisectionListSerializer, parameters=[
                   OpenApiParameter("regression", int, description="sessions of this finding"),
                   OpenApiParameter("ended", bool, description="true: ended; false: running")])
@api_view(["GET", "POST"])
def bisections(request):
    """POST starts a session (201 with its state); GET lists the newest sessions."""
    if request.method == "GET":
        rows = selectors.bisections_listed(regression=request.query_params.get("regression"),
                                           ended=request.query_params.get("ended"))[:50]
        return Response(BisectionListSerializer({"results": [{
            "id": b.pk, "url": request.build_absolute_uri(b.get_absolute_url()),
            "good": b.good, "bad": b.bad, "first_bad": b.first_bad or None,
            "regression": b.regression_id,
            "benchmark": b.benchmark.slug if b.benchmark else None,
            "owner": b.owner.get_username(), "created": b.created} for b in rows]}).data)
    body = BisectionCreateSerializer(data=request.data).validated()
    bisection = services.bisection_create(owner=request.user, **body)
    return _respond(request, bisection, status.HTTP_201_CREATED)


@extend_schema(methods=["GET"], responses=BisectionSerializer)
@extend_schema(methods=["PATCH"], request=BisectionUpdateSerializer,
               responses=BisectionSerializer)
@api_view(["GET", "PATCH"])
def bisection_detail(request, pk: int):
    """The steps with their verdicts, the line to type, steps left, the first bad commit.
    PATCH gives git's estimate of what is left, or ends the session with `first_bad`."""
    bisection = get_object_or_404(Bisection, pk=pk)
    if request.method == "PATCH":
        body = BisectionUpdateSerializer(data=request.data).validated()
        bisection = services.bisection_update(bisection=bisection, user=request.user, **body)
    return _respond(request, bisection)


@extend_schema(request=StepMarkSerializer, responses={200: BisectionSerializer})
@api_view(["POST"])
def bisection_steps(request, pk: int):
    """Add the commit git checked out as a step, or mark a step good, bad or skip by hand."""
    bisection = get_object_or_404(Bisection, pk=pk)
    body = StepMarkSerializer(data=request.data).validated()
    services.bisect_step_mark(bisection=bisection, user=request.user, **body)
    return _respond(request, bisection)

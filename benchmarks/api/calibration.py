"""Machine calibrations over the API: what `schedbench.py calibrate` submits.

`POST /api/v1/machines/{id}/calibration/` calibrates a machine by id (docs/calibration.md);
`POST /api/v1/machines/calibration/` finds or creates the machine from its description first,
because the harness knows its machine only by what it reads off the box.
`GET` on the first returns the machine's newest calibration.
"""

import json
import math

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import api_view, parser_classes
from rest_framework.response import Response

from benchmarks.api.jsonbody import DepthLimitedJSONParser
from benchmarks.api.requests import RequestSerializer, Text
from benchmarks.api.serializers import MachineSerializer
from benchmarks.models import Machine, MachineCalibration
from benchmarks.selectors import calibration_latest
from benchmarks.services.calibrations import calibration_create, calibration_create_for_spec
from benchmarks.services.catalog import CatalogError, identifier_check, machine_fingerprint
from simulator import SimulatorError
from simulator.machine import MachineModel

MAX_COST = 1e7  # the simulator's own bound on a calibrated cost
MAX_DETAILS_BYTES = 64 * 1024


class CostField(serializers.FloatField):
    """A JSON number, finite, 0..1e7: no strings, booleans, NaN or infinities."""

    default_error_messages = {
        "number": "must be a JSON number, not {kind}",
        "finite": "must be a finite number",
    }

    def __init__(self, **kwargs):
        super().__init__(min_value=0, max_value=MAX_COST, **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("number", kind=type(data).__name__)
        if not math.isfinite(data):
            self.fail("finite")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    default_error_messages = {"strict": "must be true or false"}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("strict")
        return data


class CalibrationValuesSerializer(RequestSerializer):
    """The `calibration` object; the fields of the simulator's MachineModel."""

    loop_ns = CostField(help_text="one iteration of the counting loop, counter in a register")
    # no default: a calibration made before the harness reported it stays without it
    loop_memory_ns = CostField(allow_null=True, required=False,
                               help_text="the same loop with its counter in memory (-O0)")
    thread_create_join_us = CostField(help_text="pthread_create + join of an empty thread")
    wakeup_remote_us = CostField(allow_null=True, required=False, default=None,
                                 help_text="pipe ping-pong between two pinned CPUs, one way")
    wakeup_local_us = CostField(help_text="pipe ping-pong on one CPU, one way")
    context_switch_us = CostField(help_text="sched_yield() switch between threads on one CPU")
    virtualised = StrictBooleanField()
    idle_exit_us = CostField(allow_null=True, required=False, default=None)
    ipi_us = CostField(allow_null=True, required=False, default=None)
    vcpu_wake_us = CostField(allow_null=True, required=False, default=None)
    # no default: a calibration made before calibrate swept for it stays without it
    halt_poll_us = CostField(allow_null=True, required=False,
                             help_text="the host's halt-polling window (a guest's idle-span "
                             "sweep); null: not measured, the simulator keeps KVM's 200 us")
    contention = CostField(allow_null=True, required=False, default=None,
                           help_text="slowdown of a busy CPU per other busy core")
    noisy = StrictBooleanField(required=False, help_text="calibrate found the machine busy or "
                               "its figures spread widely (docs/calibration.md)")

    def unknown_message(self, unknown: list[str]) -> str:
        return f"unknown calibration field; known: {', '.join(self.fields)}"

    def validate_loop_ns(self, value):
        if value <= 0:
            raise serializers.ValidationError("must be above 0")
        return value

    def validate_loop_memory_ns(self, value):
        if value is not None and value <= 0:
            raise serializers.ValidationError("must be above 0")
        return value

    def validate(self, attrs):
        try:  # the simulator is the consumer: store nothing it would refuse
            MachineModel.from_calibration(attrs)
        except SimulatorError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return attrs


class CalibrationSubmissionSerializer(RequestSerializer):
    """Request body: the JSON `schedbench.py calibrate --dry-run` prints."""

    machine = serializers.JSONField(required=False, help_text="the machine as the harness "
                                    "records it for runs; required without an id in the path")
    kernel = Text(max_length=200)
    measured_at = serializers.DateTimeField()
    calibration = CalibrationValuesSerializer()
    details = serializers.JSONField(required=False, default=dict)

    def validate_machine(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError("must be an object (the harness's machine)")
        try:
            machine_fingerprint(value)
        except CatalogError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return value

    def validate_kernel(self, value):
        # The same rule as every other kernel string: no control or bidi-override characters.
        try:
            return identifier_check(value.strip(), field="kernel")
        except CatalogError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def validate_details(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError("must be an object")
        if len(json.dumps(value)) > MAX_DETAILS_BYTES:
            raise serializers.ValidationError(f"larger than {MAX_DETAILS_BYTES} bytes")
        _check_quality_reasons(value.get("quality"))
        return value


MAX_REASONS, MAX_REASON_CHARS = 20, 300


def _check_quality_reasons(quality) -> None:
    """details.quality.reasons is shown on the machine page: strings only, a few, short."""
    if quality is None:
        return
    reasons = quality.get("reasons", []) if isinstance(quality, dict) else None
    if not isinstance(reasons, list) or len(reasons) > MAX_REASONS or not all(
            isinstance(r, str) and 0 < len(r) <= MAX_REASON_CHARS for r in reasons):
        raise serializers.ValidationError(
            f"quality.reasons must be a list of at most {MAX_REASONS} strings of 1 to "
            f"{MAX_REASON_CHARS} characters")


class CalibrationSerializer(serializers.ModelSerializer):
    """Response body: one stored calibration, in the shape `calibrate` sends, so it can be
    saved and given to `python -m simulator run --machine FILE` as it is."""

    machine = MachineSerializer()
    url = serializers.SerializerMethodField()
    calibration = serializers.JSONField(source="values")
    submitter = serializers.SerializerMethodField()

    class Meta:
        model = MachineCalibration
        fields = ["id", "machine", "url", "kernel", "measured_at",
                  "calibration", "details", "submitter", "created"]

    def get_url(self, calibration) -> str:
        """The machine's page."""
        path = calibration.machine.get_absolute_url()
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else path

    def get_submitter(self, calibration) -> str | None:
        return calibration.submitter.get_username() if calibration.submitter else None


def _stored(request, calibration, code=status.HTTP_201_CREATED) -> Response:
    return Response(CalibrationSerializer(calibration, context={"request": request}).data,
                    status=code)


EMPTY_BODY = ("the body is empty: a calibration is the JSON `schedbench.py calibrate --dry-run` "
              "prints, and a calibration that calibrate refused (exit status 4) writes nothing; "
              "calibrate again on a quiet machine or pass --accept-noisy")


# a body this short is read before parsing to see whether it is only whitespace
BLANK_BODY_PEEK_BYTES = 64


def _body_is_blank(request) -> bool:
    """True for no body or one of whitespace only (`echo > cal.json` after a refusal, a
    trailing newline from a shell): the JSON parser would call that a parse error."""
    length = request.META.get("CONTENT_LENGTH") or "0"
    if not length.isdigit() or int(length) > BLANK_BODY_PEEK_BYTES:
        return False
    return not request.body.strip()


def _submission(request) -> CalibrationSubmissionSerializer:
    """The validated body; an empty one (what `calibrate --dry-run > file` leaves when it
    refuses) is a 400 that says so rather than a list of missing fields."""
    if _body_is_blank(request):
        raise exceptions.ParseError(EMPTY_BODY)
    body = CalibrationSubmissionSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    return body


def _fields(data: dict) -> dict:
    return {"kernel": data["kernel"], "measured_at": data["measured_at"],
            "values": dict(data["calibration"]), "details": data.get("details") or {}}


def _authorised(call):
    try:
        return call()
    except PermissionDenied as exc:
        raise exceptions.PermissionDenied(str(exc)) from None


@extend_schema(methods=["GET"], responses={200: CalibrationSerializer},
               operation_id="v1_machines_calibration_retrieve")
@extend_schema(methods=["POST"], request=CalibrationSubmissionSerializer,
               responses={201: CalibrationSerializer},
               operation_id="v1_machines_calibration_create")
@api_view(["GET", "POST"])
@parser_classes([DepthLimitedJSONParser])
def machine_calibration(request, pk: int):
    """GET: the machine's newest calibration (404 when it has none). POST: calibrate it."""
    machine = get_object_or_404(Machine, pk=pk)
    if request.method == "GET":
        calibration = calibration_latest(machine)
        if calibration is None:
            raise exceptions.NotFound(f"machine {pk} has no calibration")
        return _stored(request, calibration, status.HTTP_200_OK)
    body = _submission(request)
    given = body.validated_data.get("machine")
    if given is not None and machine_fingerprint(given) != machine.fingerprint:
        raise serializers.ValidationError(
            {"machine": [f"describes another machine than machine {pk} ({machine.name}); post "
                         "to /api/v1/machines/calibration/ to calibrate it by description"]})
    calibration = _authorised(lambda: calibration_create(
        machine=machine, submitter=request.user, **_fields(body.validated_data)))
    return _stored(request, calibration)


@extend_schema(request=CalibrationSubmissionSerializer, responses={201: CalibrationSerializer},
               operation_id="v1_machines_calibration_by_description_create")
@api_view(["POST"])
@parser_classes([DepthLimitedJSONParser])
def calibration_by_description(request):
    """Calibrate the machine the body's `machine` describes (found or created by fingerprint)."""
    body = _submission(request)
    if body.validated_data.get("machine") is None:
        raise serializers.ValidationError({"machine": ["This field is required."]})
    calibration = _authorised(lambda: calibration_create_for_spec(
        machine_spec=body.validated_data["machine"], submitter=request.user,
        **_fields(body.validated_data)))
    return _stored(request, calibration)

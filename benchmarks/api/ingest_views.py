"""Write endpoints: uploads, single runs, bulk runs. Parse, authorise, one service call, respond."""

from django.core.exceptions import RequestDataTooBig
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import status
from rest_framework.decorators import api_view, parser_classes, permission_classes
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from benchmarks.api.errors import validation_problem
from benchmarks.api.jsonbody import DepthLimitedJSONParser, strict_loads
from benchmarks.api.serializers import (
    RunCreatedSerializer,
    RunCreateRequestSerializer,
    RunsCreatedSerializer,
    UploadResultSerializer,
)
from benchmarks.api.uploads import (
    UploadFormSerializer,
    UploadJSONSerializer,
    UploadMultipartSerializer,
    UploadTooLarge,
    close_quietly,
    max_bytes,
    read_upload,
    upload_serializer,
)
from benchmarks.errors import InputError, TooLarge
from benchmarks.hooks import RunClaims, run_claims, verdicts_for
from benchmarks.models import Run, RunSource
from benchmarks.selectors import upload_machine_note
from benchmarks.services.ingest import upload_ingest
from benchmarks.services.submissions import SubmissionError, run_submit, runs_bulk_submit

PREVIEW_VALUES = 10_000


def _api_url(request, run) -> str:
    return request.build_absolute_uri(reverse("api-run-detail", args=[run.pk]))


def _run_body(request, preview: dict, run) -> dict:
    metrics = {}
    for name, metric in preview["metrics"].items():
        values = metric["values"]
        metrics[name] = {"unit": metric["unit"], "n": len(values),
                         "values": list(values[:PREVIEW_VALUES])}
        if metric.get("summary"):  # a published statistic: no samples (models.PublishedSummary)
            metrics[name]["summary"] = {k: v for k, v in metric["summary"].items() if k != "line"}
        if len(values) > PREVIEW_VALUES:
            metrics[name]["values_truncated"] = True
    return {
        "id": run.pk if run else None,
        "url": request.build_absolute_uri(run.get_absolute_url()) if run else None,
        "api_url": _api_url(request, run) if run else None,
        **{key: preview[key] for key in ("benchmark", "kernel", "machine", "policy", "params",
                                         "tunables", "line", "label", "commit")},
        # Where the values came from and whether the parser was sure (see services/ingest.py).
        **{key: preview[key] for key in ("lines", "kernel_line", "source", "source_key",
                                         "missing", "unassigned")},
        "series": sorted(preview["series"]),
        "metrics": metrics,
    }


def _replayed_body(request, outcome) -> dict:
    return {
        "artifact": outcome.artifact.pk,
        "format": outcome.format,
        "runs": [{"id": run.pk, "url": request.build_absolute_uri(run.get_absolute_url())}
                 for run in outcome.runs],
        "warnings": [],
        "replayed": True,
        "verdicts": verdicts_for(outcome.runs),
    }


def _read_form(request) -> dict:
    """The body checked by the serializer of its media type (uploads.upload_serializer)."""
    try:
        data = request.data
    except RequestDataTooBig:
        raise UploadTooLarge(f"the request is larger than {max_bytes() // 2**20} MB") from None
    return upload_serializer(request)(data=data).validated()


@extend_schema(
    # One request component per media type: a generated client sends the one it was given.
    request={"application/json": UploadJSONSerializer,
             "multipart/form-data": UploadMultipartSerializer,
             "application/x-www-form-urlencoded": UploadFormSerializer},
    responses={201: UploadResultSerializer, 200: UploadResultSerializer},
    description="Upload raw benchmark output (file or text). The raw bytes are kept, the best "
    "parser (or `format`) turns them into runs. `dry_run` previews without writing (200); an "
    "`idempotency_key` seen before answers 200 with the first upload's runs.",
    examples=[OpenApiExample("pasted threadtest output", request_only=True, value={
        "text": "time 10765 ms\ntime 10801 ms\n", "benchmark": "threadtest",
        "kernel": "2.6.24", "machine": "core2-duo-laptop", "dry_run": True})],
)
@api_view(["POST"])
@permission_classes([IsAuthenticated])
@parser_classes([DepthLimitedJSONParser, MultiPartParser, FormParser])
def upload_create(request):
    clean = _read_form(request)
    claims = run_claims(fields=clean, user=request.user)
    upload = read_upload(clean)
    try:
        outcome = upload_ingest(
            stream=upload.stream, filename=upload.filename, metadata=upload.metadata,
            source=RunSource.UPLOAD if request.auth is None else RunSource.API,
            submitter=request.user, format=upload.format, dry_run=upload.dry_run,
            idempotency_key=upload.idempotency_key,
            after_store=claims.join,
        )
    finally:
        close_quietly(upload.stream)
    if outcome.replayed:
        body = UploadResultSerializer(_with_answers(
            request, _replayed_body(request, outcome), claims, outcome.runs)).data
        return Response(body, status=status.HTTP_200_OK)
    runs = outcome.runs or [None] * len(outcome.previews)
    body = {
        "artifact": outcome.artifact.pk if outcome.artifact else None,
        "format": outcome.format,
        "parser_version": outcome.parser_version,
        "dry_run": upload.dry_run,
        "runs": [_run_body(request, p, run) for p, run in zip(outcome.previews, runs, strict=True)],
        "warnings": outcome.warnings,
        "verdicts": verdicts_for(outcome.runs or []),
    }
    if upload.dry_run:  # the preview says where runs without a machine go
        given = upload.metadata.machine
        named = given if isinstance(given, str) else (given or {}).get("name") or None
        body["machine"] = upload_machine_note(user=request.user, named=named)
    body = _with_answers(request, body, claims, outcome.runs)
    return Response(UploadResultSerializer(body).data,
                    status=status.HTTP_200_OK if upload.dry_run else status.HTTP_201_CREATED)


RUN_CREATE_SCHEMA = extend_schema(
    request=RunCreateRequestSerializer,
    responses={201: RunCreatedSerializer, 200: RunCreatedSerializer},
    description="One run with every sample. The same `idempotency_key` again answers 200 with "
    "the first run.",
    examples=[OpenApiExample("threadtest", request_only=True, value={
        "benchmark": "threadtest", "kernel": "2.6.24", "machine": "core2-duo-laptop",
        "params": {"loops": 1000000, "iterations": 500}, "metrics": {"time_ms": [10765, 10801]},
        "idempotency_key": "b1946ac9",
    })],
)


def _with_answers(request, body: dict, claims: RunClaims, runs) -> dict:
    """What the runs joined says about them (bisection: the step's verdict so far and the
    line to type), with its page as an absolute URL."""
    for key, answer in (claims.answers(runs[0]) if runs else {}).items():
        page = answer.get("page")
        body[key] = {**answer, **({"page": request.build_absolute_uri(page)} if page else {})}
    return body


def run_create_response(request):
    payload = RunCreateRequestSerializer(data=request.data).validated()
    claims = run_claims(fields=payload, user=request.user)
    run, created = run_submit(payload=payload, submitter=request.user, claims=claims)
    body = _with_answers(request, {
        "id": run.pk, "api_url": _api_url(request, run),
        "url": request.build_absolute_uri(run.get_absolute_url()),
        "verdicts": verdicts_for([run])}, claims, [run])
    body = RunCreatedSerializer(body)
    return Response(body.data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


def _checked(where: str, item, line: int | None = None):
    """One run of a bulk body through the single run's serializer; its first problem becomes
    the bulk answer, naming the item or line."""
    request = RunCreateRequestSerializer(data=item)
    if not request.is_valid():
        field, message = validation_problem(request.errors)
        raise SubmissionError(message, where=where, line=line, field=field)
    return dict(request.validated_data)


def _ndjson_items(stream):
    for number, raw in enumerate(stream, 1):
        line = raw.decode("utf-8", errors="replace").strip() if isinstance(raw, bytes) else raw
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            item = strict_loads(line, what="the line", line=number)
        except InputError as exc:
            raise SubmissionError(exc.message, where=where, line=number) from None
        yield where, _checked(where, item, number)


def _json_list_items(body: bytes):
    try:
        items = strict_loads(body, what="the body")
    except InputError as exc:
        raise SubmissionError(exc.message) from None
    if not isinstance(items, list):
        raise SubmissionError("body must be a JSON list of runs (or NDJSON, one run per line)")
    return ((f"item {index}", _checked(f"item {index}", item))
            for index, item in enumerate(items))


RUN_BULK_SCHEMA = extend_schema(
    request={"application/json": RunCreateRequestSerializer(many=True),
             "application/x-ndjson": OpenApiTypes.STR},
    responses={201: RunsCreatedSerializer},
    description="Many runs at once, all or nothing: a JSON list, or NDJSON streamed line by line.",
)


def run_bulk_response(request):
    raw = request._request
    is_ndjson = request.content_type.split(";")[0].strip() in (
        "application/x-ndjson", "application/jsonl", "application/json-seq")
    try:
        items = _ndjson_items(raw) if is_ndjson else _json_list_items(raw.body)
        ids = runs_bulk_submit(payloads=items, submitter=request.user)
    except RequestDataTooBig:
        raise TooLarge(f"the request is larger than {max_bytes() // 2**20} MB") from None
    if not ids:
        raise SubmissionError("no runs in the request")
    verdicts = verdicts_for([Run(pk=pk) for pk in ids])
    return Response(RunsCreatedSerializer({"ids": ids, "verdicts": verdicts}).data,
                    status=status.HTTP_201_CREATED)

"""The one exception handler: every API error is JSON `{"error", "field", "line", ...}`.

Services raise `benchmarks.errors.InputError` (or a subclass: 413 TooLarge, 429 RateLimited);
DRF's own exceptions (validation, authentication, permission, not found, throttling) get the
same shape. Other exception families (for example an unavailable database) are added to
`json_error_handler` as one more branch, so there stays one place that shapes errors.
"""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from rest_framework.response import Response
from rest_framework.views import exception_handler

from benchmarks.errors import InputError, TooLarge


def _path(key, inner: str | None) -> str:
    """`metrics.time_ms`, `tags[0]`: the places of a request body, as services write them."""
    step = f"[{key}]" if isinstance(key, int) else str(key)
    if not inner:
        return step
    return f"{step}{inner}" if inner.startswith("[") else f"{step}.{inner}"


def _first_error(detail) -> tuple[str | None, str]:
    """(field path, message) of the first problem in a DRF error detail."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            field, message = _first_error(value)
            if key in ("non_field_errors", "detail"):
                return field, message
            return _path(key, field), message
        return None, "invalid request"
    if isinstance(detail, list):
        return _first_error(detail[0]) if detail else (None, "invalid request")
    return None, str(detail)


def error_body(message: str, *, field: str | None = None, line: int | None = None,
               **extra) -> dict:
    return {"error": message, "field": field, "line": line, **extra}


def validation_problem(detail) -> tuple[str | None, str]:
    """(field path, sentence) of the first problem a serializer found."""
    field, message = _first_error(detail)
    if field is None:
        return None, message
    # Request fields word their messages with their key ("kernel must be a string",
    # benchmarks/api/requests.py): said once, with the whole path ("calibration.loop_ns ...").
    key = field.rsplit(".", 1)[-1]
    if message.startswith(f"{key} "):
        return field, f"{field}{message[len(key):]}"
    return field, f"{field}: {message}"


def _drf_error_body(detail) -> dict:
    if isinstance(detail, dict) and set(detail) == {"detail"}:
        return error_body(str(detail["detail"]))
    field, message = validation_problem(detail)
    body = error_body(message, field=field)
    if field is None:
        return body
    if isinstance(detail, dict):
        body["fields"] = detail
    return body


def json_error_handler(exc, context):
    if isinstance(exc, RequestDataTooBig):
        exc = TooLarge(f"the request is larger than {settings.MAX_UPLOAD_MB} MB")
    if isinstance(exc, InputError):
        return Response(exc.as_body(), status=exc.status)
    response = exception_handler(exc, context)
    if response is None:
        return None
    response.data = _drf_error_body(response.data)
    return response

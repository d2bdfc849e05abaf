"""Every API error is JSON: {"error": "...", ...} with a 4xx status."""

from rest_framework.views import exception_handler


def _first_message(detail) -> str:
    if isinstance(detail, dict):
        for key, value in detail.items():
            message = _first_message(value)
            return message if key in ("non_field_errors", "detail") else f"{key}: {message}"
        return "invalid request"
    if isinstance(detail, list):
        return _first_message(detail[0]) if detail else "invalid request"
    return str(detail)


def json_error_handler(exc, context):
    response = exception_handler(exc, context)
    if response is None:
        return None
    detail = response.data
    body = {"error": _first_message(detail)}
    if isinstance(detail, dict) and set(detail) - {"detail"}:
        body["fields"] = detail
    response.data = body
    return response

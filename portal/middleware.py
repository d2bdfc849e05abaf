"""Site-wide response policies: the Content-Security-Policy of pages, and honest answers while
the database is down (503 with Retry-After: JSON for the API, a short page for people)."""

import json
import logging
import sys
import tempfile

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.views import defaults

log = logging.getLogger(__name__)
OUTAGE_ERRORS = (OperationalError, InterfaceError)


class ContentSecurityPolicyMiddleware:
    """Django 5.2 has no CSP of its own; pages get settings.CONTENT_SECURITY_POLICY."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if (policy and "Content-Security-Policy" not in response
                and response.get("Content-Type", "").startswith("text/html")):
            response["Content-Security-Policy"] = policy
        return response


def api_error(message: str, status: int) -> JsonResponse:
    """The API's one error shape (benchmarks/api/errors.py) for answers made outside DRF."""
    return JsonResponse({"error": message, "field": None, "line": None}, status=status)


class RequestGuardMiddleware:
    """Answers two things no view should have to: a NUL byte in the path (no URL of the site
    holds one, and PostgreSQL refuses it in a query with a 500; NULs in query strings are each
    view's to answer, e.g. the run list's empty result that says why), and an /api/ path no
    route matches (the API's JSON 404, not the site's HTML page)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        api = request.path.startswith("/api/")
        if "\x00" in request.path:
            if api:
                return api_error("the path contains a NUL byte", 404)
            raise Http404("the path contains a NUL byte")
        response = self.get_response(request)
        if (api and response.status_code == 404
                and not response.get("Content-Type", "").startswith("application/json")):
            return api_error(f"no API endpoint at {request.path}", 404)
        return response


def wants_json(request) -> bool:
    return (request.path.startswith("/api/")
            or "application/json" in request.headers.get("Accept", ""))


def outage_response(request) -> HttpResponse:
    """503 that renders without the database (no user, no session, no query)."""
    retry = settings.OUTAGE_RETRY_AFTER
    if wants_json(request):
        # The API's one error shape (benchmarks/api/errors.py), plus when to come back.
        response = JsonResponse({"error": "the database is unavailable; try again in a moment",
                                 "field": None, "line": None, "retry_after": retry}, status=503)
    else:
        response = HttpResponse(render_to_string("503.html", {"retry_after": retry}),
                                status=503)
    response["Retry-After"] = str(retry)
    response["Cache-Control"] = "no-store"
    return response


class DatabaseOutageMiddleware:
    """A view that cannot reach the database answers 503 instead of a 500. Connections that
    failed are dropped by Django at the end of the request, so the next request after the
    database returns simply works: recovery needs nobody."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, OUTAGE_ERRORS):
            log.warning("database unavailable for %s %s: %s", request.method, request.path,
                        exception)
            return outage_response(request)
        return None


def server_error(request):
    """handler500: errors raised outside a view (a middleware reading the session) reach here;
    a database outage still gets the 503, anything else Django's plain 500 page."""
    if isinstance(sys.exc_info()[1], OUTAGE_ERRORS):
        return outage_response(request)
    return defaults.server_error(request)


class ChunkedBodyWSGI:
    """WSGI wrapper: a request sent with `Transfer-Encoding: chunked` and no Content-Length
    (curl -T -, streaming clients) is read, not taken as empty. Django sizes the body by
    Content-Length alone and reads nothing without one; gunicorn has already decoded the
    chunks and marks the stream `wsgi.input_terminated`, so the body is spooled (memory, then a
    temporary file) up to the largest upload limit and handed on with its length. A server
    that cannot give the decoded body (runserver) answers 411 instead of a silent empty upload.
    """

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if not chunked or environ.get("CONTENT_LENGTH"):
            return self.app(environ, start_response)
        if not environ.get("wsgi.input_terminated"):
            return _plain_error(start_response, 411, "a chunked request body is not supported "
                                "by this server; send Content-Length")
        return self._spooled(environ, start_response)

    def _spooled(self, environ, start_response):
        limit = max(settings.MAX_UPLOAD_MB, settings.TRACE_MAX_UPLOAD_MB) << 20
        with tempfile.SpooledTemporaryFile(settings.FILE_UPLOAD_MAX_MEMORY_SIZE) as body:
            size = 0
            while chunk := environ["wsgi.input"].read(1 << 16):
                size += len(chunk)
                if size > limit:
                    yield from _plain_error(start_response, 413,
                                            f"the request is larger than {limit >> 20} MB")
                    return
                body.write(chunk)
            body.seek(0)
            environ["wsgi.input"], environ["CONTENT_LENGTH"] = body, str(size)
            response = self.app(environ, start_response)
            try:
                yield from response
            finally:
                # what the server would have called on Django's response (request_finished)
                if hasattr(response, "close"):
                    response.close()


def _plain_error(start_response, status: int, message: str):
    """The API's error shape, written before Django (no request object exists yet)."""
    reason = {411: "Length Required", 413: "Payload Too Large"}[status]
    body = json.dumps({"error": message, "field": None, "line": None}).encode()
    start_response(f"{status} {reason}", [("Content-Type", "application/json"),
                                          ("Content-Length", str(len(body)))])
    return [body]

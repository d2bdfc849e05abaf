"""One error type, one exception handler, one JSON shape for every API error."""

import pytest

from benchmarks.api.uploads import UploadInvalid, UploadTooLarge
from benchmarks.comparisons.spec import SpecError
from benchmarks.errors import InputError, TooLarge
from benchmarks.errors import RateLimited as RateLimitedBase
from benchmarks.parsers.base import ParseError, UnknownFormat
from benchmarks.services.catalog import CatalogError
from benchmarks.services.ingest import IngestError
from benchmarks.services.runs import RunError
from benchmarks.services.submissions import SubmissionError
from discussions.services import DiscussionError, RateLimited
from discussions.targets import TargetError
from simulations.expansion import JobSpecError

ALL_INPUT_ERRORS = [
    UploadInvalid, UploadTooLarge, SpecError, DiscussionError, RateLimited, TargetError,
    ParseError, UnknownFormat, CatalogError, IngestError, RunError, SubmissionError, JobSpecError,
]


@pytest.mark.parametrize("error_class", ALL_INPUT_ERRORS)
def test_every_service_error_is_the_one_input_error(error_class):
    assert issubclass(error_class, InputError)


def test_statuses_of_the_error_families():
    assert UploadTooLarge("x").status == 413 and issubclass(UploadTooLarge, TooLarge)
    assert RateLimited("x").status == 429 and issubclass(RateLimited, RateLimitedBase)
    assert SpecError("runs", "bad").status == 400


def test_bodies_name_field_and_line():
    assert SubmissionError("not JSON", where="line 3", line=3).as_body() == {
        "error": "line 3: not JSON", "field": None, "line": 3}
    assert SpecError("metric", "unknown").as_body() == {
        "error": "metric: unknown", "field": "metric", "line": None}
    body = IngestError("no parser", formats=["csv"], best_guess="csv").as_body()
    assert body == {"error": "no parser", "field": None, "line": None, "formats": ["csv"],
                    "best_guess": "csv"}
    assert TargetError("there is no run '9'").as_body()["field"] == "attach_to"
    parse = ParseError("bad number", line=7)
    assert str(parse) == "line 7: bad number" and parse.as_body()["line"] == 7


ERROR_KEYS = {"error", "field", "line"}


def test_api_answers_share_the_shape(api_client, client):
    cases = [
        (client.post("/api/v1/runs/", {}, content_type="application/json"), 401),
        (api_client.get("/api/v1/runs/999999/"), 404),
        (api_client.post("/api/v1/runs/", "{", content_type="application/json"), 400),
        (api_client.post("/api/v1/runs/", {"benchmark": "x"},
                         content_type="application/json"), 400),
        (api_client.post("/api/v1/comparisons/", {"runs": "x"},
                         content_type="application/json"), 400),
        (api_client.post("/api/v1/simulations/", {"workload": "nope", "kernels": ["2.6.24"]},
                         content_type="application/json"), 400),
        (api_client.post("/api/v1/threads/", {"subject": "", "body": ""},
                         content_type="application/json"), 400),
    ]
    for response, status in cases:
        assert response.status_code == status, response.content
        body = response.json()
        assert set(body) >= ERROR_KEYS, body
        assert isinstance(body["error"], str) and body["error"]


def test_upload_without_a_kernel_names_the_form_field(api_client):
    """`time 5210 ms` lines name no kernel: the answer blames the form field the uploader
    should fill, as the error shape promises."""
    response = api_client.post("/api/v1/uploads/", {
        "text": "time 5210 ms\ntime 5300 ms\n", "machine": "core2-laptop"})
    assert response.status_code == 400, response.content
    assert response.json()["field"] == "kernel" and response.json()["line"] == 1


def test_too_large_request_is_413_in_the_same_shape(api_client, settings):
    settings.MAX_UPLOAD_MB = 1
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = api_client.post("/api/v1/runs/bulk/", "[" + "1," * 4000 + "1]",
                               content_type="application/json")
    assert response.status_code == 413
    assert set(response.json()) >= ERROR_KEYS

"""A body nested deeper than MAX_DEPTH (32) is a 400 before any parser recurses into it.

100,000 `[` used to reach json's recursive decoder and end in a RecursionError, a 500."""

import json

import pytest

from benchmarks.api.jsonbody import MAX_DEPTH, nesting_depth
from benchmarks.models import Run
from discussions.models import Thread
from simulations.models import SimulationJob
from tests.factories import make_run

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000
JUST_OVER = {"x": json.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH)}  # 33 levels with the body's


def nested_in(body: dict, key: str, levels: int) -> str:
    """`body` with `key` holding arrays nested so the whole body has `levels` levels."""
    return json.dumps({**body, key: "@"}).replace(
        '"@"', "[" * (levels - 1) + "]" * (levels - 1))


def refused(response, line=None):
    assert response.status_code == 400, response.content[:300]
    body = response.json()
    assert f"deeper than {MAX_DEPTH} levels" in body["error"], body
    assert set(body) >= {"error", "field", "line"} and body["line"] == line
    return body


@pytest.mark.parametrize("path", [
    "/api/v1/runs/", "/api/v1/runs/bulk/", "/api/v1/comparisons/", "/api/v1/comparisons/preview/",
    "/api/v1/simulations/", "/api/v1/threads/", "/api/v1/bisections/", "/api/v1/uploads/",
    "/api/v1/machines/calibration/",
])
@pytest.mark.parametrize("body", [DEEP, json.dumps(JUST_OVER)], ids=["100000", "33"])
def test_deep_json_bodies_are_400_on_every_json_endpoint(api_client, path, body):
    refused(api_client.post(path, body, content_type="application/json"))
    assert not Run.objects.exists() and not Thread.objects.exists()
    assert not SimulationJob.objects.exists()


def test_a_patch_body_too(api_client, api_user):
    api_user.is_staff = True  # may edit any run: the body is what is judged
    api_user.save()
    run = make_run("2.6.24")
    refused(api_client.patch(f"/api/v1/runs/{run.pk}/", DEEP, content_type="application/json"))
    run.refresh_from_db()
    assert run.label == "" and run.tags == []


def test_the_limit_itself_passes_the_guard(api_client):
    """32 levels reach the serializer, which then judges the value (not a depth refusal)."""
    body = nested_in({"benchmark": "threadtest", "kernel": "2.6.24",
                      "metrics": {"time_ms": [1.0, 2.0]}}, "environment", MAX_DEPTH)
    assert nesting_depth(body) == MAX_DEPTH
    response = api_client.post("/api/v1/runs/", body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert "deeper" not in response.json()["error"]
    assert response.json()["field"] == "environment"  # a list where an object belongs


def test_ndjson_line_names_its_line(api_client):
    good = json.dumps({"benchmark": "threadtest", "kernel": "2.6.24",
                       "metrics": {"time_ms": [1.0, 2.0]}})
    body = f"{good}\n{good}\n{DEEP}\n"
    refused(api_client.post("/api/v1/runs/bulk/", body, content_type="application/x-ndjson"),
            line=3)
    assert not Run.objects.exists()


def test_json_in_an_upload_form_field(api_client):
    response = api_client.post("/api/v1/uploads/", {
        "text": "time 5 ms\n", "benchmark": "x", "kernel": "1.0", "params": DEEP})
    assert refused(response)["field"] == "params"


def test_brackets_inside_strings_do_not_count():
    text = json.dumps({"log": "[" * 1000, "quoted": '\\"[[[[' * 100, "x": [[1]]})
    assert nesting_depth(text) == 3
    deep_text = json.dumps({"note": "a \\ b \" c", "v": JUST_OVER})
    assert nesting_depth(deep_text) == MAX_DEPTH + 2
    # three escaped backslashes, then the quote that closes the string
    assert nesting_depth('"' + "\\" * 6 + '"' + "[" * 40) == 40
    assert nesting_depth('"' + "\\" * 7 + '"' + "[" * 40) == 0  # \" : still in the string

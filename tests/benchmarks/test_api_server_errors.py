"""Every input that once gave a server error (issue 11) now gets a 4xx naming the problem,
and nothing is written."""

import json

import pytest

from benchmarks.models import Artifact, Kernel, Machine, Run
from benchmarks.services import ingest
from benchmarks.services.catalog import CatalogError, kernel_get_or_create
from tests.factories import make_run

pytestmark = pytest.mark.django_db
BASE = {"benchmark": "threadtest", "kernel": "2.6.24", "machine": "core2",
        "metrics": {"time_ms": [10765, 10801]}}


def post_json(client, path, text, content_type="application/json"):
    return client.post(path, text, content_type=content_type)


def run_with(**changes) -> str:
    return json.dumps({**BASE, **changes}, allow_nan=True)


BAD_RUN_BODIES = {
    "integer too big for a float": (run_with(metrics={"time_ms": [10**400]}), "metrics.time_ms"),
    "fsum overflow": (run_with(metrics={"time_ms": [1e308, 1e308]}), "metrics.time_ms"),
    "1e309 in params": (run_with()[:-1] + ', "params": {"loops": 1e309}}', "params.loops"),
    "huge int in params": (run_with(params={"loops": 10**400}), "params.loops"),
    "huge int in tunables": (run_with(tunables={"hz": 10**400}), "tunables.hz"),
    "1e309 in environment": (run_with()[:-1] + ', "environment": {"x": [1e309]}}',
                             "environment.x[0]"),
    "1e309 in series": (run_with()[:-1] + ', "series": {"vmstat": {"columns": ["r"], '
                        '"rows": [[1e309]]}}}', "series.vmstat.rows[0][0]"),
    "NUL in environment value": (run_with(environment={"uname": "a\u0000b"}), "environment.uname"),
    "NUL in environment key": (run_with(environment={"a\u0000": "b"}), "environment"),
    "NUL in policy": (run_with(policy="SCHED_\u0000"), "policy"),
    "NUL in idempotency_key": (run_with(idempotency_key="k\u0000"), "idempotency_key"),
}


@pytest.mark.parametrize("body,field", BAD_RUN_BODIES.values(), ids=BAD_RUN_BODIES)
def test_bad_numbers_and_text_in_a_run_are_400(api_client, body, field):
    response = post_json(api_client, "/api/v1/runs/", body)
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert not Run.objects.exists()


@pytest.mark.parametrize("body,field", BAD_RUN_BODIES.values(), ids=BAD_RUN_BODIES)
def test_bad_numbers_and_text_in_bulk_are_400_with_the_line(api_client, body, field):
    good = run_with(idempotency_key="first")
    response = post_json(api_client, "/api/v1/runs/bulk/", f"{good}\n{body}\n",
                         "application/x-ndjson")
    assert response.status_code == 400, response.content
    assert response.json()["line"] == 2 and response.json()["field"] == field, response.json()
    assert not Run.objects.exists()


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_bulk_refuses_nan_like_the_single_endpoint(api_client, constant):
    body = run_with()[:-1] + f', "params": {{"loops": {constant}}}}}'
    single = post_json(api_client, "/api/v1/runs/", body)
    as_list = post_json(api_client, "/api/v1/runs/bulk/", f"[{body}]")
    as_ndjson = post_json(api_client, "/api/v1/runs/bulk/", body, "application/x-ndjson")
    assert (single.status_code, as_list.status_code, as_ndjson.status_code) == (400, 400, 400)
    assert constant.lstrip("-") in as_list.json()["error"]
    assert as_ndjson.json()["line"] == 1
    assert not Run.objects.exists()


@pytest.mark.parametrize("body", ["[null, null]", "true", "5", '"text"', "null"])
def test_upload_json_body_that_is_not_an_object_is_400(api_client, body):
    response = post_json(api_client, "/api/v1/uploads/", body)
    assert response.status_code == 400, response.content
    assert "object" in response.json()["error"]


@pytest.mark.parametrize("field,value", [
    ("params", '{"loops": NaN}'), ("tunables", '{"hz": Infinity}'),
    ("environment", '{"x": "\\u0000"}'), ("params", '{"loops": 1e309}'),
    ("machine", '{"name": "m", "caches": {"L2": NaN}}'),
])
def test_upload_form_json_fields_refuse_nan_and_nul(api_client, field, value):
    response = api_client.post("/api/v1/uploads/", {
        "text": "time 5 ms\n", "benchmark": "x", "kernel": "1.0", field: value, "dry_run": "1"})
    assert response.status_code == 400, response.content
    assert response.json()["field"].startswith(field)


def test_concurrent_uploads_with_one_idempotency_key_replay(api_client, monkeypatch):
    """The loser of the race saw no artifact with the key when it checked, then hit the
    unique constraint when it saved: it answers the winner's replay, not a 500."""
    fields = {"text": "time 5 ms\n", "benchmark": "x", "kernel": "1.0", "idempotency_key": "k1"}
    winner = api_client.post("/api/v1/uploads/", fields)
    assert winner.status_code == 201
    real_replay, calls = ingest._replay, []

    def replay_missing_the_winner_once(submitter, key):
        calls.append(key)
        return None if len(calls) == 1 else real_replay(submitter, key)

    monkeypatch.setattr(ingest, "_replay", replay_missing_the_winner_once)
    loser = api_client.post("/api/v1/uploads/", fields)
    assert loser.status_code == 200, loser.content
    assert loser.json()["replayed"] is True
    assert [r["id"] for r in loser.json()["runs"]] == [r["id"] for r in winner.json()["runs"]]
    assert Artifact.objects.count() == 1 and Run.objects.count() == 1


def test_options_on_comparisons_is_the_http_options(api_client, client):
    for path in ("/api/v1/comparisons/", "/api/v1/comparisons/options/"):
        response = client.options(path)
        assert response.status_code == 200, (path, response.content)
        assert "name" in response.json()
    make_run("2.6.24")
    make_run("2.6.25")
    choices = api_client.post("/api/v1/comparisons/options/",
                              {"filters": {"benchmark": "threadtest"}},
                              content_type="application/json")
    assert choices.status_code == 200 and choices.json()["runs"] == 2


@pytest.mark.parametrize("query", ["kernel=%00", "param.%00=1", "param.loops=%00",
                                   "tunable.%00=1", "machine=%00", "policy=a%00b"])
def test_nul_in_run_list_filters_is_no_server_error(client, query):
    make_run("2.6.24")
    response = client.get(f"/api/v1/runs/?{query}")
    assert response.status_code == 200, response.content
    assert response.json()["count"] == 0 and "NUL" in response.json()["message"]


def test_tunable_filters_apply_to_run_lists(client):
    on = make_run("2.6.24", tunables={"sched_compat_yield": 1, "governor": "performance"})
    off = make_run("2.6.24", tunables={"sched_compat_yield": 0, "governor": "ondemand"})
    make_run("2.6.24")

    def ids(query):
        response = client.get(f"/api/v1/runs/?{query}")
        assert response.status_code == 200
        return sorted(run["id"] for run in response.json()["results"])

    assert ids("tunable.sched_compat_yield=1") == [on.pk]
    assert ids("tunable.sched_compat_yield=0") == [off.pk]
    assert ids("tunable.governor=ondemand") == [off.pk]
    assert ids("tunable.governor=ondemand&tunable.sched_compat_yield=1") == []
    assert ids("tunable.nonexistent=1") == []


@pytest.mark.parametrize("name", ["2.6.24\u202e", "2.6\u200f.24", "2.6.24\u0007", "\u20662.6"])
def test_identifiers_with_control_or_bidi_characters_are_refused(api_client, name):
    for key in ("kernel", "machine", "benchmark"):
        response = post_json(api_client, "/api/v1/runs/", run_with(**{key: name}))
        assert response.status_code == 400, (key, response.content)
        assert response.json()["field"] == key and "U+" in response.json()["error"]
    machine = post_json(api_client, "/api/v1/runs/", run_with(machine={"name": name}))
    assert machine.status_code == 400 and machine.json()["field"] == "machine.name"
    upload = api_client.post("/api/v1/uploads/", {"text": "time 5 ms\n", "benchmark": "x",
                                                  "kernel": name})
    assert upload.status_code == 400 and upload.json()["field"] == "kernel"
    bulk = post_json(api_client, "/api/v1/runs/bulk/", f"[{run_with(kernel=name)}]")
    assert bulk.status_code == 400 and bulk.json()["field"] == "kernel"
    with pytest.raises(CatalogError):
        kernel_get_or_create(version=name)
    assert not Run.objects.exists() and not Kernel.objects.exists()
    assert not Machine.objects.exclude(name="unknown machine").exists()


@pytest.mark.parametrize("run_ids", [[2**64], [-(2**70), 1], [0]])
def test_comparison_run_ids_beyond_the_database_range_are_400(client, run_ids):
    make_run("2.6.24")
    response = client.post("/api/v1/comparisons/preview/", {"runs": run_ids},
                           content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["field"] == "runs"

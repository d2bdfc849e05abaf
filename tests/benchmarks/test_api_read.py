import pytest

from benchmarks.models import ApiToken
from benchmarks.services.tokens import token_create, token_revoke
from tests.factories import make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs():
    return [
        make_run("2.6.24", [8953, 9001]),
        make_run("2.6.22", [3332], params={"loops": 1000000, "iterations": 500}),
        make_run("2.6.24-git19", [8986], policy="SCHED_BATCH"),
    ]


def test_list_is_paginated_in_natural_order(client, runs):
    body = client.get("/api/v1/runs/").json()
    assert set(body) >= {"count", "next", "previous", "results"}
    assert body["count"] == 3
    assert [r["kernel"] for r in body["results"]] == ["2.6.22", "2.6.24", "2.6.24-git19"]
    first = body["results"][0]
    assert first["summary"]["time_ms"]["n"] == 1
    assert first["url"].endswith(f"/api/v1/runs/{runs[1].pk}/")


@pytest.mark.parametrize(
    "query, kernels",
    [
        ({"kernel": "2.6.24"}, ["2.6.24"]),
        ({"param.loops": "1000000"}, ["2.6.22"]),
        ({"policy": "SCHED_BATCH"}, ["2.6.24-git19"]),
        (
            {"benchmark": "threadtest", "machine": "core2-laptop"},
            ["2.6.22", "2.6.24", "2.6.24-git19"],
        ),
        ({"source": "api"}, ["2.6.22", "2.6.24", "2.6.24-git19"]),
    ],
)
def test_list_filters(client, runs, query, kernels):
    body = client.get("/api/v1/runs/", query).json()
    assert [r["kernel"] for r in body["results"]] == kernels


@pytest.mark.parametrize(
    "query, message",
    [
        ({"kernel": "7.7"}, "no kernel '7.7'"),
        ({"benchmark": "volanomark"}, "no benchmark 'volanomark'"),
        ({"machine": "cray"}, "no machine 'cray'"),
        ({"source": "fax"}, "unknown source 'fax'"),
    ],
)
def test_unknown_filter_values_give_an_empty_result_with_a_message(client, runs, query, message):
    response = client.get("/api/v1/runs/", query)
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 0 and body["results"] == []
    assert message in body["message"]


def test_detail_has_every_sample_series_machine_and_provenance(client):
    run = make_run(
        "2.6.24",
        [8953, 9001, 8870],
        series={"vmstat": {"columns": ["r", "cs"], "rows": [[2, 1200], [3, 1500]]}},
    )
    body = client.get(f"/api/v1/runs/{run.pk}/").json()
    assert body["metrics"] == {
        "time_ms": {"unit": "ms", "higher_is_better": False, "values": [8953, 9001, 8870]}
    }
    assert body["series"]["vmstat"]["rows"] == [[2, 1200], [3, 1500]]
    assert body["machine"]["topology"] == "1x2x1"
    assert body["machine"]["caches"] == {"L1d": "32K", "L2": "2M"}
    assert body["provenance"]["source"] == "api"
    assert set(body["provenance"]) >= {"artifact", "parser", "message", "simulation"}
    assert body["params"] == {"loops": 10000, "iterations": 500}


def test_detail_of_a_missing_run_is_a_json_404(client):
    response = client.get("/api/v1/runs/424242/")
    assert response.status_code == 404
    assert "error" in response.json()


def test_reads_are_public_but_writes_are_not(client, runs):
    assert client.get("/api/v1/runs/").status_code == 200
    response = client.post("/api/v1/runs/", {}, content_type="application/json")
    assert response.status_code in (401, 403, 405)


def test_token_authenticates_and_revocation_works(client, django_user_model):
    user = django_user_model.objects.create_user("ingo")
    token, key = token_create(user=user, name="harness")
    assert key not in ApiToken.objects.values_list("key_hash", flat=True)
    response = client.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 200 and response.json()["username"] == "ingo"
    token_revoke(token=token)
    response = client.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 401
    assert response.json()["error"] == "invalid or revoked token"
    assert client.get("/api/v1/me/").status_code == 401


def test_openapi_schema_and_offline_docs(client):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/runs/" in schema.content and b"openapi: 3" in schema.content
    docs = client.get("/api/docs/").content.decode()
    assert "swagger-ui" in docs.lower()
    assert "cdn.jsdelivr" not in docs and "unpkg" not in docs

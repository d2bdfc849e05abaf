"""Verdicts in submission answers, the findings list and PATCH of a finding's status."""

import json

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from benchmarks.services.tokens import token_create
from regressions.models import Regression
from regressions.selectors import RegressionFilters, regressions_list
from tests.factories import CORE2, make_run
from tests.regressions.conftest import step_series

pytestmark = pytest.mark.django_db
PARAMS = {"loops": 10000, "iterations": 500}


def token_client(user) -> Client:
    _, key = token_create(user=user, name="t")
    return Client(HTTP_AUTHORIZATION=f"Token {key}")


def submit(client, kernel, values, **extra):
    body = {"benchmark": "threadtest", "kernel": kernel, "machine": CORE2, "params": PARAMS,
            "metrics": {"time_ms": values}, **extra}
    return client.post("/api/v1/runs/", json.dumps(body), content_type="application/json")


def test_run_submission_answers_with_verdicts(api_client):
    make_run("2.6.22", [3332.0, 3340.0, 3325.0, 3351.0, 3330.0], params=PARAMS)
    make_run("2.6.23", [4397.0, 4410.0, 4388.0, 4402.0, 4391.0], params=PARAMS)
    reply = submit(api_client, "2.6.24", [8953.0, 8960.0, 8941.0, 8990.0, 8970.0])
    assert reply.status_code == 201
    verdicts = reply.json()["verdicts"]
    assert [(v["against"], v["role"]) for v in verdicts] == [("2.6.22", "baseline"),
                                                              ("2.6.23", "previous")]
    baseline = verdicts[0]
    assert baseline["run"] == reply.json()["id"] and baseline["metric"] == "time_ms"
    assert baseline["change"] == pytest.approx(8960 / 3332, rel=1e-6)
    assert baseline["p_value"] == pytest.approx(0.0079, abs=1e-3)  # 5 vs 5, all above
    assert baseline["regression"] is True and baseline["needs_repeats"] is False


def test_a_run_of_the_oldest_kernel_has_no_verdicts(api_client):
    make_run("2.6.24", [10.0, 11.0, 12.0], params=PARAMS)
    assert submit(api_client, "2.6.22", [10.0, 11.0, 12.0]).json()["verdicts"] == []


def test_upload_answer_has_verdicts_for_its_runs(api_client):
    make_run("2.6.22", [100.0, 101.0, 99.0], params={}, machine={"name": "box"})
    reply = api_client.post("/api/v1/uploads/", {
        "text": "time 150 ms\ntime 151 ms\ntime 149 ms\n", "benchmark": "threadtest",
        "kernel": "2.6.24", "machine": "box"})
    assert reply.status_code == 201, reply.content
    body = reply.json()
    assert body["verdicts"], body
    verdict = body["verdicts"][0]
    assert verdict["run"] == body["runs"][0]["id"] and verdict["against"] == "2.6.22"
    assert verdict["regression"] is True and verdict["change"] == pytest.approx(1.5)


def test_bulk_answer_has_verdicts(api_client):
    make_run("2.6.22", [100.0, 101.0, 99.0, 100.5, 99.5], params=PARAMS)
    runs = [{"benchmark": "threadtest", "kernel": "2.6.24", "machine": CORE2, "params": PARAMS,
             "metrics": {"time_ms": [80.0, 81.0, 79.0, 80.5, 79.5]}}]
    reply = api_client.post("/api/v1/runs/bulk/", json.dumps(runs),
                            content_type="application/json")
    assert reply.status_code == 201
    (verdict,) = reply.json()["verdicts"]
    assert verdict["regression"] is False and verdict["change"] < 0.85


def test_list_filters_and_shape(stepped, client):
    step_series(params={"loops": 1000000}, seed=4)
    from regressions.services import regressions_detect_all
    regressions_detect_all()
    body = client.get("/api/v1/regressions/", {"benchmark": "threadtest",
                                               "metric": "time_ms"}).json()
    assert body["count"] == 2 and body["next"] is None
    item = body["results"][0]
    for key in ("id", "kind", "benchmark", "machine", "metric", "params", "good", "bad",
                "change", "ci95", "p_value", "runs_good", "runs_bad", "status", "url"):
        assert key in item
    assert item["url"].endswith(f"/regressions/{item['id']}/")
    assert len(item["ci95"]) == 2 and item["runs_good"] and item["runs_bad"]
    assert client.get("/api/v1/regressions/", {"machine": "nope"}).json()["count"] == 0
    assert client.get("/api/v1/regressions/", {"status": "fixed"}).json()["count"] == 0
    bad = client.get("/api/v1/regressions/", {"status": "gone"})
    assert bad.status_code == 400 and bad.json()["field"] == "status"


def test_list_selector_query_count_does_not_grow(stepped, django_assert_num_queries):
    for seed in range(3):
        step_series(params={"loops": 20000 + seed}, seed=seed)
    from regressions.services import regressions_detect_all
    regressions_detect_all()
    assert Regression.objects.count() == 4
    with django_assert_num_queries(4):  # findings, good runs, bad runs, histories
        rows = list(regressions_list(RegressionFilters()))
        shown = [(r.benchmark.slug, r.machine.name, r.metric.name, r.good.version,
                  r.bad.version, [x.pk for x in r.runs_good.all()],
                  [x.pk for x in r.runs_bad.all()], [e.event for e in r.history.all()])
                 for r in rows]
    assert len(shown) == 4


def test_kernel_range_filter(stepped, client):
    inside = client.get("/api/v1/regressions/", {"from": "2.6.22", "to": "2.6.24"}).json()
    outside = client.get("/api/v1/regressions/", {"from": "2.6.24"}).json()
    assert inside["count"] == 1 and outside["count"] == 0


def test_patch_needs_a_signed_in_user(stepped):
    finding = Regression.objects.get()
    reply = Client().patch(f"/api/v1/regressions/{finding.pk}/", {"status": "confirmed"},
                           content_type="application/json")
    assert reply.status_code in (401, 403)
    finding.refresh_from_db()
    assert finding.status == "open"


def test_anyone_signed_in_may_confirm_only_owner_or_staff_may_invalidate(
        stepped, django_user_model):
    owner, _ = stepped
    finding = Regression.objects.get()
    stranger = token_client(django_user_model.objects.create_user("stranger"))
    url = f"/api/v1/regressions/{finding.pk}/"
    confirmed = stranger.patch(url, {"status": "confirmed"}, content_type="application/json")
    assert confirmed.status_code == 200 and confirmed.json()["status"] == "confirmed"
    assert confirmed.json()["status_changed_by"] == "stranger"
    refused = stranger.patch(url, {"status": "invalid"}, content_type="application/json")
    assert refused.status_code == 403 and "error" in refused.json()
    mine = token_client(owner).patch(url, {"status": "invalid"},
                                     content_type="application/json")
    assert mine.status_code == 200 and mine.json()["status"] == "invalid"
    staff = django_user_model.objects.create_user("admin", is_staff=True)
    assert token_client(staff).patch(url, {"status": "invalid"},
                                     content_type="application/json").status_code == 200


@pytest.mark.parametrize("body", [{"status": "gone"}, {}, {"status": 3}, [1]])
def test_patch_with_a_bad_status_is_400(stepped, body):
    owner, _ = stepped
    finding = Regression.objects.get()
    reply = token_client(owner).patch(f"/api/v1/regressions/{finding.pk}/", body,
                                      content_type="application/json")
    assert reply.status_code == 400 and reply.json()["error"]


def test_patch_of_a_missing_finding_is_404(api_client):
    reply = api_client.patch("/api/v1/regressions/999999/", {"status": "fixed"},
                             content_type="application/json")
    assert reply.status_code == 404


def test_list_runs_in_few_queries_through_the_api(stepped, client):
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/api/v1/regressions/").status_code == 200
    assert len(queries) <= 5


@pytest.mark.parametrize("query", [{"machine": "box\x00"}, {"benchmark": "a\x07b"},
                                   {"from": "2.6\x00"}])
def test_control_characters_in_filters_are_400(client, query):
    reply = client.get("/api/v1/regressions/", query)
    assert reply.status_code == 400 and reply.json()["field"] == next(iter(query))


@pytest.mark.parametrize("pk", ["null,null", "99999999999999999999", "-1"])
def test_odd_ids_are_404(api_client, pk):
    assert api_client.patch(f"/api/v1/regressions/{pk}/", {"status": "fixed"},
                            content_type="application/json").status_code == 404
    assert api_client.get(f"/api/v1/regressions/{pk}/").status_code == 404


def test_a_huge_machine_number_is_a_name_that_matches_nothing(client):
    reply = client.get("/api/v1/regressions/", {"machine": "9" * 30})
    assert reply.status_code == 200 and reply.json()["count"] == 0

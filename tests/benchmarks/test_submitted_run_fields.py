"""POST /api/v1/runs/ and /runs/bulk/: a run without a machine stays its submitter's, `measured`
says when it was measured, and a metric may be a published summary instead of samples."""

import json

import pytest
from django.test import Client

from benchmarks.models import Run
from benchmarks.services.tokens import token_create

pytestmark = pytest.mark.django_db


def run_body(**extra) -> dict:
    return {"benchmark": "threadtest", "kernel": "6.1.0", "metrics": {"time_ms": [10, 11]},
            **extra}


def post(client, body, path="/api/v1/runs/"):
    return client.post(path, json.dumps(body), content_type="application/json")


def client_of(django_user_model, name: str) -> Client:
    user = django_user_model.objects.create_user(name)
    _, key = token_create(user=user, name="tests")
    return Client(HTTP_AUTHORIZATION=f"Token {key}")


def test_runs_without_a_machine_go_to_each_submitters_own_machine(django_user_model):
    alice, bob = (client_of(django_user_model, name) for name in ("alice", "bob"))
    first = post(alice, run_body())
    second = post(bob, run_body(kernel="6.2.0"))
    bulk = post(alice, [run_body(kernel="6.3.0")], "/api/v1/runs/bulk/")
    assert (first.status_code, second.status_code, bulk.status_code) == (201, 201, 201)
    machines = {run.kernel.version: run.machine for run in Run.objects.select_related(
        "machine", "kernel")}
    assert machines["6.1.0"].name == "unnamed (alice)"
    assert machines["6.2.0"].name == "unnamed (bob)"
    assert machines["6.1.0"].pk == machines["6.3.0"].pk != machines["6.2.0"].pk


def test_nobody_can_name_another_users_unnamed_machine(django_user_model):
    alice, bob = (client_of(django_user_model, name) for name in ("alice", "bob"))
    assert post(alice, run_body()).status_code == 201
    answer = post(bob, run_body(machine="unnamed (alice)"))
    assert answer.status_code == 400
    assert answer.json()["field"] == "machine"


def test_measured_is_stored_and_a_bad_one_is_refused_naming_the_field(api_client):
    good = post(api_client, run_body(measured="2024-05-03T10:00:00+02:00"))
    assert good.status_code == 201, good.content
    run = Run.objects.get(pk=good.json()["id"])
    assert run.measured_at.isoformat() == "2024-05-03T08:00:00+00:00"
    bad = post(api_client, run_body(kernel="6.2.0", measured="yesterday"))
    assert bad.status_code == 400 and bad.json()["field"] == "measured"
    bulk = post(api_client, [run_body(kernel="6.3.0"), run_body(kernel="6.4.0",
                                                                 measured="3024-01-01")],
                "/api/v1/runs/bulk/")
    assert bulk.status_code == 400 and "item 1" in bulk.json()["error"]
    assert not Run.objects.filter(kernel__version__in=["6.2.0", "6.3.0", "6.4.0"]).exists()


def test_a_metric_may_be_a_published_summary_without_samples(api_client):
    summary = {"statistic": "amean", "value": 0.51, "stddev_pct": 2.5, "n": 10,
               "significant": None}
    answer = post(api_client, run_body(metrics={"time_s": {"unit": "s", "summary": summary}}))
    assert answer.status_code == 201, answer.content
    read = api_client.get(f"/api/v1/runs/{answer.json()['id']}/").json()
    metric = read["metrics"]["time_s"]
    assert metric["values"] == []
    assert metric["summary"]["statistic"] == "amean" and metric["summary"]["value"] == 0.51
    both = post(api_client, run_body(kernel="6.2.0", metrics={"time_s": {
        "values": [1.0], "summary": summary}}))
    assert both.status_code == 400 and "not both" in both.json()["error"]


def test_an_upload_without_a_machine_goes_to_the_uploaders_own_machine(django_user_model):
    alice, bob = (client_of(django_user_model, name) for name in ("alice", "bob"))
    for client, kernel in ((alice, "2.6.22"), (bob, "2.6.23")):
        answer = client.post("/api/v1/uploads/", {
            "text": "time 10765 ms\ntime 10801 ms\n", "benchmark": "threadtest",
            "kernel": kernel})
        assert answer.status_code == 201, answer.content
    names = dict(Run.objects.values_list("kernel__version", "machine__name"))
    assert names == {"2.6.22": "unnamed (alice)", "2.6.23": "unnamed (bob)"}


def test_the_preview_says_where_runs_without_a_machine_go(api_client, api_user):
    paste = {"text": "time 10765 ms\ntime 10801 ms\n", "benchmark": "threadtest",
             "kernel": "2.6.22", "dry_run": True}
    note = api_client.post("/api/v1/uploads/", paste).json()["machine"]
    assert note["machine_name"] == "unnamed (harness-user)" and "your own machine" in note["note"]
    assert note["your_machines"] == []
    assert api_client.post("/api/v1/uploads/", {**paste, "dry_run": False}).status_code == 201
    named = api_client.post("/api/v1/uploads/", {**paste, "machine": "p4-ht"}).json()["machine"]
    assert named["machine_name"] is None
    assert [m["name"] for m in named["your_machines"]] == ["unnamed (harness-user)"]


def test_an_upload_says_when_it_was_measured(api_client):
    paste = {"text": "time 10765 ms\n", "benchmark": "threadtest", "kernel": "2.6.22"}
    bad = api_client.post("/api/v1/uploads/", {**paste, "measured": "last week"})
    assert bad.status_code == 400 and bad.json()["field"] == "measured"
    good = api_client.post("/api/v1/uploads/", {**paste, "measured": "2008-02-14"})
    assert good.status_code == 201, good.content
    run = Run.objects.get(pk=good.json()["runs"][0]["id"])
    assert run.measured_at.isoformat() == "2008-02-14T00:00:00+00:00"

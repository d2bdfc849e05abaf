"""Per-benchmark thresholds: who may set them, what they change, and verdicts saying which
applied."""

import json

import pytest

from regressions.models import BenchmarkThresholds, Regression
from regressions.services import regressions_detect_runs

pytestmark = pytest.mark.django_db
URL = "/api/v1/regressions/thresholds/threadtest/"


def client_of(user):
    from django.test import Client

    from benchmarks.services.tokens import token_create

    return Client(HTTP_AUTHORIZATION=f"Token {token_create(user=user, name='t')[1]}")


def patch(client, body):
    return client.patch(URL, json.dumps(body), content_type="application/json")


def test_defaults_are_answered_and_only_owner_or_staff_may_change(stepped, client,
                                                                   api_client, api_user):
    body = client.get(URL).json()
    assert body["source"] == "default" and body["min_repeats"] == 2 and body["owner"] is None
    assert patch(api_client, {"min_change": 0.5}).status_code == 403
    assert client.get("/api/v1/regressions/thresholds/nosuch/").status_code == 404

    staff = type(api_user).objects.create_user("boss", is_staff=True)
    reply = patch(client_of(staff), {"owner": api_user.username})
    assert reply.status_code == 200 and reply.json()["owner"] == api_user.username
    assert patch(api_client, {"owner": "someone"}).status_code == 403  # naming owners: staff
    bad = patch(api_client, {"min_repeats": 1})
    assert bad.status_code == 400 and bad.json()["field"] == "min_repeats"
    assert patch(api_client, {"alpha": "0.1"}).status_code == 400
    assert patch(api_client, {"nonsense": 1}).status_code == 400


def test_a_higher_minimum_change_unsees_a_smaller_change(stepped, api_client, api_user,
                                                         django_capture_on_commit_callbacks):
    _, runs = stepped
    finding = Regression.objects.get()  # a 30% step
    BenchmarkThresholds.objects.create(benchmark=finding.benchmark, owner=api_user,
                                       min_change=0.02, alpha=0.002, min_effect=0.3,
                                       min_repeats=2, verdict_alpha=0.05)
    with django_capture_on_commit_callbacks() as queued:
        reply = patch(api_client, {"min_change": 0.5})
    assert reply.status_code == 200 and reply.json()["source"] == "benchmark"
    assert queued  # detection of the benchmark's series is queued again
    regressions_detect_runs(run_ids=[runs[-1].pk])
    finding.refresh_from_db()
    assert not finding.seen

    verdicts = api_client.post("/api/v1/runs/", json.dumps({
        "benchmark": "threadtest", "kernel": "2.6.26", "machine": runs[0].machine.name,
        "params": runs[0].params,
        "metrics": {"time_ms": [2000.0, 2001.0, 1999.0, 2000.5, 1999.5]}}),
        content_type="application/json").json()["verdicts"]
    assert verdicts and all(v["regression"] for v in verdicts)  # +54%: above 0.5

"""The harness sends the run's start time as `measured`; the portal stores it as measured_at
and shows it in the run's JSON (detail and list) and on the run page."""

import json
import sys
import time
from datetime import UTC, datetime

import pytest
from django.test import Client

from benchmarks.services.tokens import token_create


def dry_run_payload(sb, capsys, oldbox) -> dict:
    command = [sys.executable, "-c", "import time; time.sleep(1.1); print('Time: 0.5')"]
    assert sb.main(["run", "--benchmark", "hackbench", "--root", oldbox, "--dry-run", "-q",
                    "--", *command]) == 0
    return json.loads(capsys.readouterr().out)


def test_measured_is_the_start_of_the_run_in_utc(sb, capsys, oldbox):
    before = int(time.time())
    payload = dry_run_payload(sb, capsys, oldbox)
    after = time.time()
    assert payload["measured"] == payload["environment"]["started"]
    moment = datetime.strptime(payload["measured"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    # the start, not the end: the command sleeps over a second after it
    assert before <= moment.timestamp() <= after - 1.0


@pytest.mark.django_db
def test_the_portal_keeps_and_shows_when_the_run_was_measured(sb, capsys, oldbox,
                                                               django_user_model):
    payload = dry_run_payload(sb, capsys, oldbox)
    payload["measured"] = "2024-05-03T10:00:00Z"  # a date the page can be checked against
    _, key = token_create(user=django_user_model.objects.create_user("h"), name="t")
    api = Client(HTTP_AUTHORIZATION=f"Token {key}")
    reply = api.post("/api/v1/uploads/", json.dumps(payload), content_type="application/json")
    assert reply.status_code == 201, reply.content
    run_id = reply.json()["runs"][0]["id"]
    detail = api.get(f"/api/v1/runs/{run_id}/").json()
    assert detail["measured_at"] == "2024-05-03T10:00:00Z"
    listed = api.get("/api/v1/runs/").json()["results"]
    assert [run["measured_at"] for run in listed] == ["2024-05-03T10:00:00Z"]
    page = api.get(f"/runs/{run_id}/").content.decode()
    assert '<span id="run-measured">measured 2024-05-03 10:00 UTC</span>' in page

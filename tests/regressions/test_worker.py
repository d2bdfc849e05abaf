"""Detection and follower mail through a real `celery worker` process."""

import json

import pytest

from regressions.models import Follow, Regression
from tests.conftest import wait_until
from tests.factories import CORE2, make_run

pytestmark = [pytest.mark.worker, pytest.mark.slow]
PARAMS = {"loops": 10000, "iterations": 500}


@pytest.fixture
def mail_dir(tmp_path, monkeypatch):
    """Set before the worker starts: it sends mail into files here."""
    folder = tmp_path / "mail"
    monkeypatch.setenv("EMAIL_BACKEND", "django.core.mail.backends.filebased.EmailBackend")
    monkeypatch.setenv("EMAIL_FILE_PATH", str(folder))
    return folder


def test_a_submitted_run_is_detected_and_followers_are_mailed(
        mail_dir, celery_worker_factory, api_client, api_user, django_user_model):
    for kernel, level in (("2.6.21", 1000), ("2.6.22", 1000), ("2.6.23", 1000)):
        make_run(kernel, [level + i for i in (-2, -1, 0, 1, 2)], params=PARAMS,
                 machine=CORE2)
    fan = django_user_model.objects.create_user("fan", email="fan@example.org")
    first = make_run("2.6.24", [1500.0, 1501.0, 1499.0, 1502.0, 1498.0], params=PARAMS)
    Follow.objects.create(user=fan, benchmark=first.benchmark)
    celery_worker_factory()
    body = {"benchmark": "threadtest", "kernel": "2.6.25", "machine": CORE2, "params": PARAMS,
            "metrics": {"time_ms": [1500.0, 1503.0, 1497.0, 1500.5, 1499.5]}}
    reply = api_client.post("/api/v1/runs/", json.dumps(body), content_type="application/json")
    assert reply.status_code == 201
    finding = wait_until(lambda: Regression.objects.select_related("good", "bad").first(),
                         timeout=60, what="the worker to store the finding")
    assert (finding.good.version, finding.bad.version) == ("2.6.23", "2.6.24")
    assert reply.json()["id"] in {r.pk for r in finding.runs_bad.all()}
    mails = wait_until(lambda: list(mail_dir.glob("*.log")), timeout=60,
                       what="the follower mail")
    text = mails[0].read_text()
    assert "fan@example.org" in text and "2.6.23 -> 2.6.24" in text

"""Every way runs arrive queues detection for them once the transaction commits."""

import json
from pathlib import Path

import pytest

from benchmarks.models import Run
from discussions.importer import mbox_import
from tests.factories import CORE2, make_run

pytestmark = pytest.mark.django_db
MBOX = Path(__file__).resolve().parent.parent / "fixtures" / "mbox" / "threadtest.mbox"


def detections(callbacks) -> int:
    return sum("detect_on_commit" in getattr(cb, "__qualname__", "") for cb in callbacks)


def test_api_run(api_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        api_client.post("/api/v1/runs/", json.dumps({
            "benchmark": "threadtest", "kernel": "2.6.24", "machine": CORE2,
            "metrics": {"time_ms": [1.0, 2.0]}}), content_type="application/json")
    assert detections(callbacks) == 1


def test_bulk(api_client, django_capture_on_commit_callbacks):
    runs = [{"benchmark": "threadtest", "kernel": k, "machine": CORE2,
             "metrics": {"time_ms": [1.0, 2.0]}} for k in ("2.6.22", "2.6.24")]
    with django_capture_on_commit_callbacks() as callbacks:
        reply = api_client.post("/api/v1/runs/bulk/", json.dumps(runs),
                                content_type="application/json")
    assert reply.status_code == 201 and detections(callbacks) >= 1


def test_upload(api_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        reply = api_client.post("/api/v1/uploads/", {
            "text": "time 150 ms\ntime 151 ms\n", "benchmark": "threadtest",
            "kernel": "2.6.24", "machine": "box"})
    assert reply.status_code == 201 and detections(callbacks) == 1


def test_mail_import(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        report = mbox_import(data=MBOX.read_bytes(), user=None)
    assert report.runs_extracted and Run.objects.filter(source="mail").exists()
    assert detections(callbacks) >= 1


def test_simulation_point(django_capture_on_commit_callbacks, django_user_model):
    import simulator
    from simulations.models import SimulationPoint
    from simulations.runs import point_run_create
    from simulations.services import simulation_create
    from tests.simulations.conftest import tiny_spec

    job = simulation_create(spec=tiny_spec(), owner=django_user_model.objects.create_user("o"))
    point = SimulationPoint.objects.filter(job=job).first()
    result = simulator.run(point.spec)
    with django_capture_on_commit_callbacks() as callbacks:
        run = point_run_create(point=point, result=result)
    assert run.source == "simulator" and detections(callbacks) == 1


def test_withdrawal_and_restore_redo_detection_of_the_series(stepped,
                                                             django_capture_on_commit_callbacks):
    """A finding resting on a withdrawn run's numbers is no longer seen after the withdrawal
    (the series is detected again) and is seen again after the restore: the same finding."""
    from benchmarks.services.ownership import run_restore, run_withdraw
    from regressions.models import Regression
    from regressions.services import regressions_detect_runs

    owner, runs = stepped
    bad_side = [run for run in runs if run.kernel.version in ("2.6.24", "2.6.25")]
    finding = Regression.objects.get(good__version="2.6.23", bad__version="2.6.24")
    for run in bad_side:
        with django_capture_on_commit_callbacks() as callbacks:
            run_withdraw(run=run, user=owner)
        assert detections(callbacks) == 1
    regressions_detect_runs(run_ids=[run.pk for run in bad_side])
    assert Regression.objects.get().pk == finding.pk
    assert not Regression.objects.get().seen

    staff = type(owner).objects.create_user("staff", is_staff=True)
    for run in bad_side:
        with django_capture_on_commit_callbacks() as callbacks:
            run_restore(run=run, user=staff)
        assert detections(callbacks) == 1
    regressions_detect_runs(run_ids=[bad_side[0].pk])
    again = Regression.objects.get(good__version="2.6.23", bad__version="2.6.24")
    assert again.pk == finding.pk and again.seen
    assert [e.event for e in again.history.all()] == ["first_seen", "not_seen", "seen_again"]


def test_an_upload_of_many_runs_queues_one_detection(api_client,
                                                     django_capture_on_commit_callbacks):
    """Announcing each run alone queued one detection pass per run over the same series."""
    sweep = "\n".join(f"{kernel}: {ms} ms" for kernel, ms in
                      (("2.6.22", 150), ("2.6.23", 151), ("2.6.24", 190), ("2.6.25", 188)))
    with django_capture_on_commit_callbacks() as callbacks:
        reply = api_client.post("/api/v1/uploads/", {
            "text": sweep + "\n", "benchmark": "threadtest", "machine": "box"})
    assert reply.status_code == 201, reply.content
    assert len(reply.json()["runs"]) == 4
    assert detections(callbacks) == 1


def test_a_mail_import_queues_one_detection(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        report = mbox_import(data=MBOX.read_bytes(), user=None)
    assert report.runs_extracted > 1
    assert detections(callbacks) == 1


def test_runs_stored_together_announces_once_even_when_nested():
    from benchmarks.services.runs import runs_stored_together
    from benchmarks.signals import runs_stored

    heard = []

    def listener(sender, run_ids, **kwargs):
        heard.append(list(run_ids))

    runs_stored.connect(listener)
    try:
        with runs_stored_together():
            make_run("2.6.22", [1.0])
            with runs_stored_together():
                make_run("2.6.24", [2.0])
            assert heard == []
        assert len(heard) == 1 and len(heard[0]) == 2
        make_run("2.6.25", [3.0])
        assert len(heard) == 2 and len(heard[1]) == 1
    finally:
        runs_stored.disconnect(listener)

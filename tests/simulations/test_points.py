"""Point tasks run in-process: idempotency, re-use of identical runs, failures, the watchdog."""

from datetime import timedelta

import pytest
from django.utils import timezone

from benchmarks.models import Run
from simulations import points, tasks
from simulations.models import SimulationPoint, Status
from simulations.services import simulation_create
from simulations.tasks import run_point
from tests.factories import make_run
from tests.simulations.conftest import tiny_spec

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sent(monkeypatch):
    """Messages that would go to the broker; these tests run the task in-process instead."""
    messages = []
    monkeypatch.setattr(tasks, "points_send", messages.extend)
    return messages


def run_all(job) -> list[str]:
    return [run_point.apply(args=[p.pk]).get() for p in job.points.order_by("index")]


def test_a_point_task_run_twice_makes_one_run(owner, sent):
    job = simulation_create(spec=tiny_spec(kernels=["2.6.24"], sweep={}), owner=owner)
    assert sent == [job.points.get().pk]
    assert run_point.apply(args=[sent[0]]).get() == "stored"
    assert run_point.apply(args=[sent[0]]).get() == "skipped"  # a redelivered message
    assert Run.objects.count() == 1
    point = job.points.get()
    assert point.attempts == 1 and point.run_id == Run.objects.get().pk
    assert run_point.apply(args=[point.pk + 999]).get() == "skipped"  # deleted: no error


def test_losing_store_writes_nothing(owner, sent):
    job = simulation_create(spec=tiny_spec(kernels=["2.6.24"], sweep={}), owner=owner)
    point = points.point_claim(point_id=job.points.get().pk, worker="w1")
    first = points.point_store(point=point, build_run=lambda: (make_run("2.6.24", [1.0]), 9, 0.1))
    assert first and Run.objects.count() == 1
    # A second attempt (a redelivered message racing the first) writes a run, loses, rolls back.
    assert not points.point_store(point=point,
                                  build_run=lambda: (make_run("2.6.24", [2.0]), 9, 0.1))
    assert Run.objects.count() == 1
    assert SimulationPoint.objects.get(pk=point.pk).run == Run.objects.get()


def test_identical_spec_and_seed_reuse_runs(owner, sent):
    first = simulation_create(spec=tiny_spec(), owner=owner)
    assert set(run_all(first)) == {"stored"}
    first.refresh_from_db()
    assert first.status == Status.SUCCEEDED and first.comparison_id
    again = simulation_create(spec=tiny_spec(), owner=owner)
    assert again.status == Status.SUCCEEDED and again.comparison_id  # finished at once
    assert Run.objects.count() == 4 and len(sent) == 4
    wider = simulation_create(spec=tiny_spec(sweep={"loops": [100000, 1000000, 2000000]}),
                              owner=owner)
    assert wider.points.filter(reused=True).count() == 4  # seeds follow coordinates
    assert len(sent) == 4 + 2
    other_seed = simulation_create(spec=tiny_spec(seed=8), owner=owner)
    assert not other_seed.points.filter(reused=True).exists()


def test_a_failed_point_keeps_its_error_and_the_others_go_on(owner, sent):
    spec = tiny_spec(kernels=["2.6.24"], sweep={"iterations": [1, 3000]}, max_events=5000,
                     repeat=1)
    job = simulation_create(spec=spec, owner=owner)
    assert run_all(job) == ["stored", "failed"]
    job.refresh_from_db()
    failed = job.points.get(status=Status.FAILED)
    assert "event budget exceeded" in failed.error
    assert job.status == Status.FAILED and "1 of 2 points failed" in job.error
    assert job.done == 2 and Run.objects.count() == 1 and job.comparison_id


def test_watchdog_requeues_a_silent_point_then_gives_up(owner, sent, settings):
    job = simulation_create(spec=tiny_spec(kernels=["2.6.24"], sweep={}), owner=owner)
    point = points.point_claim(point_id=job.points.get().pk, worker="dead@host")
    old = timezone.now() - timedelta(seconds=settings.SIMULATION_STALE_SECONDS + 1)
    SimulationPoint.objects.filter(pk=point.pk).update(heartbeat=old)
    assert tasks.watch() == 1 and sent[-1] == point.pk
    assert SimulationPoint.objects.get(pk=point.pk).status == Status.QUEUED
    assert tasks.watch() == 0  # a fresh queued point is left alone
    SimulationPoint.objects.filter(pk=point.pk).update(
        status=Status.RUNNING, heartbeat=old, attempts=settings.SIMULATION_MAX_ATTEMPTS)
    assert tasks.watch() == 0
    point.refresh_from_db()
    job.refresh_from_db()
    assert point.status == Status.FAILED and "stopped reporting" in point.error
    assert job.status == Status.FAILED


def test_a_point_over_its_time_limit_fails_between_repeats(owner, sent, settings):
    settings.SIMULATION_POINT_TIME_LIMIT = 0
    job = simulation_create(spec=tiny_spec(kernels=["2.6.24"], sweep={}, repeat=3), owner=owner)
    assert run_all(job) == ["failed"]
    assert "time limit exceeded" in job.points.get().error
    assert not Run.objects.exists()


def test_a_transient_database_error_is_retried(owner, sent, monkeypatch):
    from django.db import OperationalError

    real, calls = tasks.point_run_args, []

    def flaky(**kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real(**kwargs)

    monkeypatch.setattr(tasks, "point_run_args", flaky)
    job = simulation_create(spec=tiny_spec(kernels=["2.6.24"], sweep={}), owner=owner)
    run_point.apply(args=[job.points.get().pk])  # an eager retry runs again at once
    point = job.points.get()
    assert len(calls) == 2 and point.status == Status.SUCCEEDED and point.attempts == 2
    assert Run.objects.count() == 1


def test_two_sweep_axes_chart_and_compare_without_mixing_points(owner, sent):
    from simulations.selectors import job_figure

    job = simulation_create(spec=tiny_spec(kernels=["2.6.24"], topology=None,
                                           sweep={"loops": [100000, 1000000], "cpus": [1, 2]}),
                            owner=owner)
    assert set(run_all(job)) == {"stored"}
    job.refresh_from_db()
    assert job.comparison.spec["x"] == "param.loops"
    assert job.comparison.spec["facet"] == "machine.cpus"  # the simulated machine's CPUs
    assert {cell["n"] for cell in job.comparison.frozen["cells"]} == {2}  # one run per cell
    figure = job_figure(job)
    assert [t["name"] for t in figure["data"]] == ["2.6.24 · cpus=1", "2.6.24 · cpus=2"]
    assert figure["data"][1]["x"] == [100000, 1000000]


def test_lost_messages_are_sent_again_only_when_the_queue_cannot_hold_them(owner, sent,
                                                                           settings, monkeypatch):
    job = simulation_create(spec=tiny_spec(), owner=owner)
    assert len(sent) == 4
    assert tasks.watch() == 0  # just sent: nothing is waiting yet
    old = timezone.now() - timedelta(seconds=settings.SIMULATION_RESEND_SECONDS + 1)
    job.points.update(sent=old)
    backlog = {"messages": 4}
    monkeypatch.setattr(tasks, "queue_backlog", lambda: backlog["messages"])
    assert tasks.watch() == 0  # the queue still holds a message per waiting point
    backlog["messages"] = None
    assert tasks.watch() == 0  # the broker cannot say: decide nothing
    backlog["messages"] = 1  # three messages are certainly gone: send all four again
    assert tasks.watch() == 4 and sorted(sent[4:]) == sorted(job.points.values_list("pk",
                                                                                    flat=True))
    assert tasks.watch() == 0  # their clock restarted
    # A duplicate message of a point is skipped by the claim: each point runs once.
    assert [run_point.apply(args=[pk]).get() for pk in sent] == ["stored"] * 4 + ["skipped"] * 4
    assert Run.objects.count() == 4


def test_the_broker_queue_length_is_read_from_the_configured_broker(celery_queue):
    assert tasks.queue_backlog() == 0  # a queue nobody declared holds nothing


def test_polling_a_job_never_writes(owner, sent, settings, client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    job = simulation_create(spec=tiny_spec(kernels=["2.6.24"], sweep={}), owner=owner)
    point = points.point_claim(point_id=job.points.get().pk, worker="dead@host")
    old = timezone.now() - timedelta(seconds=settings.SIMULATION_STALE_SECONDS + 1)
    SimulationPoint.objects.filter(pk=point.pk).update(heartbeat=old)  # a dead worker's point
    with CaptureQueriesContext(connection) as queries:
        for url in (f"/api/v1/simulations/{job.pk}/?points=1&figure=1",
                    f"/simulations/{job.pk}/"):
            assert client.get(url).status_code == 200
    writes = [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(
        ("INSERT", "UPDATE", "DELETE"))]
    assert writes == []
    assert SimulationPoint.objects.get(pk=point.pk).status == Status.RUNNING  # left to workers
    assert tasks.watch() == 1  # the worker's watchdog re-queues it


def test_a_runqueue_cost_sweep_over_tasks_compares_over_runqueue_length(owner, sent):
    """The simulator calls the runqueue length `tasks`; runs and their comparison use the
    portal's name for it, so they sit beside pasted schedule()-cost tables."""
    job = simulation_create(spec=tiny_spec(workload="runqueue-cost", kernels=["2.4"],
                                           params={"duration_ms": 20},
                                           sweep={"tasks": [2, 8]}), owner=owner)
    assert set(run_all(job)) == {"stored"}
    job.refresh_from_db()
    assert job.comparison.spec["x"] == "param.runqueue_length"
    assert job.comparison.frozen["axes"]["x"]["values"] == ["2", "8"]
    assert sorted(r.params["runqueue_length"] for r in Run.objects.all()) == [2, 8]
    assert all("tasks" not in r.params for r in Run.objects.all())


def test_a_sweep_named_as_the_portal_names_it_compares_the_same_way(owner, sent):
    job = simulation_create(spec=tiny_spec(workload="runqueue-cost", kernels=["2.4"],
                                           params={"duration_ms": 20},
                                           sweep={"runqueue_length": [2, 8]}), owner=owner)
    assert set(run_all(job)) == {"stored"}
    job.refresh_from_db()
    assert job.comparison.spec["x"] == "param.runqueue_length"
    assert job.comparison.frozen["axes"]["x"]["values"] == ["2", "8"]

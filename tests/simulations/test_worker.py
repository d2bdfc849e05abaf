"""Simulation jobs through real `celery worker` processes (filesystem broker, Redis in CI)."""

import signal

import pytest

from benchmarks.models import Comparison, MonitorSeries, Run, Sample
from benchmarks.tasks import ping
from simulations.models import SimulationJob, SimulationPoint, Status
from simulations.services import simulation_cancel, simulation_create
from tests.conftest import wait_until
from tests.simulations.conftest import tiny_spec

pytestmark = [pytest.mark.worker, pytest.mark.slow]
SLOW_POINT = {"workload": "threadtest", "params": {"iterations": 4000, "loops": 100000},
              "topology": "1x2x1", "seed": 3}


def finished(job):
    job.refresh_from_db()
    return job.status not in (Status.QUEUED, Status.RUNNING) and job


def test_sweep_lands_one_run_per_point(celery_worker_factory, owner, client):
    job = simulation_create(spec=tiny_spec(), owner=owner)
    celery_worker_factory()
    wait_until(lambda: finished(job), timeout=60, what="the job to finish")
    assert job.status == Status.SUCCEEDED, job.error
    runs = Run.objects.filter(simulation_points__job=job).distinct()
    assert runs.count() == 4 == job.total == job.done
    assert {(r.kernel.version, r.params["loops"]) for r in runs} == {
        ("2.6.22", 100000), ("2.6.22", 1000000), ("2.6.24", 100000), ("2.6.24", 1000000)}
    run = runs.first()
    assert run.source == "simulator" and run.machine.name == "sim-1x2x1"
    assert run.machine.virtualization == "simulated"
    assert Sample.objects.filter(run=run).count() == 2  # one sample per repeat
    assert MonitorSeries.objects.filter(run=run, kind="vmstat").exists()
    sim = run.environment["simulator"]
    assert sim["command"].startswith("python -m simulator run --workload threadtest")
    assert f"--seed {sim['seed']}" in sim["command"] and len(sim["spec_hash"]) == 64
    assert len({p.seed for p in job.points.all()}) == 4  # a derived seed per point
    body = client.get(f"/api/v1/simulations/{job.pk}/").json()
    assert body["status"] == "succeeded" and body["progress"] == {"done": 4, "total": 4}
    assert sorted(body["runs"]) == sorted(runs.values_list("pk", flat=True))
    comparison = Comparison.objects.get(slug=body["comparison"])
    assert comparison.spec["x"] == "param.loops" and comparison.spec["series"] == "kernel"
    figure = client.get(f"/api/v1/simulations/{job.pk}/?figure=1").json()["figure"]
    assert [t["name"] for t in figure["data"]] == ["2.6.22", "2.6.24"]
    assert figure["data"][0]["x"] == [100000, 1000000] and None not in figure["data"][0]["y"]
    assert "figure" not in client.get(f"/api/v1/simulations/{job.pk}/?figure=1&seen=4").json()
    detail = client.get(f"/api/v1/runs/{run.pk}/").json()
    assert detail["provenance"]["simulation"]["id"] == job.pk


def test_cancel_stops_pending_points(celery_worker_factory, owner):
    spec = {**SLOW_POINT, "kernels": ["2.6.24"], "sweep": {"loops": [1, 2, 3, 4, 5, 6]},
            "repeat": 3}
    job = simulation_create(spec=spec, owner=owner)
    celery_worker_factory()
    wait_until(lambda: job.points.filter(status=Status.SUCCEEDED).exists(), timeout=60,
               what="the first point")
    simulation_cancel(job=job, user=owner)
    # The queue is first in, first out: once this ping is answered every point message sent
    # before it has been taken by the worker (and skipped, since its point is cancelled).
    assert ping.delay().get(timeout=60)["pid"]
    job.refresh_from_db()
    assert job.status == Status.CANCELLED
    stored = job.points.filter(status=Status.SUCCEEDED).count()
    assert 1 <= stored < 6
    assert job.points.filter(status=Status.CANCELLED).count() == 6 - stored
    assert Run.objects.count() == stored  # nothing simulated after the cancel was stored
    assert job.points.filter(status=Status.CANCELLED, run__isnull=False).count() == 0


def test_sigkilled_worker_loses_no_point(celery_worker_factory, owner):
    spec = {**SLOW_POINT, "kernels": ["2.6.24"], "sweep": {"loops": [10, 20, 30]}, "repeat": 4}
    job = simulation_create(spec=spec, owner=owner)
    first = celery_worker_factory()
    victim = wait_until(lambda: job.points.filter(status=Status.RUNNING).first(), timeout=60,
                        what="a running point")
    first.stop(signal.SIGKILL)
    assert first.process.returncode == -signal.SIGKILL
    celery_worker_factory()  # a fresh worker; its watchdog re-queues the dead worker's point
    wait_until(lambda: finished(job), timeout=60, what="the job to finish")
    assert job.status == Status.SUCCEEDED, job.error
    points = list(job.points.all())
    assert all(p.run_id for p in points)
    assert Run.objects.count() == len(points) == 3  # every point done exactly once
    assert len({p.run_id for p in points}) == 3
    victim.refresh_from_db()
    assert victim.attempts == 2 and victim.status == Status.SUCCEEDED
    assert SimulationJob.objects.get(pk=job.pk).done == 3
    assert SimulationPoint.objects.filter(job=job, attempts__gt=1).count() >= 1

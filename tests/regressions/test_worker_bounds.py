"""Through a real `celery worker`: a run of 10^6 values is detected within the stated memory
bound, a poisoned task is parked while the worker keeps serving, a lost task is sent again by
the sweep."""

import time
from pathlib import Path

import numpy as np
import pytest
from django.db import connection

from benchmarks.models import Run
from regressions import services, tasks
from regressions.models import DetectionJob, JobState, Regression
from tests.conftest import wait_until
from tests.factories import make_run

pytestmark = [pytest.mark.worker, pytest.mark.slow]
# docs/regressions.md, "Bounds": a detection pass adds at most this much to a worker's memory.
DETECTION_MEMORY_MB = 64


@pytest.fixture
def fast_retries(monkeypatch):
    """Set before the worker starts: retry after 1 s, then 2 s; park after 3 attempts."""
    monkeypatch.setenv("SCHEDBENCH_REGRESSION_RETRY_SECONDS", "1")
    monkeypatch.setenv("SCHEDBENCH_REGRESSION_MAX_ATTEMPTS", "3")


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def job_state(job_id):
    return DetectionJob.objects.get(pk=job_id).state


def test_a_million_values_in_one_run_are_detected_within_the_bound(celery_worker_factory):
    rng = np.random.default_rng(3)
    for kernel, level in (("5.0", 1000), ("5.1", 1000), ("5.2", 1300)):
        make_run(kernel, rng.normal(level, level / 100, 8).tolist())
    worker = celery_worker_factory()
    # The small series is detected first (a finding: the worker has loaded everything a
    # detection pass uses), so the peak after the big run is what that run's pass added.
    wait_until(lambda: Regression.objects.exists() and not DetectionJob.objects.exclude(
        state=JobState.DONE).exists(), timeout=60, what="the small series' finding")
    finding = Regression.objects.get()
    time.sleep(1)
    baseline = peak_rss_mb(worker.process.pid)
    big = make_run("5.3", rng.normal(1300, 13, 1_000_000).tolist())  # queues its detection
    job = DetectionJob.objects.latest("pk")
    assert job.run_ids == [big.pk]
    wait_until(lambda: job_state(job.pk) == JobState.DONE, timeout=180,
               what="detection of the 10^6-value run")
    same = Regression.objects.select_related("good", "bad").get()
    assert same.pk == finding.pk and (same.good.version, same.bad.version) == ("5.1", "5.2")
    assert same.n_bad == 1_000_008 and same.inputs["n_bad_tested"] < 5000
    grown = peak_rss_mb(worker.process.pid) - baseline
    assert grown < DETECTION_MEMORY_MB, f"the worker's peak grew by {grown:.0f} MB"
    assert worker.process.poll() is None


def refuse_findings(refuse: bool) -> None:
    """The database refuses every new finding (a trigger), as a full disk or a broken
    constraint would: detection of a series with a change then fails on every attempt, on
    SQLite and PostgreSQL alike."""
    table = Regression._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql" and refuse:
            cursor.execute("CREATE FUNCTION refuse_finding() RETURNS trigger AS $$ BEGIN "
                           "RAISE EXCEPTION 'findings refused'; END $$ LANGUAGE plpgsql")
            cursor.execute(f"CREATE TRIGGER refuse_finding BEFORE INSERT ON {table} "
                           "FOR EACH ROW EXECUTE FUNCTION refuse_finding()")
        elif connection.vendor == "postgresql":
            cursor.execute(f"DROP TRIGGER refuse_finding ON {table}")
            cursor.execute("DROP FUNCTION refuse_finding()")
        elif refuse:
            cursor.execute(f"CREATE TRIGGER refuse_finding BEFORE INSERT ON {table} "
                           "BEGIN SELECT RAISE(ABORT, 'findings refused'); END")
        else:
            cursor.execute("DROP TRIGGER refuse_finding")


def test_a_poisoned_task_is_parked_and_the_worker_keeps_serving(fast_retries,
                                                                celery_worker_factory):
    worker = celery_worker_factory()
    refuse_findings(True)
    for kernel, level in (("3.0", 1000), ("3.1", 1000), ("3.2", 1500), ("3.3", 1500)):
        make_run(kernel, [level + i for i in (-2, -1, 0, 1, 2)], params={"loops": 1})
    poisoned = DetectionJob.objects.create(run_ids=[Run.objects.latest("pk").pk])
    services.send_task(services.DETECT_TASK, poisoned.run_ids, poisoned.pk)
    malformed = DetectionJob.objects.create(run_ids=["x"])
    services.send_task(services.DETECT_TASK, ["x"], malformed.pk)
    wait_until(lambda: job_state(poisoned.pk) == JobState.PARKED, timeout=90,
               what="the poisoned job to be parked")
    parked = DetectionJob.objects.get(pk=poisoned.pk)
    assert parked.attempts == 3 and "parked after 3 attempt(s)" in parked.last_error
    assert "findings refused" in parked.last_error
    assert DetectionJob.objects.get(pk=malformed.pk).state == JobState.PARKED  # at once
    assert DetectionJob.objects.get(pk=malformed.pk).attempts == 1
    assert not Regression.objects.exists()

    refuse_findings(False)
    for kernel, level in (("4.0", 1000), ("4.1", 1000), ("4.2", 1500), ("4.3", 1500)):
        make_run(kernel, [level + i for i in (-2, -1, 0, 1, 2)])
    wait_until(lambda: Regression.objects.exists(), timeout=60,
               what="a finding after the poison (the worker still serves)")
    assert worker.process.poll() is None


def test_the_sweep_sends_a_lost_task_again(fast_retries, monkeypatch, celery_worker_factory):
    for kernel, level in (("4.0", 1000), ("4.1", 1000), ("4.2", 1500), ("4.3", 1500)):
        make_run(kernel, [level + i for i in (-2, -1, 0, 1, 2)])
    # As if the broker lost every message: jobs queued, no message anywhere.
    jobs = list(DetectionJob.objects.all())
    assert jobs and not Regression.objects.exists()
    from portal.celery import app
    app.control.purge()
    DetectionJob.objects.update(updated=DetectionJob.objects.first().created.replace(
        year=2000))
    celery_worker_factory()
    assert tasks.sweep() == len(jobs)  # what every worker's sweep thread does each minute
    wait_until(lambda: all(job_state(job.pk) == JobState.DONE for job in jobs), timeout=60,
               what="every resent detection job")
    assert Regression.objects.exists()

"""A real worker process on the configured broker (filesystem by default, Redis in CI)."""

import pytest

from benchmarks.tasks import ping
from portal.celery import WORKER_QUERIES_KEPT
from tests.factories import make_run

pytestmark = [pytest.mark.worker, pytest.mark.slow]


def test_round_trip_through_a_real_worker(celery_worker_factory):
    run = make_run("2.6.24", [1.0])
    worker = celery_worker_factory()
    result = ping.delay(run.pk).get(timeout=90)
    assert result["run_found"] is True  # the worker reads the same database
    assert result["pid"] == worker.process.pid  # and it really is the subprocess
    # a worker keeps few logged queries, whatever DEBUG says (portal/celery.py)
    assert result["queries_kept"] == WORKER_QUERIES_KEPT < 9000
    assert ping.delay(run.pk + 1000).get(timeout=60)["run_found"] is False

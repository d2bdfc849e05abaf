"""A private Redis killed mid-sweep and restarted empty: the lost points are sent again by the
workers' watchdog and every point still runs exactly once."""

import shutil
import signal
import subprocess

import pytest

from benchmarks.models import Run
from simulations.models import Status
from simulations.services import simulation_create
from tests.conftest import free_port, wait_until

pytestmark = [pytest.mark.worker, pytest.mark.slow]
RESEND = 5  # seconds; the default is 60, well inside the two minutes promised


class PrivateRedis:
    """redis-server without persistence, so a restart forgets every message."""

    def __init__(self, port: int, folder):
        self.port, self.folder, self.process = port, folder, None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "PrivateRedis":
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(self.answers, timeout=10, what="redis-server to answer")
        return self

    def answers(self) -> bool:
        import redis

        try:
            return redis.Redis(port=self.port, socket_timeout=1).ping()
        except redis.ConnectionError:
            return False

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()


def use_broker(app, url: str) -> None:
    """Point this process's Celery app at another broker (its connection pools are rebuilt)."""
    app.conf.broker_url = url
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def private_redis(tmp_path, monkeypatch, settings):
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is missing (Debian package redis-server)")
    from portal.celery import app

    server = PrivateRedis(free_port(), tmp_path).start()
    previous = app.conf.broker_url
    monkeypatch.setenv("CELERY_BROKER_URL", server.url)  # for the worker processes
    monkeypatch.setenv("SCHEDBENCH_SIMULATION_RESEND", str(RESEND))
    settings.SIMULATION_RESEND_SECONDS = RESEND
    use_broker(app, server.url)
    yield server
    use_broker(app, previous)
    if server.process.poll() is None:
        server.kill()


def test_points_lost_with_the_broker_are_sent_again_and_run_once(
        private_redis, celery_worker_factory, owner):
    spec = {"workload": "threadtest", "params": {"iterations": 3000, "loops": 100000},
            "topology": "1x2x1", "seed": 5, "kernels": ["2.6.24"], "repeat": 2,
            "sweep": {"loops": [10, 20, 30, 40, 50, 60]}}
    job = simulation_create(spec=spec, owner=owner)
    celery_worker_factory()
    wait_until(lambda: job.points.filter(status=Status.SUCCEEDED).exists(), timeout=90,
               what="the first point")
    private_redis.kill()  # every message still queued is gone
    private_redis.start()
    lost = job.points.filter(status=Status.QUEUED).count()
    assert lost >= 1, "the sweep finished before the broker died; make its points slower"
    def finished():
        job.refresh_from_db()
        return job.status not in (Status.QUEUED, Status.RUNNING)

    wait_until(finished, timeout=RESEND + 120, interval=1,
               what="the lost points to be sent again and the job to finish")
    assert job.status == Status.SUCCEEDED, job.error
    points = list(job.points.all())
    assert Run.objects.count() == len(points) == 6  # nothing ran twice
    assert len({p.run_id for p in points}) == 6
    assert all(p.attempts == 1 for p in points)  # each lost point was claimed once, later
    assert job.comparison_id  # the final comparison was made in the worker

"""One Celery task per point. It takes the point id, re-fetches, tolerates deletion and is
idempotent: a point that already has a run is skipped, an identical spec + seed re-uses a run,
and the store step is a conditional UPDATE so a redelivered message never makes a second run."""

import logging
import socket
import threading
import time

from billiard.exceptions import SoftTimeLimitExceeded
from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

import simulator
from benchmarks.services.runs import RunError, run_create

from . import points, watchdog
from .runs import point_run_args

log = logging.getLogger(__name__)
TRANSIENT = (OperationalError, InterfaceError)


class PointStopped(Exception):
    """The point was cancelled or taken away while it ran; its result is not wanted."""


class PointTimeout(Exception):
    pass


class Heartbeat:
    """Touch the point every few seconds from a side thread while the simulator runs, so the
    watchdog can tell a slow point from one whose worker was killed."""

    def __init__(self, point_id: int):
        self.point_id = point_id
        self.stopped = threading.Event()  # the point is no longer ours
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name=f"heartbeat-{point_id}")

    def _loop(self):
        try:
            while not self._done.wait(settings.SIMULATION_HEARTBEAT_SECONDS):
                try:
                    if not points.point_beat(point_id=self.point_id):
                        self.stopped.set()
                except TRANSIENT:
                    log.warning("heartbeat of point %s failed; will retry", self.point_id)
        finally:
            connection.close()  # this thread's own connection

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join(timeout=30)


def _simulate(point, beat: Heartbeat) -> dict:
    deadline = time.monotonic() + settings.SIMULATION_POINT_TIME_LIMIT

    def between_repeats(done, total):
        # The solo pool has no Celery time limits and cancel must not wait for the whole point.
        if beat.stopped.is_set():
            raise PointStopped()
        if time.monotonic() > deadline:
            raise PointTimeout()

    return simulator.run(point.spec, progress=between_repeats)


def _execute(point) -> bool:
    with Heartbeat(point.pk) as beat:
        result = _simulate(point, beat)
    if beat.stopped.is_set():
        raise PointStopped()
    arguments = point_run_args(point=point, result=result)  # reads, before the transaction
    return points.point_store(point=point, build_run=lambda: (
        run_create(**arguments), result["counters"].get("events", 0), result["wall_seconds"]))


# The point row is the result (status, error, run): nothing is stored in the result backend.
@shared_task(bind=True, name="simulations.run_point", acks_late=True, max_retries=3,
             ignore_result=True,
             soft_time_limit=settings.SIMULATION_POINT_TIME_LIMIT + 30,
             time_limit=settings.SIMULATION_POINT_TIME_LIMIT + 90)
def run_point(self, point_id: int) -> str:
    try:
        point = points.point_claim(point_id=point_id,
                                   worker=self.request.hostname or socket.gethostname())
    except TRANSIENT as exc:  # the database is restarting: try again shortly
        raise self.retry(exc=exc, countdown=2 ** self.request.retries) from exc
    if point is None:
        return "skipped"  # done, running elsewhere, cancelled or deleted
    try:
        if points.point_reuse(point=point):
            outcome = "reused"
        else:
            outcome = "stored" if _execute(point) else "duplicate"
    except PointStopped:
        outcome = "stopped"
    except TRANSIENT as exc:
        if self.request.retries >= self.max_retries:
            points.point_fail(point_id=point.pk, error=f"database unavailable: {exc}")
            outcome = "failed"
        else:
            points.point_release(point_id=point.pk)
            raise self.retry(exc=exc, countdown=2 ** self.request.retries) from exc
    except (PointTimeout, SoftTimeLimitExceeded):
        points.point_fail(point_id=point.pk, error="time limit exceeded: the point ran longer "
                          f"than {settings.SIMULATION_POINT_TIME_LIMIT} s")
        outcome = "failed"
    except RunError as exc:
        points.point_fail(point_id=point.pk, error=f"the result cannot be stored: {exc}")
        outcome = "failed"
    except simulator.SimulatorError as exc:
        points.point_fail(point_id=point.pk, error=str(exc))
        outcome = "failed"
    except Exception as exc:  # a bug must fail this point, not stall the job
        log.exception("simulation point %s crashed", point.pk)
        points.point_fail(point_id=point.pk, error=f"internal error: {exc!r}")
        outcome = "failed"
    points.job_refresh(job_id=point.job_id)
    watchdog.check_throttled()
    return outcome

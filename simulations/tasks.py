"""One Celery task per point, and the watchdog loop that re-sends lost ones.

The point task takes the point id, re-fetches, tolerates deletion and is idempotent: a point that
already has a run is skipped, an identical spec + seed re-uses a run, and the store step is a
conditional UPDATE so a redelivered message never makes a second run.

The watchdog (see watchdog.py for what it decides) runs only in workers: a thread in every worker
process every SIMULATION_HEARTBEAT_SECONDS (started on worker_ready), and at the end of every point
task (throttled per process). Several of them racing is harmless: each re-queue is a conditional
UPDATE that one of them wins.
"""

import logging
import socket
import threading
import time

from billiard.exceptions import SoftTimeLimitExceeded
from celery import current_app, shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

import simulator
from benchmarks.services.runs import RunError, run_create
from benchmarks.workers import run_in_every_worker

from . import points, replay_points, run_traces, watchdog
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
    if replay_points.is_replay(point.spec):
        return _execute_replay(point)
    with Heartbeat(point.pk) as beat:
        result = _simulate(point, beat)
    if beat.stopped.is_set():
        raise PointStopped()
    arguments = point_run_args(point=point, result=result)  # reads, before the transaction
    stored = points.point_store(point=point, build_run=lambda: (
        run_create(**arguments), result["counters"].get("events", 0), result["wall_seconds"]))
    if stored and point.job.spec.get("trace"):
        run_traces.point_trace_attach(point_id=point.pk, result=result)
    return stored


def _execute_replay(point) -> bool:
    """Replay the point's trace (its raw artifact file) on the point's kernel."""
    with Heartbeat(point.pk) as beat:
        result = run_traces.point_replay(point)
    if beat.stopped.is_set():
        raise PointStopped()
    return points.point_store_result(
        point=point, result=replay_points.replay_summary(result),
        events=result["counters"].get("events", 0), wall=result["wall_seconds"])


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
    watch_throttled()
    return outcome


def points_send(point_ids: list[int]) -> None:
    for point_id in point_ids:
        run_point.apply_async(args=[point_id])


def queue_backlog() -> int | None:
    """Messages waiting in the broker's default queue; None when the broker cannot be asked."""
    queue = current_app.conf.task_default_queue
    conn = current_app.connection_for_read()
    try:
        with conn:
            conn.ensure_connection(max_retries=1)
            return conn.default_channel.queue_declare(queue=queue, passive=True).message_count
    except conn.channel_errors:
        return 0  # a queue the broker does not know holds nothing (Redis drops empty lists)
    except Exception:  # the broker is down or restarting: decide nothing this time
        log.warning("simulation watchdog: cannot read the broker's queue length", exc_info=True)
        return None


def watch() -> int:
    """One watchdog pass: re-send points of dead workers and points whose message was lost."""
    resend = watchdog.stale_points_reclaim()
    if watchdog.waiting_points().exists():
        backlog = queue_backlog()
        if backlog is not None:
            resend += watchdog.lost_points_reclaim(backlog=backlog)
    if resend:
        log.warning("simulation watchdog: re-sending points %s", resend)
        points_send(resend)
    return len(resend)


_last_watch = 0.0


def watch_throttled() -> None:
    """The whole-site check, at most once per heartbeat interval in this process."""
    global _last_watch
    if time.monotonic() - _last_watch < settings.SIMULATION_HEARTBEAT_SECONDS:
        return
    _last_watch = time.monotonic()
    watch()


def connect_worker_signals() -> None:
    run_in_every_worker(name="simulation-watchdog",
                        every=lambda: settings.SIMULATION_HEARTBEAT_SECONDS, duty=watch)

"""Re-queueing points whose worker died.

Tasks are acknowledged late, so on Redis a killed worker's message comes back after the
visibility timeout; the filesystem broker never re-delivers. Either way a point that is
`running` but whose heartbeat is older than SIMULATION_STALE_SECONDS is handed back to the queue
(or failed after SIMULATION_MAX_ATTEMPTS tries) by `requeue_stale`. No beat process is needed;
the check runs from three places:
- a thread in every worker process, every SIMULATION_HEARTBEAT_SECONDS (started on worker_ready),
- the end of every point task (throttled per process),
- polling a job's progress (the API and the job page; throttled per job through `checked`).
Several of them racing is harmless: each re-queue is a conditional UPDATE that one of them wins.
"""

import logging
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Q
from django.utils import timezone

from . import points
from .models import ACTIVE, SimulationJob, SimulationPoint, Status

log = logging.getLogger(__name__)
_last_check = 0.0


def requeue_stale(*, job_id: int | None = None) -> int:
    """Re-send points that stopped reporting; returns how many were re-queued."""
    now = timezone.now()
    stale = SimulationPoint.objects.filter(status=Status.RUNNING,
                                           heartbeat__lt=points.stale_cutoff())
    # A message lost between delivery and claim (filesystem broker) leaves a queued point behind:
    # re-send queued points of live jobs once they have waited SIMULATION_RESEND_SECONDS.
    forgotten = SimulationPoint.objects.filter(
        status=Status.QUEUED, job__status__in=ACTIVE,
        sent__lt=now - timedelta(seconds=settings.SIMULATION_RESEND_SECONDS))
    if job_id is not None:
        stale, forgotten = stale.filter(job_id=job_id), forgotten.filter(job_id=job_id)
    resend, touched = [], set()
    for point in stale.only("pk", "job_id", "attempts", "heartbeat")[:200]:
        touched.add(point.job_id)
        if point.attempts >= settings.SIMULATION_MAX_ATTEMPTS:
            points.point_fail(point_id=point.pk, error=(
                f"its worker stopped reporting {point.attempts} times (killed, out of memory, "
                "or the host went away); not retried again"))
        elif SimulationPoint.objects.filter(pk=point.pk, status=Status.RUNNING,
                                            heartbeat=point.heartbeat).update(
                status=Status.QUEUED, heartbeat=None, sent=now):
            resend.append(point.pk)
    for point in forgotten.only("pk", "sent")[:200]:
        if SimulationPoint.objects.filter(pk=point.pk, status=Status.QUEUED,
                                          sent=point.sent).update(sent=now):
            resend.append(point.pk)
    if resend:
        log.warning("simulation watchdog: re-queueing points %s", resend)
        points.points_send(resend)
    for job in touched:
        points.job_refresh(job_id=job)
    return len(resend)


def check_throttled() -> None:
    """The whole-site check, at most once per heartbeat interval in this process."""
    global _last_check
    if time.monotonic() - _last_check < settings.SIMULATION_HEARTBEAT_SECONDS:
        return
    _last_check = time.monotonic()
    requeue_stale()


def job_watch(*, job: SimulationJob) -> None:
    """Called when someone polls a live job: check its points, at most once per interval."""
    if job.status not in ACTIVE:
        return
    now = timezone.now()
    recent = now - timedelta(seconds=settings.SIMULATION_HEARTBEAT_SECONDS)
    if SimulationJob.objects.filter(Q(checked__isnull=True) | Q(checked__lt=recent),
                                    pk=job.pk).update(checked=now):
        requeue_stale(job_id=job.pk)


def _watch_forever(stop: threading.Event) -> None:
    while not stop.wait(settings.SIMULATION_HEARTBEAT_SECONDS):
        try:
            requeue_stale()
        except DatabaseError:
            log.exception("simulation watchdog: check failed")
        finally:
            connection.close()  # no connection left open across a pool fork


_started = threading.Event()


def _on_worker_ready(**_kwargs) -> None:
    if _started.is_set():
        return
    _started.set()
    threading.Thread(target=_watch_forever, args=(threading.Event(),), daemon=True,
                     name="simulation-watchdog").start()


def connect_worker_signals() -> None:
    from celery.signals import worker_ready

    worker_ready.connect(_on_worker_ready, weak=False, dispatch_uid="simulation-watchdog")

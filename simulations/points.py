"""The life of a point, shared by the task and the watchdog. Sending messages is tasks.py's
job: this module never imports it, so the modules of the package form no import cycle.

Every transition is a conditional UPDATE, so two workers handed the same point (a redelivered
message, a watchdog re-queue racing a slow worker) can never both store a run: the first to flip
the point to `succeeded` wins and the loser's transaction is never written.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Q, Sum, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from .comparison import job_comparison
from .models import ACTIVE, SimulationJob, SimulationPoint, Status

log = logging.getLogger(__name__)


def stale_cutoff():
    return timezone.now() - timedelta(seconds=settings.SIMULATION_STALE_SECONDS)


def point_claim(*, point_id: int, worker: str) -> SimulationPoint | None:
    """Take a queued point, or a running one whose worker stopped reporting; None otherwise."""
    now = timezone.now()
    claimable = Q(status=Status.QUEUED) | Q(status=Status.RUNNING, heartbeat__lt=stale_cutoff())
    taken = SimulationPoint.objects.filter(claimable, pk=point_id, run__isnull=True).update(
        status=Status.RUNNING, attempts=F("attempts") + 1, heartbeat=now, started=now,
        worker=worker[:200], error="")
    if not taken:
        return None
    point = SimulationPoint.objects.select_related("job__owner").filter(pk=point_id).first()
    if point is not None and point.job.status == Status.QUEUED:
        SimulationJob.objects.filter(pk=point.job_id, status=Status.QUEUED).update(
            status=Status.RUNNING, started=now)
    return point


def point_beat(*, point_id: int) -> bool:
    """Heartbeat; False when the point is no longer ours to run (cancelled, deleted)."""
    return bool(SimulationPoint.objects.filter(pk=point_id, status=Status.RUNNING).update(
        heartbeat=timezone.now()))


def point_reuse(*, point: SimulationPoint) -> bool:
    """Link the run of an identical point spec (same simulator version, spec and seed)."""
    run_id = (SimulationPoint.objects.filter(spec_hash=point.spec_hash, run__isnull=False)
              .exclude(pk=point.pk).values_list("run_id", flat=True).first())
    if run_id is None:
        return False
    SimulationPoint.objects.filter(pk=point.pk, status__in=ACTIVE, run__isnull=True).update(
        status=Status.SUCCEEDED, run_id=run_id, reused=True, finished=timezone.now())
    return True


class _Lost(Exception):
    pass


def point_store(*, point: SimulationPoint, build_run) -> bool:
    """Write the run and flip the point to succeeded in one transaction; False if another
    attempt got there first (its row lock makes our UPDATE wait, then match nothing, and the
    run we wrote is rolled back)."""
    try:
        with transaction.atomic():
            run, events, wall = build_run()
            won = SimulationPoint.objects.filter(
                pk=point.pk, status__in=ACTIVE, run__isnull=True).update(
                status=Status.SUCCEEDED, finished=timezone.now(), run=run, events=events,
                wall_seconds=wall)
            if not won:
                raise _Lost()
    except _Lost:
        return False
    return True


def point_store_result(*, point: SimulationPoint, result: dict, events: int,
                       wall: float) -> bool:
    """A replay point's result (no run): the same conditional flip as point_store."""
    return bool(SimulationPoint.objects.filter(
        pk=point.pk, status__in=ACTIVE, run__isnull=True).update(
        status=Status.SUCCEEDED, finished=timezone.now(), result=result, events=events,
        wall_seconds=wall))


def point_fail(*, point_id: int, error: str) -> None:
    SimulationPoint.objects.filter(pk=point_id, status__in=ACTIVE).update(
        status=Status.FAILED, error=error[:2000], finished=timezone.now(), heartbeat=None)


def point_release(*, point_id: int) -> None:
    """Give a point back to the queue (a transient failure; the task is retried)."""
    SimulationPoint.objects.filter(pk=point_id, status=Status.RUNNING).update(
        status=Status.QUEUED, heartbeat=None, sent=timezone.now())


def job_refresh(*, job_id: int) -> None:
    """Recount progress from the points (idempotent) and finish the job when none is left."""
    counts = SimulationPoint.objects.filter(job_id=job_id).aggregate(
        done=Count("pk", filter=Q(status__in=(Status.SUCCEEDED, Status.FAILED))),
        failed=Count("pk", filter=Q(status=Status.FAILED)),
        active=Count("pk", filter=Q(status__in=ACTIVE)),
        events=Sum("events"))
    # Counts only grow (a finished point stays finished), so an UPDATE from a refresh that read
    # an older state and lands after a newer one can never move progress backwards.
    SimulationJob.objects.filter(pk=job_id).update(
        done=Greatest(F("done"), Value(counts["done"])),
        failed=Greatest(F("failed"), Value(counts["failed"])),
        events=Greatest(F("events"), Value(counts["events"] or 0)))
    if counts["active"] == 0:
        job_finish(job_id=job_id, failed=counts["failed"])


def _failure_summary(job_id: int, failed: int, total: int) -> str:
    first = (SimulationPoint.objects.filter(job_id=job_id, status=Status.FAILED)
             .order_by("index").first())
    if first is None:
        return ""
    return f"{failed} of {total} points failed; first, {first.label}: {first.error}"


def job_finish(*, job_id: int, failed: int) -> None:
    """Mark the job finished once (a conditional UPDATE elects one finisher) and compare it.
    Called from the worker (after a point, or by its watchdog) and from POSTs, never a GET."""
    with transaction.atomic():
        job = SimulationJob.objects.filter(pk=job_id).first()
        if job is None or job.status not in ACTIVE:
            return
        status = Status.FAILED if failed else Status.SUCCEEDED
        error = _failure_summary(job_id, failed, job.total) if failed else ""
        won = SimulationJob.objects.filter(pk=job_id, status__in=ACTIVE).update(
            status=status, finished=timezone.now(), error=error)
        if not won:
            return
        comparison = job_comparison(job)
        if comparison is not None:
            SimulationJob.objects.filter(pk=job_id).update(comparison=comparison)

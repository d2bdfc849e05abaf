"""The ledger of detection tasks: claim, finish, fail, park, and find the lost ones.

Every detection message names a DetectionJob row written with its runs. A worker claims the row
before working (a conditional UPDATE, counting the attempt), so:
- a task that raises (MemoryError included) is recorded and retried with a growing delay;
- a task whose worker died mid-run is found by the sweep once its row stops moving (STALE
  seconds) and sent again; its attempts still count;
- a job that failed MAX_ATTEMPTS times is parked (state `parked`, visible to staff in the admin
  with its last error) and its message acknowledged: no poison message redelivered forever;
- a queued job whose message the broker lost is sent again after RESEND seconds.
Duplicates are harmless: a second copy finds the row claimed or done and does nothing.
"""

import traceback
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.db.models import F, Q
from django.utils import timezone

from .models import DetectionJob, JobState

KEEP_DONE = timedelta(days=7)
BATCH = 200


def _setting(name: str, default: int) -> int:
    """The setting REGRESSION_<name> (portal/settings.py reads $SCHEDBENCH_REGRESSION_<name>);
    `default` for settings modules that leave it out."""
    return max(1, int(getattr(settings, f"REGRESSION_{name}", default)))


def max_attempts() -> int:
    return _setting("MAX_ATTEMPTS", 4)


def retry_delay(attempts: int) -> int:
    """Seconds before attempt `attempts + 1`: RETRY_SECONDS, doubled each time."""
    return _setting("RETRY_SECONDS", 30) * 2 ** max(0, attempts - 1)


def sweep_seconds() -> int:
    return _setting("SWEEP_SECONDS", 60)


def stale_seconds() -> int:
    return _setting("STALE_SECONDS", 900)


def resend_seconds() -> int:
    # Longer than the longest retry delay, so a retry the broker still holds is not doubled.
    return max(_setting("RESEND_SECONDS", 120), retry_delay(max_attempts()) + 60)


@dataclass(frozen=True)
class Claim:
    job: DetectionJob
    park: bool  # it has failed too often: park it instead of running it


def job_for(run_ids, job_id) -> int:
    """The ledger row of a message; a message without one (sent by hand, or by an older
    version) gets one now."""
    if job_id is not None and DetectionJob.objects.filter(pk=job_id).exists():
        return int(job_id)
    return DetectionJob.objects.create(run_ids=run_ids if isinstance(run_ids, list) else
                                       [repr(run_ids)[:200]]).pk


def job_claim(*, job_id: int) -> Claim | None:
    """Take the job for this worker, counting the attempt; None when it is not to be run
    (done, parked, or running elsewhere and still moving)."""
    now = timezone.now()
    stale = now - timedelta(seconds=stale_seconds())
    claimable = (Q(state__in=[JobState.QUEUED, JobState.RETRYING])
                 | Q(state=JobState.RUNNING, updated__lt=stale))
    if not DetectionJob.objects.filter(claimable, pk=job_id).update(
            state=JobState.RUNNING, attempts=F("attempts") + 1, updated=now):
        return None
    job = DetectionJob.objects.get(pk=job_id)
    return Claim(job=job, park=job.attempts > max_attempts())


def job_done(*, job_id: int) -> None:
    DetectionJob.objects.filter(pk=job_id).update(state=JobState.DONE, last_error="",
                                                  updated=timezone.now())


def job_failed(*, job_id: int, error: BaseException, permanent: bool = False) -> int | None:
    """Record the failure; the delay before the next attempt, or None when the job is parked
    (failed MAX_ATTEMPTS times, or `permanent`: the message itself is malformed)."""
    _reset_connection()
    text = "".join(traceback.format_exception_only(type(error), error)).strip()[:4000]
    job = DetectionJob.objects.get(pk=job_id)
    if permanent or job.attempts >= max_attempts():
        job_park(job_id=job_id, reason=text)
        return None
    DetectionJob.objects.filter(pk=job_id).update(state=JobState.RETRYING, last_error=text,
                                                  updated=timezone.now())
    return retry_delay(job.attempts)


def job_park(*, job_id: int, reason: str) -> None:
    DetectionJob.objects.filter(pk=job_id).update(
        state=JobState.PARKED, updated=timezone.now(),
        last_error=f"parked after {DetectionJob.objects.get(pk=job_id).attempts} "
                   f"attempt(s): {reason}"[:4000])


def _reset_connection() -> None:
    """After a failure the connection may be in an aborted transaction (PostgreSQL) or broken:
    start afresh so the failure itself can be recorded."""
    if connection.in_atomic_block:
        return
    if connection.connection is not None and not connection.is_usable():
        connection.close()


def lost_jobs() -> list[tuple[int, list]]:
    """Jobs to send again: queued or retrying ones whose message is overdue (lost), running
    ones whose worker stopped (the row has not moved for STALE seconds). Also forgets done
    jobs older than a week."""
    now = timezone.now()
    overdue = now - timedelta(seconds=resend_seconds())
    stale = now - timedelta(seconds=stale_seconds())
    rows = DetectionJob.objects.filter(
        Q(state__in=[JobState.QUEUED, JobState.RETRYING], updated__lt=overdue)
        | Q(state=JobState.RUNNING, updated__lt=stale)).order_by("updated")
    resend = []
    for job in rows.only("pk", "state", "updated", "run_ids")[:BATCH]:
        # Conditional: of several sweeps racing, one sends it.
        if DetectionJob.objects.filter(pk=job.pk, state=job.state, updated=job.updated).update(
                state=JobState.QUEUED if job.state == JobState.RUNNING else job.state,
                updated=now):
            resend.append((job.pk, job.run_ids))
    DetectionJob.objects.filter(state=JobState.DONE, updated__lt=now - KEEP_DONE).delete()
    return resend

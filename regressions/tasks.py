"""Celery tasks: detection after an ingest, mail about new findings, and the sweep. They take
ids, re-read the database (a run deleted meanwhile simply drops out) and are safe to run twice.

Detection never lets an error reach Celery: Celery treats MemoryError as unrecoverable and
stops the worker, and the message (acks_late) would come back to stop the next one. Every
failure is recorded on the job's ledger row (regressions.jobs) and retried with a growing delay;
a job that failed too often is parked.

The sweep runs in every worker (a thread started on worker_ready, as the simulation watchdog
does): every SWEEP_SECONDS it sends again the detection jobs whose message was lost or whose
worker died, so a lost task costs minutes, not a finding.
"""

import logging

from celery import shared_task

from benchmarks.errors import InputError
from benchmarks.workers import run_in_every_worker

from . import jobs, notifications, services

log = logging.getLogger(__name__)


def checked_run_ids(run_ids) -> list[int]:
    """The message's run ids, or InputError: a malformed message is parked at once."""
    if not isinstance(run_ids, list) or not all(
            isinstance(pk, int) and not isinstance(pk, bool) for pk in run_ids):
        raise InputError(f"run_ids must be a list of integers, not {run_ids!r:.100}")
    return run_ids


@shared_task(bind=True, name=services.DETECT_TASK, acks_late=True, ignore_result=True)
def detect_runs(self, run_ids: list[int], job_id: int | None = None) -> str:
    job_id = jobs.job_for(run_ids, job_id)
    claim = jobs.job_claim(job_id=job_id)
    if claim is None:
        return "skipped"
    if claim.park:
        jobs.job_park(job_id=job_id, reason=claim.job.last_error or "its worker stopped")
        return "parked"
    try:
        services.regressions_detect_runs(run_ids=checked_run_ids(claim.job.run_ids))
    except InputError as exc:
        jobs.job_failed(job_id=job_id, error=exc, permanent=True)
        return "parked"
    except Exception as exc:  # noqa: BLE001 - MemoryError included: recorded, never raised
        log.exception("detection job %s failed (attempt %s)", job_id, claim.job.attempts)
        delay = jobs.job_failed(job_id=job_id, error=exc)
        if delay is None:
            return "parked"
        services.send_task(services.DETECT_TASK, claim.job.run_ids, job_id, countdown=delay)
        return "retrying"
    jobs.job_done(job_id=job_id)
    return "done"


@shared_task(name=services.MAIL_TASK, ignore_result=True)
def mail_new(regression_ids: list[int]) -> int:
    # Not acks_late: mail sent twice after a crash is worse than mail lost once.
    return notifications.new_findings_mail(regression_ids=regression_ids)


def sweep() -> int:
    """One pass: send again the detection jobs that were lost; how many."""
    resend = jobs.lost_jobs()
    if resend:
        log.warning("regression sweep: sending detection jobs %s again",
                    [pk for pk, _ in resend])
    for job_id, run_ids in resend:
        services.send_task(services.DETECT_TASK, run_ids, job_id)
    return len(resend)


def connect_worker_signals() -> None:
    run_in_every_worker(name="regression-sweep", every=jobs.sweep_seconds, duty=sweep)

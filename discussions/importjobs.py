"""mbox imports as jobs. The request stores the file, queues the task and waits a moment
(SCHEDBENCH_IMPORT_WAIT) so a small import still answers with its result; a large one answers
at once with a progress URL and a worker does the work, whatever its size."""

import logging
import time
import uuid
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from benchmarks.errors import RateLimited, TooLarge

from .importer import mbox_import
from .models import ImportJob, ImportStatus
from .targets import Target, TargetError, target_resolve

IMPORT_TASK = "discussions.import_mbox"
log = logging.getLogger(__name__)
ACTIVE = (ImportStatus.QUEUED, ImportStatus.RUNNING)


class ImportTooLarge(TooLarge):
    """The stored mbox would be over the upload limit (413)."""


class ImportRateLimited(RateLimited):
    """Over the imports-per-hour limit (429)."""


def imports_per_hour() -> int:
    """Imports one user may start per hour. An import brings a whole archive (up to the upload
    limit), so it has its own limit rather than counting each message as a post written."""
    return getattr(settings, "DISCUSSIONS_IMPORTS_PER_HOUR", 10)


def _check_import_rate(user) -> None:
    since = timezone.now() - timedelta(hours=1)
    if ImportJob.objects.filter(owner=user, created__gte=since).count() >= imports_per_hour():
        raise ImportRateLimited(f"at most {imports_per_hour()} mbox imports an hour; "
                                "try again later")


def import_job_create(*, upload, user, target: Target | None, site_url: str) -> ImportJob:
    """Store the uploaded mbox and queue its import once the job row is committed."""
    _check_import_rate(user)
    limit = settings.MAX_UPLOAD_MB << 20
    if upload.size > limit:
        raise ImportTooLarge(f"file: {upload.size} bytes is over the limit of "
                             f"{settings.MAX_UPLOAD_MB} MB")
    job = ImportJob(owner=user, filename=(upload.name or "")[:255], size=upload.size,
                    target_type=target.type if target else "",
                    target_id=target.id if target else "", site_url=site_url[:300])
    job.file.save(f"{uuid.uuid4().hex}.mbox", upload, save=False)
    with transaction.atomic():
        job.save()
        transaction.on_commit(lambda: current_app.tasks[IMPORT_TASK].delay(job.pk))
    return job


def import_job_wait(*, job: ImportJob, seconds: float) -> ImportJob:
    """Re-read the job until it finishes or `seconds` pass (a read-only wait)."""
    deadline = time.monotonic() + seconds
    pause = 0.05
    while job.is_active and time.monotonic() < deadline:
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, 0.5)
        job.refresh_from_db()
    return job


def _progress(job_id: int):
    def report(stage: str, done: int, total: int) -> None:
        ImportJob.objects.filter(pk=job_id).update(stage=stage, done=done, total=total)
    return report


def _finish(job_id: int, *, report: dict | None, error: str) -> None:
    status = ImportStatus.FAILED if error else ImportStatus.SUCCEEDED
    ImportJob.objects.filter(pk=job_id).update(status=status, report=report, error=error[:2000],
                                               stage="", finished=timezone.now())


def import_job_run(*, job_id: int) -> str:
    """Run by the worker. A job already finished (a redelivered message) is left alone."""
    if not ImportJob.objects.filter(pk=job_id, status__in=ACTIVE).update(
            status=ImportStatus.RUNNING, started=timezone.now()):
        return "skipped"
    job = ImportJob.objects.select_related("owner").get(pk=job_id)
    try:
        target = target_resolve(job.target_type, job.target_id) if job.target_type else None
    except TargetError as exc:  # the run or comparison went away since the upload
        _finish(job_id, report=None, error=str(exc))
        return "failed"
    try:
        stored = job.file.open("rb")
    except OSError as exc:
        _finish(job_id, report=None, error=f"the uploaded file is gone: {exc}")
        return "failed"
    try:
        with stored:  # read a block at a time by the import, never whole
            report = mbox_import(data=stored, user=job.owner, target=target,
                                 site_url=job.site_url, progress=_progress(job_id)).as_dict()
    except Exception as exc:  # a bug must not leave the job running forever
        # The import is one transaction, rolled back by now: nothing of it was stored.
        log.exception("mbox import job %s failed", job_id)
        _finish(job_id, report=None, error=f"the import failed ({type(exc).__name__}); nothing "
                "was stored and the error is logged")
        return "failed"
    error = ""
    if not report["imported"] and not report["skipped"]:
        error = report["problems"][0]["reason"] if report["problems"] else "no messages found"
    _finish(job_id, report=report, error=error)
    return "failed" if error else "imported"


def import_job_json(job: ImportJob, *, url: str) -> dict:
    return {"id": job.pk, "url": url, "page": job.get_absolute_url(), "status": job.status,
            "progress": {"stage": job.stage, "done": job.done, "total": job.total},
            "filename": job.filename, "error": job.error or None, "result": job.report}

"""Trace uploads as jobs (docs/traces.md, "Big traces in the background"). The request stores
the file and queues its ingest once the job row is committed, then waits a moment
(SCHEDBENCH_IMPORT_WAIT) so a small trace still answers 201 with its result; a big one answers
202 with a progress URL and a worker ingests it, streaming the stored file, whatever its size.

Uploads of at most TRACE_INLINE_KB are ingested in the request itself: a queue round trip
would only add latency to what takes a fraction of a second (and the harness's uploads stay
synchronous). Everything larger goes to the worker."""

import io
import logging
import time
import uuid

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from benchmarks.errors import InputError

from . import services
from .models import TraceJob
from .models import TraceJobStatus as Status

INGEST_TASK = "traces.ingest_trace"
ACTIVE = (Status.QUEUED, Status.RUNNING)
PROGRESS_EVERY_S = 0.25  # at most four progress writes a second, whatever the file's size
log = logging.getLogger(__name__)


class _JobGone(Exception):
    """The job was deleted, or another run of it stored its trace first: undo ours."""


def inline_limit_bytes() -> int:
    return getattr(settings, "TRACE_INLINE_KB", 1024) * 1024


def trace_job_create(*, upload, owner, run_id: int | None, format: str | None,
                     title: str) -> TraceJob:
    """Refuse what can be refused at once (size, format, the run), store the file, then ingest
    it here (small) or queue it for a worker once the job row is committed."""
    services.trace_upload_check(owner=owner, size=upload.size, format=format, run_id=run_id)
    job = TraceJob(owner=owner, filename=(upload.name or "trace.txt")[:255], size=upload.size,
                   total=upload.size, run_id_given=run_id, format=format or "",
                   title=title[:200])
    # Django moves (or copies in chunks) the spooled upload: it never sits in memory whole.
    job.file.save(f"{uuid.uuid4().hex}.trace", upload, save=False)
    inline = upload.size <= inline_limit_bytes()
    with transaction.atomic():
        job.save()
        if not inline:
            transaction.on_commit(lambda: _queue(job.pk))
    if inline:
        trace_job_run(job_id=job.pk)
    job.refresh_from_db()
    return job


def _queue(job_id: int) -> None:
    from . import tasks  # registers the task (traces/apps.py does not import it)

    tasks.ingest_trace.delay(job_id)


def trace_job_wait(*, job: TraceJob, seconds: float) -> TraceJob:
    """Re-read the job until it finishes or `seconds` pass (a read-only wait)."""
    deadline = time.monotonic() + seconds
    pause = 0.05
    while job.is_active and time.monotonic() < deadline:
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, 0.5)
        job.refresh_from_db()
    return job


class _Counting(io.RawIOBase):
    """The stored file, reporting how many of its bytes were read (throttled): first while it
    is parsed, then (after the rewind) while the raw file is kept as an artifact."""

    STAGES = ("parsing", "keeping the raw file")

    def __init__(self, handle, report):
        self._handle, self._report = handle, report
        self._pass = 0
        self._read, self._next = 0, time.monotonic() + PROGRESS_EVERY_S

    def readable(self):
        return True

    def readinto(self, buffer):
        count = self._handle.readinto(buffer)
        self._read += count or 0
        if time.monotonic() >= self._next:
            self._report(self.STAGES[self._pass], self._read)
            self._next = time.monotonic() + PROGRESS_EVERY_S
        return count

    def seekable(self):
        return True

    def seek(self, offset, whence=io.SEEK_SET):
        position = self._handle.seek(offset, whence)
        if position < self._read:
            self._pass = 1
        self._read = position
        return position

    def tell(self):
        return self._handle.tell()


def _progress(job_id: int):
    def report(stage: str, done: int) -> None:
        TraceJob.objects.filter(pk=job_id).update(stage=stage, done=done)
    return report


def _link(job_id: int):
    """Inside the storing transaction: tie the trace to the job, or undo it when the job is
    gone or another run of this job got there first (so a re-run never stores a second)."""
    def link(trace) -> None:
        body = {"id": trace.pk, "url": trace.get_absolute_url(),
                "api_url": reverse("api-trace-detail", args=[trace.pk]),
                "events": trace.events, "cpus": trace.cpus, "tasks": trace.tasks_count,
                "duration_ms": trace.duration_ms, "format": trace.format,
                "warnings": trace.warnings}
        linked = TraceJob.objects.filter(pk=job_id, trace__isnull=True, status=Status.RUNNING)
        if not linked.update(trace=trace, result=body, status=Status.SUCCEEDED, stage="",
                             finished=timezone.now(), done=F("total"), file=""):
            raise _JobGone
    return link


def _fail(job_id: int, error: InputError) -> None:
    TraceJob.objects.filter(pk=job_id, status=Status.RUNNING).update(
        status=Status.FAILED, stage="", finished=timezone.now(), error=error.message[:2000],
        error_field=(error.field or "")[:32], error_line=error.line,
        error_status=error.status, file="")


def _ingest(job: TraceJob) -> None:
    try:
        handle = job.file.open("rb")
    except (OSError, ValueError) as exc:
        raise InputError(f"the uploaded file is gone: {exc}", field="file", status=410) from None
    try:
        stream = io.BufferedReader(_Counting(handle, _progress(job.pk)), 1 << 16)
        services.trace_ingest(
            stream=stream, filename=job.filename, owner=job.owner, run_id=job.run_id_given,
            format=job.format or None, title=job.title, on_stored=_link(job.pk))
    finally:
        handle.close()


def trace_job_run(*, job_id: int) -> str:
    """Run by the worker (or inline for a small upload). Takes the job's id and re-reads it:
    a deleted job is skipped, a finished one (a redelivered message) left alone. A refusal or
    a crash is recorded on the job; nothing escapes to kill the worker."""
    claimed = TraceJob.objects.filter(pk=job_id, status__in=ACTIVE).update(
        status=Status.RUNNING, started=timezone.now(), stage="parsing", done=0)
    job = TraceJob.objects.select_related("owner").filter(pk=job_id).first()
    if not claimed or job is None:
        return "skipped"
    try:
        _ingest(job)
    except _JobGone:
        return "skipped"
    except InputError as exc:
        _fail(job_id, exc)
    except Exception as exc:  # a bug must not leave the job running forever
        log.exception("trace job %s failed", job_id)
        _fail(job_id, InputError(f"the trace could not be stored ({type(exc).__name__}); "
                                 "the error is logged", field="file", status=500))
    finished = TraceJob.objects.filter(pk=job_id).first()
    if finished is None:
        return "skipped"
    if not finished.is_active and job.file:
        # The artifact keeps the bytes of a stored trace; a refused one is not kept. The UPDATE
        # that finished the job already cleared its file, so a request waiting on the job never
        # sees it finished with the file attached (clearing it here, after, was a race).
        job.file.storage.delete(job.file.name)
    return finished.status


def trace_job_json(job: TraceJob, *, absolute) -> dict:
    """The job's status; `absolute(path)` makes a site path a full URL."""
    result = job.result
    if result is not None:
        result = {**result, "url": absolute(result["url"]), "api_url": absolute(result["api_url"])}
    error = None
    if job.status == Status.FAILED:
        error = {"error": job.error, "field": job.error_field or None, "line": job.error_line}
    return {"id": job.pk, "url": absolute(reverse("api-trace-job-detail", args=[job.pk])),
            "page": absolute(job.get_absolute_url()), "status": job.status,
            "progress": {"stage": job.stage, "done": job.done, "total": job.total},
            "filename": job.filename, "error": error, "result": result}

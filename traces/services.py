"""Trace ingest: one streaming pass over the uploaded file computes the statistics and the
timeline files; then, all or nothing, the raw bytes are kept as an artifact and the trace and
its tasks are stored."""

import uuid
from pathlib import Path

from django.conf import settings
from django.db import transaction

import schedtrace
from benchmarks.errors import InputError, TooLarge
from benchmarks.models import Run
from benchmarks.services.artifacts import artifact_file_discard_if_orphaned, artifact_store

from .models import Trace, TraceTask
from .timeline import TimelineWriter, remove_directory

PARSER_VERSION = "2"  # 2: lost switch-ins inferred and counted in the statistics


def traces_root() -> Path:
    """Timeline files live beside the raw uploads, so every process that sees those sees them."""
    return Path(settings.MEDIA_ROOT) / "traces"


def trace_directory(trace: Trace) -> Path:
    return traces_root() / trace.data_dir


def _run_for(run_id, owner):
    if run_id is None:
        return None
    run = Run.objects.filter(pk=run_id).first()
    if run is None:
        raise InputError(f"no run {run_id}", field="run")
    if not (owner.is_staff or run.submitter_id == owner.pk):
        raise InputError("you can attach traces only to your own runs", field="run",
                         status=403)
    return run


# Timestamps are kept as signed 64-bit nanoseconds (timeline files, database columns): a trace
# whose clock reads later than that (about 292 years of uptime: a raw counter clock printed as
# seconds) is refused with its line, as is a NUL byte in a task name (a comm is a C string). The
# parser checks both as it reads (open_events' max_ts and refuse_nul), so they cost nothing
# per event here.
MAX_TIMESTAMP_NS = 2**63 - 1


def _analyse(stream, format, directory):
    """One streaming pass: statistics and timeline files. `stream` is read in chunks; nothing
    holds more than the reorder window and the per-task figures."""
    writer = TimelineWriter(directory)
    try:
        events = schedtrace.open_events(stream, format=format, max_ts=MAX_TIMESTAMP_NS,
                                        refuse_nul=True)
        stats = schedtrace.TraceStats(on_segment=writer.segment, on_wakeup=writer.wakeup)
        stats.consume(events)
        stats.finish()
    except schedtrace.RefusedValue as exc:  # its message names the line, as it always has
        raise InputError(f"line {exc.line}: {exc.message}", field="file",
                         line=exc.line) from None
    except schedtrace.TraceError as exc:
        raise InputError(exc.message, field="file", line=exc.line) from None
    if stats.events == 0:
        raise InputError("the file holds no scheduler events (sched_switch, sched_wakeup, "
                         "...)", field="file", line=events.lines or None)
    writer.finish(cpus=stats.cpus.keys(), task_table=[[t.pid, t.comm] for t in stats.tasks],
                  start_ns=stats.first_ns, end_ns=stats.last_ns)
    return events, stats


def _summary(events, stats) -> dict:
    return {
        "cpus": [cpu.as_dict() for _, cpu in sorted(stats.cpus.items())],
        "latency_hist": stats.latency_hist(),
        "lines": events.lines, "skipped": events.skipped, "late_events": events.late_events,
        "inferred_switch_ins": stats.inferred_switch_ins,
        "inferred_switch_outs": stats.inferred_switch_outs,
    }


def _task_rows(trace, stats):
    for task in stats.tasks:
        yield TraceTask(
            trace=trace, index=task.index, pid=task.pid, comm=task.comm[:64],
            parent_pid=task.parent_pid, runtime_ns=task.runtime_ns, switches=task.switches,
            wakeups=task.wakeups, migrations=task.migrations, wait_sum_ns=task.wait_sum_ns,
            wait_max_ns=task.wait_max_ns, waits=task.wait_count,
            latency_hist=list(task.latency_hist))


def trace_upload_check(*, owner, size: int | None, format: str | None,
                       run_id: int | None):
    """What can be refused before a byte is parsed: size, format name, the run (the run
    object, or None)."""
    limit = settings.TRACE_MAX_UPLOAD_MB * 1024 * 1024
    if size is not None and size > limit:
        raise TooLarge(f"the trace is larger than {settings.TRACE_MAX_UPLOAD_MB} MB",
                       field="file")
    if format is not None and format not in schedtrace.FORMATS:
        raise InputError(f"unknown format {format!r}: one of {', '.join(schedtrace.FORMATS)}",
                         field="format")
    return _run_for(run_id, owner)


def trace_ingest(*, stream, filename: str, owner, run_id: int | None = None,
                 format: str | None = None, title: str = "", size: int | None = None,
                 on_stored=None) -> Trace:
    """Parse and store a trace. `stream`: a seekable binary file (an upload spooled to disk).
    `on_stored(trace)` runs inside the storing transaction: what it raises undoes the trace."""
    run = trace_upload_check(owner=owner, size=size, format=format, run_id=run_id)
    name = uuid.uuid4().hex
    directory = traces_root() / name
    stored_name = ""
    try:
        events, stats = _analyse(stream, format, directory)
        stream.seek(0)
        with transaction.atomic():
            artifact = artifact_store(stream=stream, filename=filename, uploader=owner)
            stored_name = artifact.file.name
            artifact.parser_name, artifact.source = f"trace:{events.format}", "trace"
            artifact.save(update_fields=["parser_name", "source"])
            trace = Trace.objects.create(
                owner=owner, run=run, artifact=artifact, title=(title or filename)[:200],
                format=events.format, parser_version=PARSER_VERSION, events=stats.events,
                cpus=len(stats.cpus), tasks_count=len(stats.tasks), start_ns=stats.first_ns,
                duration_ns=stats.duration_ns, lost_events=stats.lost_events,
                inferred_switches=stats.inferred_switches,
                warnings=[*events.warnings, *stats.warnings()],
                summary=_summary(events, stats), data_dir=name)
            TraceTask.objects.bulk_create(_task_rows(trace, stats), batch_size=2000)
            if on_stored is not None:
                on_stored(trace)
    except BaseException:
        remove_directory(directory)
        artifact_file_discard_if_orphaned(stored_name)
        raise
    return trace

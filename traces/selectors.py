"""Reads of traces. Query counts are pinned by tests (tests/traces/test_selectors.py)."""

from django.db.models import QuerySet

import schedtrace

from .models import Trace, TraceTask
from .services import trace_directory
from .timeline import STATES, TimelineReader

# The trace page's task table: parsing every row of a big trace delayed its first render; the
# page fetches the rest from the API on request.
TASKS_SHOWN = 200
REASONS = {"R": "preempted (R)", "S": "slept (S)", "D": "blocked on I/O (D)", "X": "exited (X)",
           "Z": "exited (Z)", "I": "idle wait (I)", "T": "stopped (T)", "P": "parked (P)",
           "?": "unknown", "other": "other state"}


def traces_listed() -> QuerySet:
    return Trace.objects.select_related("owner", "run__benchmark", "run__kernel")


def trace_get(pk) -> Trace:
    """The trace with what its page and API show about its run (one query)."""
    return Trace.objects.select_related(
        "owner", "artifact", "run__benchmark", "run__kernel", "run__machine").get(pk=pk)


def trace_tasks(trace: Trace, limit: int | None = TASKS_SHOWN) -> list[TraceTask]:
    """The trace's tasks, busiest first (one query)."""
    tasks = TraceTask.objects.filter(trace=trace).order_by("-runtime_ns", "index")
    return list(tasks[:limit] if limit else tasks)


def traces_of_run(run) -> list[Trace]:
    return list(Trace.objects.filter(run=run).order_by("created", "id"))


def task_json(task: TraceTask) -> dict:
    return {
        "pid": task.pid, "comm": task.comm, "runtime_ms": task.runtime_ns / 1e6,
        "switches": task.switches, "wakeups": task.wakeups, "migrations": task.migrations,
        "wait_sum_ms": task.wait_sum_ns / 1e6, "wait_max_ms": task.wait_max_ns / 1e6,
        "wait_avg_ms": task.wait_avg_ns / 1e6, "waits": task.waits, "index": task.index,
        "parent_pid": task.parent_pid,
    }


SUB_US_BUCKETS = 10  # 2^10 ns ~ 1 us: finer buckets only reflect the timestamps' resolution


def latency_histogram(counts: list[int]) -> dict:
    """{"bounds_us": [[lo, hi], ...], "counts": [...]} without empty tails; everything under
    ~1 us in one bucket (ftrace's `trace` prints microseconds: a 0 there means "under 1 us")."""
    if len(counts) > SUB_US_BUCKETS:
        counts = [0] * (SUB_US_BUCKETS - 1) + [sum(counts[:SUB_US_BUCKETS])] + \
            list(counts[SUB_US_BUCKETS:])
    used = [i for i, count in enumerate(counts) if count]
    if not used:
        return {"bounds_us": [], "counts": []}
    span = range(used[0], used[-1] + 1)
    bounds = [[b / 1000 for b in schedtrace.bucket_bounds_ns(i)] for i in span]
    if span[0] == SUB_US_BUCKETS - 1:
        bounds[0][0] = 0.0  # the merged bucket: [0, 2^10 ns)
    return {"bounds_us": bounds, "counts": [counts[i] for i in span]}


def trace_summary_json(trace: Trace) -> dict:
    return {
        "id": trace.pk, "run": trace.run_id, "title": trace.title, "format": trace.format,
        "events": trace.events, "cpus": trace.cpus, "tasks_count": trace.tasks_count,
        "duration_ms": trace.duration_ms, "lost_events": trace.lost_events,
        "inferred_switches": trace.inferred_switches,
        "inferred_switch_ins": (trace.summary or {}).get("inferred_switch_ins", 0),
        "warnings": trace.warnings,
        "artifact": trace.artifact_id, "created": trace.created.isoformat(),
        "owner": trace.owner.username if trace.owner else None,
    }


def trace_json(trace: Trace, tasks: list[TraceTask]) -> dict:
    summary = trace.summary or {}
    return {
        **trace_summary_json(trace),
        "tasks": [task_json(task) for task in tasks],
        "cpu_stats": summary.get("cpus", []),
        "latency_hist": latency_histogram(summary.get("latency_hist", [])),
    }


def _ms(trace, ns) -> float:
    return round((ns - trace.start_ns) / 1e6, 6)


def timeline_window(trace: Trace, start_ms: float | None, end_ms: float | None, *,
                    wakeups: bool = False) -> dict:
    """Decimated segments (and optionally wakeup arrows) of a window in ms from the trace's
    start. No database query: the trace row is already loaded, the rest is on disk."""
    start_ns = trace.start_ns + int((start_ms or 0.0) * 1e6)
    end_ns = trace.start_ns + (trace.duration_ns if end_ms is None else int(end_ms * 1e6))
    reader = TimelineReader(trace_directory(trace))
    window = reader.window(start_ns, max(end_ns, start_ns + 1))
    tasks = reader.tasks
    segments = []
    for cpu, start, end, task, state, count, busy in window["rows"]:
        pid, comm = tasks[task] if task >= 0 else (None, "(many)")
        letter = STATES[state]
        segments.append({
            "cpu": cpu, "pid": pid, "comm": comm, "start_ms": _ms(trace, start),
            "end_ms": _ms(trace, end), "state": letter,
            "reason": REASONS[letter] if count == 1 else f"{count} runs merged",
            "task": task, "count": count, "busy_ms": busy / 1e6})
    # Decimated: some segment in this answer stands for several runs (merged at this zoom).
    decimated = any(segment["count"] > 1 for segment in segments)
    body = {"segments": segments, "decimated": decimated, "level": window["level"],
            "start_ms": _ms(trace, start_ns), "end_ms": _ms(trace, end_ns),
            "duration_ms": trace.duration_ms, "cpus": reader.index["cpus"]}
    if wakeups:
        rows, thinned = reader.wakeups(start_ns, end_ns)
        body["wakeups"] = [{"from_cpu": source, "to_cpu": target, "pid": tasks[task][0],
                            "comm": tasks[task][1], "at_ms": _ms(trace, at)}
                           for at, source, target, task in rows]
        body["wakeups_thinned"] = thinned
    return body

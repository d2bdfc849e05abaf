"""schedtrace: read Linux scheduler traces and derive what happened, in one streaming pass.

Plain library (standard library + nothing else; no Django import), shared by the portal's trace
ingest and the simulator's replay.

Public API:
- ``open_events(path_or_binary_fileobj, *, format=None, reorder_window=20000, max_ts=None,
  refuse_nul=False, fast=True) -> EventStream``: iterate it for ``Event`` records in timestamp
  order (``event_chunks()`` gives them a list at a time: what ``TraceStats.consume`` reads).
  ``max_ts`` (ns) and ``refuse_nul`` refuse a later timestamp or a NUL in a task name with
  ``RefusedValue`` (a TraceError naming the line); ``fast=False`` reads tracefs lines without
  the fast path (its reference in the tests). Input: ftrace text (tracefs ``trace`` /
  ``trace_pipe``), ``trace-cmd report``, ``perf script`` / ``perf sched script`` of the sched
  tracepoints; plain, gzip or xz (detected from the bytes). ``format``: one of ``FORMATS``
  ("ftrace", "trace-cmd", "perf"), detected when None. After iterating, the stream has
  ``format``, ``lines``, ``events``, ``skipped`` (other tracepoints), ``lost_events``,
  ``late_events`` and ``warnings`` (e.g. a truncated last line, which is accepted up to the last
  whole event).
- ``Event``: ``ts`` (ns), ``cpu``, ``kind`` (one of ``KINDS``, or ``"lost"`` for a
  ``CPU:N [LOST M EVENTS]`` marker), ``pid``/``comm`` (the line's prefix: the task running on
  that CPU), ``line`` (1-based), and the kind's fields: prev_/next_ pid, comm, prio, prev_state;
  target_ pid, comm, prio, cpu; parent_/child_ pid, comm; orig_cpu, dest_cpu; lost.
- ``TraceStats(on_segment=None, on_wakeup=None)``: ``add(event)`` / ``consume(events)``, then
  ``finish()``; ``tasks`` (``TaskStats``: runtime, switches, wakeups, migrations, wait sum/max/
  avg, ``latency_hist`` in log2-ns buckets, ``as_dict()`` in the portal's contract shape),
  ``cpus`` (``CpuStats``: busy, idle, idle gaps), ``summary()``, ``inferred_switch_ins`` and
  ``warnings()`` (switches the trace lacked, inferred). The rules it follows (prefix trusted
  over a missing switch, where a lost switch-in is placed, pid reuse, lost events) are in
  ``schedtrace.stats``.
- ``segments(events) -> iterator of Segment(cpu, pid, comm, start_ns, end_ns, end_state)``: the
  per-CPU run stretches (end_state: prev_state of the switch out, "?" when unknown).
- ``analyse(path_or_fileobj, **open_kwargs) -> (EventStream, TraceStats)``: both in one call.
- ``fork_placements(path_or_fileobj, **open_kwargs) -> (EventStream, ForkPlacements)``: for
  every ``sched_wakeup_new`` of a child whose fork the trace shows, the parent and its CPU, the
  child's target CPU, what every other CPU was doing then (idle, running a task, idle with a
  task woken onto it, or unknown: never guessed) and the child's wait to its first switch-in;
  ``summary()`` per class (on an idle CPU, on the parent's CPU while another was idle or while
  none was, on a busy CPU, unknown). The rules are in ``schedtrace.forks``.
- ``bucket_bounds_ns(i)``, ``HIST_BUCKETS``: the latency histogram's bucket edges.
- ``TraceError(message, line)``: the one exception type; ``line`` is 1-based or None.

The hot modules can be compiled with mypyc (``python -m schedtrace.build``, ``make compile``):
several times faster, identical results; ``COMPILED`` says whether the compiled build runs.
"""

from collections import namedtuple

from . import _compiled

COMPILED = _compiled.select()  # before any hot module is imported (schedtrace/_compiled.py)

from .errors import RefusedValue, TraceError  # noqa: E402
from .event import KINDS, LOST, Event  # noqa: E402
from .forks import ForkPlacement, ForkPlacements, fork_placements  # noqa: E402
from .reader import (  # noqa: E402
    DEFAULT_REORDER_WINDOW,
    FORMATS,
    EventStream,
    detect_format,
    open_events,
)
from .stats import (  # noqa: E402
    HIST_BUCKETS,
    CpuStats,
    TaskStats,
    TraceStats,
    bucket_bounds_ns,
    bucket_of,
)

__all__ = [
    "DEFAULT_REORDER_WINDOW", "FORMATS", "HIST_BUCKETS", "KINDS", "LOST", "CpuStats", "Event",
    "EventStream", "ForkPlacement", "ForkPlacements", "RefusedValue", "Segment", "TaskStats",
    "TraceError", "TraceStats", "analyse",
    "bucket_bounds_ns", "bucket_of", "detect_format", "fork_placements", "open_events",
    "segments",
]

Segment = namedtuple("Segment", "cpu pid comm start_ns end_ns end_state")


def segments(events):
    """Per-CPU run segments of an event iterable, in the order they end."""
    done = []
    stats = TraceStats(on_segment=lambda cpu, task, start, end, state: done.append(
        Segment(cpu, task.pid, task.comm, start, end, state)))
    for event in events:
        stats.add(event)
        if done:
            yield from done
            done.clear()
    stats.finish()
    yield from done


def analyse(source, *, on_segment=None, on_wakeup=None, **open_kwargs):
    """Open, parse and accumulate a whole trace: (EventStream, finished TraceStats)."""
    stream = open_events(source, **open_kwargs)
    stats = TraceStats(on_segment=on_segment, on_wakeup=on_wakeup)
    stats.consume(stream)
    return stream, stats.finish()

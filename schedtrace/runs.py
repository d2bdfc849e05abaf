"""Run segments and wakeups gathered for a timeline while a trace streams past: TraceStats'
on_segment / on_wakeup hooks, compiled with the other hot modules, so a segment costs a few list
appends rather than a Python call's worth of work. Full buffers are handed to `spill(name,
arrays)` as typed arrays: memory stays a few buffers, whatever the trace's length.

The class lives in schedtrace.stats (TraceStats calls a RunRecorder's hooks directly, a
compiled call); this module is its public name."""

from .stats import SEGMENT_TYPES, WAKEUP_TYPES, RunRecorder

__all__ = ["SEGMENT_TYPES", "WAKEUP_TYPES", "RunRecorder"]

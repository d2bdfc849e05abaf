"""Shared line loop: comments, lost-events markers, truncated last line, unknown events."""

import re

from . import event as ev
from .errors import TraceError
from .fields import parse_fields, parse_timestamp

KNOWN = frozenset(ev.KINDS)
LOST = re.compile(r"^\s*CPU:?\s*(\d+)\s*\[(?:LOST (\d+) EVENTS|(\d+) EVENTS DROPPED)\]\s*$")
# Lines without events that real tools print: ftrace's `#` header and `##### CPU 1 buffer
# started ####`, trace-cmd's `cpus=2`, `version = 6` and `CPU 0 is empty`.
_NOISE = re.compile(r"^\s*(?:#|$|cpus=\d+\s*$|version = |CPU \d+ is empty)")


class LineParser:
    """Subclasses give `name` and `match_prefix(text) -> (comm, pid, cpu, ts_text, rest)|None`.

    `parse(numbered_lines)` yields Events in input order; `stats` counts what was skipped."""

    name = "?"

    def __init__(self, warnings: list):
        self.warnings = warnings
        self.skipped = 0       # well-formed lines of other events (sched_stat_runtime, ...)
        self.lost_events = 0
        self.lines = 0

    def match_prefix(self, text):
        raise NotImplementedError

    def parse(self, numbered_lines):
        last_ts = 0
        match_prefix = self.match_prefix
        for number, text, complete in numbered_lines:
            self.lines = number
            try:
                prefix = match_prefix(text)
            except ValueError:  # int() refuses a number of over 4300 digits
                raise TraceError("a number on this line is too long", number) from None
            if prefix is None:
                if _NOISE.match(text):
                    continue
                lost = LOST.match(text)
                if lost:
                    count = int(lost.group(2) or lost.group(3))
                    self.lost_events += count
                    yield ev.Event(last_ts, int(lost.group(1)), ev.LOST, None, None, number,
                                   lost=count)
                    continue
            try:
                event = self._event(number, text, prefix)
            except TraceError:
                if complete:
                    raise
                self.warnings.append(
                    f"the trace ends in the middle of line {number}; "
                    f"read up to the last whole event (line {number - 1})")
                return
            if event is not None:
                last_ts = event.ts
                yield event

    def _event(self, number, text, prefix):
        if prefix is None:
            raise TraceError(f"not a {self.name} trace line: {text[:80]!r}", number)
        comm, pid, cpu, ts_text, rest = prefix
        kind, sep, body = rest.partition(": ")
        if not sep and rest.endswith(":"):
            kind, body = rest[:-1], ""
        kind = kind.strip()
        if kind.startswith("sched:"):
            kind = kind[6:]
        if kind not in KNOWN:
            self.skipped += 1
            return None
        try:
            fields = parse_fields(kind, body.lstrip())
            ts = parse_timestamp(ts_text)
        except ValueError:  # int() refuses a number of over 4300 digits
            raise TraceError("a number on this line is too long", number) from None
        if fields is None:
            raise TraceError(f"cannot read the fields of {kind}: {body[:80]!r}", number)
        return ev.Event.make(ts, cpu, kind, pid, comm, number, fields)

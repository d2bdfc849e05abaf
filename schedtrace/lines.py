"""Shared line loop: comments, lost-events markers, truncated last line, unknown events.

A parser may override `fast_event(text, line_number) -> Event | None` and
`fast_event_at(raw, text, first, end, line_number)` (and set `use_fast`), which read its most
common lines (prefix and fields at once) without the general path's steps: methods, so compiled
they are direct calls with unboxed arguments. `fast_event_at` reads a line where it lies in a
chunk of ASCII text (`parse_text`: no str made per line). Both must read exactly what the
general path reads from such a line, and give None for any line they cannot read that way
(which then takes the general path): tests/schedtrace/test_fast_path.py runs both over every
fixture, generated and mutated ("hostile") files and compares every event, figure and refusal."""

import re
from typing import Final

from . import event as ev
from .errors import RefusedValue, TraceError
from .fields import parse_fields, parse_timestamp

# What schedtrace.reader._batches hands the parser: (kind, lines, text, raw)
LINES: Final = 0      # `lines`, each whole
LAST_LINE: Final = 1  # `lines`: the trace's last line, without its newline
TEXT: Final = 2       # `text`: whole lines, ASCII, no CR, each with its newline; `raw` its bytes
TOO_LONG: Final = 3   # the line after `text`'s whole lines is over MAX_LINE
MAX_LINE: Final = 1 << 20  # a longer "line" is not a trace line: refusing it keeps
# memory bounded

KNOWN = frozenset(ev.KINDS)
LOST = re.compile(r"^\s*CPU:?\s*(\d+)\s*\[(?:LOST (\d+) EVENTS|(\d+) EVENTS DROPPED)\]\s*$")
# Lines without events that real tools print: ftrace's `#` header and `##### CPU 1 buffer
# started ####`, trace-cmd's `cpus=2`, `version = 6` and `CPU 0 is empty`.
_NOISE = re.compile(r"^\s*(?:#|$|cpus=\d+\s*$|version = |CPU \d+ is empty)")
# The task-name fields of each event kind besides the line's own `comm`.
_COMM_FIELDS = {ev.SWITCH: ("prev_comm", "next_comm"), ev.FORK: ("parent_comm", "child_comm")}


class ReadState:
    """What the reader has seen so far that the parser needs: a NUL byte (`nul_seen`)."""

    def __init__(self) -> None:
        self.nul_seen = False


class LineParser:
    """Subclasses give `name` and `match_prefix(text) -> (comm, pid, cpu, ts_text, rest)|None`,
    and may give `fast_event` (see the module text).

    `parse(batches)` yields Events in input order; `stats` counts what was skipped."""

    name = "?"

    def __init__(self, warnings: list, read: ReadState, max_ts: int | None = None,
                 refuse_nul: bool = False) -> None:
        self.warnings = warnings
        self.read = read
        self.max_ts = max_ts
        self.refuse_nul = refuse_nul
        self.use_fast = False  # whether fast_event reads lines (see the module text)
        self.skipped = 0       # well-formed lines of other events (sched_stat_runtime, ...)
        self.lost_events = 0
        self.lines = 0
        self.last_ts = 0  # of the last event read: a lost-events marker's timestamp
        # whether each event of the last batch came at or after the one before it (the
        # previous batch's last included): the reorder window then just appends the batch
        self.batch_in_order = True
        self.truncated = False

    def match_prefix(self, text: str) -> tuple[str, int | None, int, str, str] | None:
        raise NotImplementedError

    def fast_event(self, text: str, number: int) -> ev.Event | None:
        """The event of a common line read the fast way, or None for the general path."""
        return None

    def parse(self, batches):
        """`batches`: what schedtrace.reader._batches gives (see Batch there); yields the events
        of each batch as a list, in input order (a list a batch: no generator step per
        event)."""
        for kind, lines, text, raw in batches:
            if kind == TEXT:
                events = self.parse_text(text, raw)
            elif kind == TOO_LONG:
                raise TraceError(f"line longer than {MAX_LINE} characters",
                                 self.lines + text.count("\n") + 1)
            else:
                events = self.parse_lines(lines, kind == LINES)
            if events:
                yield events
            if self.truncated:
                return

    def fast_event_at(self, raw: bytes, text: str, first: int, end: int,
                      number: int) -> ev.Event | None:
        """fast_event of the line text[first:end] read in place (`raw`: the bytes of an ASCII
        `text`), or None."""
        return None

    def parse_text(self, text: str, raw: bytes | None = None) -> list[ev.Event]:
        """The events of whole lines of ASCII text without a CR, each ending in a newline: the
        same as parse_lines of its lines, but the fast path reads each line where it is (no
        str made per line: splitting the text costs more than reading most of its lines).
        `raw`: the text's bytes, when the caller has them (the reader: the bytes it decoded)."""
        if not self.use_fast or (self.refuse_nul and self.read.nul_seen):
            return self.parse_lines(text.split("\n")[:-1], True)
        if raw is None:
            raw = text.encode()
        number = self.lines
        last_ts = self.last_ts
        max_ts = self.max_ts
        events: list[ev.Event] = []
        in_order = True
        first = 0
        size = len(text)
        while first < size:
            end = text.find("\n", first)
            number += 1
            self.lines = number
            event = self.fast_event_at(raw, text, first, end, number)
            if event is None:
                event = self._general(number, text[first:end], True, last_ts)
                first = end + 1
                if event is None:
                    continue
                if event.kind == ev.LOST:
                    events.append(event)
                    continue
            first = end + 1
            ts = event.ts
            if max_ts is not None and ts > max_ts:
                raise RefusedValue(f"the timestamp is out of range (0 to "
                                   f"{max_ts // 10**9} s)", number)
            if ts < last_ts:
                in_order = False
            last_ts = ts
            events.append(event)
        self.last_ts = last_ts
        self.batch_in_order = in_order
        return events

    def parse_lines(self, lines: list[str], complete: bool) -> list[ev.Event]:
        """The events of the next lines (`complete`: False when the last has no newline)."""
        number = self.lines
        last_ts = self.last_ts
        fast = self.use_fast
        max_ts = self.max_ts
        events: list[ev.Event] = []
        in_order = True
        for text in lines:
            number += 1
            self.lines = number
            event: ev.Event | None = None
            if fast and complete:
                event = self.fast_event(text, number)
            if event is None:
                event = self._general(number, text, complete, last_ts)
                if event is None:
                    if self.truncated:
                        break
                    continue
            if event.kind != ev.LOST:
                if max_ts is not None and event.ts > max_ts:
                    raise RefusedValue(f"the timestamp is out of range (0 to "
                                       f"{max_ts // 10**9} s)", number)
                if self.refuse_nul and self.read.nul_seen and "\x00" in text:
                    _check_names(event)
                if event.ts < last_ts:
                    in_order = False
                last_ts = event.ts
            events.append(event)
        self.last_ts = last_ts
        self.batch_in_order = in_order
        return events

    def _general(self, number: int, text: str, complete: bool, last_ts: int) -> ev.Event | None:
        """The event of any line (None: nothing to yield; `truncated` set: stop here)."""
        try:
            prefix = self.match_prefix(text)
        except ValueError:  # int() refuses a number of over 4300 digits
            raise TraceError("a number on this line is too long", number) from None
        if prefix is None:
            if _NOISE.match(text):
                return None
            lost = LOST.match(text)
            if lost:
                count = int(lost.group(2) or lost.group(3))
                self.lost_events += count
                return ev.Event(last_ts, int(lost.group(1)), ev.LOST, None, None, number,
                                lost=count)
        try:
            return self._event(number, text, prefix)
        except TraceError:
            if complete:
                raise
            self.warnings.append(
                f"the trace ends in the middle of line {number}; "
                f"read up to the last whole event (line {number - 1})")
            self.truncated = True
            return None

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


def _check_names(event: ev.Event) -> None:
    names = [getattr(event, name) for name in _COMM_FIELDS.get(event.kind, ("target_comm",))]
    if any(name and "\x00" in name for name in [*names, event.comm]):
        raise RefusedValue("a task name contains a NUL byte", event.line)

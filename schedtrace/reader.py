"""Open a trace (path or binary file object; plain, gzip or xz), detect its format, and stream
its events in timestamp order through a bounded reorder window."""

import codecs
import gzip
import heapq
import io
import lzma
import os
import zlib
from collections.abc import Iterator
from typing import Final

from . import ftrace, perf
from .errors import TraceError
from .event import LOST, Event
from .ftrace import FtraceParser
from .lines import LAST_LINE, LINES, MAX_LINE, TEXT, TOO_LONG, ReadState
from .perf import PerfParser

FORMATS = ("ftrace", "trace-cmd", "perf")
DEFAULT_REORDER_WINDOW = 20_000  # events held back to put CPUs interleaved out of order right
_SNIFF_LINES = 200


_CHUNK = 1 << 16
# what stands in the reorder window's list for events handed out (EventStream._release)
_RELEASED: Final = Event(0, 0, LOST, None, None, 0)


def _binary(source):
    """(binary stream without compression, compressed?, underlying file, do we own it?)."""
    if isinstance(source, str | os.PathLike):
        raw, owned = open(source, "rb"), True  # noqa: SIM115 - closed by EventStream.close
    else:
        raw, owned = source, False
    buffered = raw if hasattr(raw, "peek") else io.BufferedReader(raw, _CHUNK)
    magic = buffered.peek(6)[:6]
    if magic[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=buffered), True, raw, owned
    if magic == b"\xfd7zXZ\x00":
        return lzma.LZMAFile(buffered), True, raw, owned
    return buffered, False, raw, owned


def _chunks(stream, compressed, warnings):
    """Decompressed chunks; a compressed stream that stops early ends with a warning (what was
    decompressed before the damage is still used)."""
    while True:
        try:
            chunk = stream.read(_CHUNK)
        except (EOFError, lzma.LZMAError, gzip.BadGzipFile, zlib.error, OSError) as exc:
            if not compressed:
                raise
            warnings.append(f"the compressed stream ends early ({exc}); read up to there")
            return
        if not chunk:
            return
        yield chunk


def _batches(stream, compressed, warnings, owner=None):
    """The text, a decompressed chunk at a time, as (kind, lines, text, raw)
    (schedtrace.lines): whole lines in one str (TEXT, with `raw` its bytes) where they are
    ASCII without a CR, else split into `lines`
    (LINES; CRs before newlines removed); the trace's last line when it has no newline
    (LAST_LINE, a list of that one line); TOO_LONG once the unfinished line after a chunk's
    whole lines is over MAX_LINE characters (their text is given: the parser counts them for
    the refusal's line number; the old reader refused them in the same place). `owner.nul_seen`
    turns True once a NUL byte has been read (callers that refuse NULs check lines only from
    then on). A chunk, not a line, at a time: the parser's loop pays no generator step per
    line. The bytes are cut after their last newline before they are decoded, so no character
    is split and each piece decodes as the whole stream would ("replace": a newline ends any
    broken sequence before it)."""
    pending = b""
    for chunk in _chunks(stream, compressed, warnings):
        if owner is not None and b"\x00" in chunk:
            owner.nul_seen = True
        cut = chunk.rfind(b"\n") + 1
        if cut:  # one copy of the chunk's whole lines, with what came before them
            whole, pending = b"".join((pending, memoryview(chunk)[:cut])), chunk[cut:]
        else:
            whole, pending = b"", pending + chunk
        text = whole.decode("utf-8", "replace")
        if len(pending) > MAX_LINE and _characters(pending) > MAX_LINE:
            yield TOO_LONG, None, text, b""
            return
        if not text:
            continue
        # ASCII, not just as long as its bytes: an invalid byte decodes to one U+FFFD, whose
        # UTF-8 is 3 bytes (the fast path reads the str's characters at its bytes' offsets)
        if text.isascii() and "\r" not in text:
            yield TEXT, None, text, whole
            continue
        parts = text.split("\n")
        parts.pop()  # the text ends with its last newline
        if "\r" in text:
            parts = [line[:-1] if line.endswith("\r") else line for line in parts]
        yield LINES, parts, "", b""
    if pending:
        yield LAST_LINE, [pending.decode("utf-8", "replace").rstrip("\r")], "", b""


def _characters(pending: bytes) -> int:
    """How many characters the unfinished line's bytes are so far (a character whose bytes
    have not all come yet is not counted)."""
    return len(codecs.getincrementaldecoder("utf-8")("replace").decode(pending))


def _head_lines(batch) -> list[str]:
    kind, lines, text, _ = batch
    if kind == TEXT:
        return text.split("\n")[:-1]
    return [] if kind == TOO_LONG else lines


def detect_format(first_lines) -> str:
    """'ftrace', 'trace-cmd' or 'perf' from the first lines of a trace."""
    trace_cmd = False
    for text in first_lines:
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("cpus=") or stripped.startswith("version = "):
            trace_cmd = True
            continue
        if perf.looks_like(text):
            return "perf"
        if ftrace.PREFIX.match(text):
            return "trace-cmd" if trace_cmd else "ftrace"
        if ftrace.looks_like(text):
            return "trace-cmd"
    raise TraceError("not a scheduler trace: no ftrace, trace-cmd or perf script event line "
                     f"in the first {_SNIFF_LINES} lines", 1)


class EventStream:
    """Iterable of Events in timestamp order. After (or during) iteration: `format`, `lines`,
    `events`, `skipped` (other tracepoints), `lost_events`, `late_events` and `warnings`."""

    def __init__(self, source, *, format=None, reorder_window=DEFAULT_REORDER_WINDOW,
                 max_ts=None, refuse_nul=False, fast=True):
        if format is not None and format not in FORMATS:
            raise TraceError(f"unknown trace format {format!r}; one of {', '.join(FORMATS)}")
        self.warnings: list[str] = []
        self.reorder_window = max(1, reorder_window)
        self.events = 0
        self.late_events = 0
        self._read = ReadState()  # nul_seen: a NUL byte was read so far (see _batches)
        self._stream, compressed, self._raw, self._owned = _binary(source)
        batches = _batches(self._stream, compressed, self.warnings, self._read)
        head = []
        first: list[str] = []
        for batch in batches:
            if batch[0] == TOO_LONG:  # refused here, as it always was, with its line
                raise TraceError(f"line longer than {MAX_LINE} characters",
                                 len(first) + batch[2].count("\n") + 1)
            head.append(batch)
            first += _head_lines(batch)
            if len(first) >= _SNIFF_LINES:
                break
        first = first[:_SNIFF_LINES]
        self.format = format or detect_format(first)
        self._parser: PerfParser | FtraceParser
        if self.format == "perf":
            self._parser = PerfParser(self.warnings, self._read, max_ts, refuse_nul)
        else:
            self._parser = FtraceParser(self.warnings, self._read, max_ts, refuse_nul,
                                        instance_prefix=self.format == "trace-cmd", fast=fast)
        self._batches = _chain(head, batches)

    @property
    def nul_seen(self) -> bool:
        return self._read.nul_seen

    @property
    def lines(self) -> int:
        return self._parser.lines

    @property
    def skipped(self) -> int:
        return self._parser.skipped

    @property
    def lost_events(self) -> int:
        return self._parser.lost_events

    def __iter__(self):
        try:
            for events in self._ordered(self._parser.parse(self._batches)):
                yield from events
        finally:
            self.close()

    def event_chunks(self) -> Iterator[list[Event]]:
        """The same events as iterating, a list at a time (what TraceStats.consume reads: no
        generator step per event)."""
        try:
            yield from self._ordered(self._parser.parse(self._batches))
        finally:
            self.close()

    def _ordered(self, chunks: Iterator[list[Event]]) -> Iterator[list[Event]]:
        """At most `reorder_window` events held back: per-CPU buffers interleave out of order
        by a bounded amount; an event later than the window is passed on late and counted.

        While the input comes in timestamp order (tracefs merges its per-CPU buffers) the
        held events are a sorted FIFO, `held[first:]`, emitted a chunk at a time; the first
        event out of order turns them into a heap (a sorted list is one). Both emit the
        smallest (ts, input order) first, the same events as one at a time would."""
        window = self.reorder_window
        held: list[Event] = []
        first = 0
        newest = -1
        emitted = -1
        parser = self._parser
        for chunk in chunks:
            start = 0
            if parser.batch_in_order and chunk:
                # the parser saw each of these at or after the one before (the newest held
                # included): what the loop below would do, at C speed
                held.extend(chunk)
                newest = chunk[-1].ts
                start = len(chunk)
            for index in range(start, len(chunk)):
                event = chunk[index]
                ts = event.ts
                if ts < newest:
                    out = self._release(held, first, len(held) - first - window)
                    if out:
                        emitted = out[-1].ts
                        yield out
                        first += len(out)
                    heap = [(e.ts, sequence, e) for sequence, e in enumerate(held[first:])]
                    rest = _chain([chunk[index:]], chunks)
                    yield from self._heap_ordered(heap, rest, emitted)
                    return
                newest = ts
                held.append(event)
            out = self._release(held, first, len(held) - first - window)
            if out:
                emitted = out[-1].ts
                yield out
                first += len(out)
                if first > 1 << 16:  # drop what was handed out, now and then
                    del held[:first]
                    first = 0
        out = self._release(held, first, len(held) - first)
        if out:
            yield out
        self._order_warnings()

    def _release(self, held: list[Event], first: int, count: int) -> list[Event]:
        """held[first:first + count], their places in `held` filled with a placeholder: once
        the caller has used them, the events are freed at once, while still in the CPU's
        caches (held until the list is trimmed, they would each be read again from memory,
        some 65,000 events later, to be freed)."""
        if count <= 0:
            return []
        self.events += count
        out = held[first:first + count]
        held[first:first + count] = [_RELEASED] * count
        return out

    def _heap_ordered(self, heap, chunks, emitted):
        window = self.reorder_window
        pushpop, push = heapq.heappushpop, heapq.heappush
        sequence = len(heap)
        for chunk in chunks:
            out = []
            for event in chunk:
                ts = event.ts
                if ts < emitted:
                    self.late_events += 1
                if len(heap) < window:
                    push(heap, (ts, sequence, event))
                else:
                    emitted, _, smallest = pushpop(heap, (ts, sequence, event))
                    out.append(smallest)
                sequence += 1
            if out:
                self.events += len(out)
                yield out
        out = []
        while heap:
            emitted, _, smallest = heapq.heappop(heap)
            out.append(smallest)
        self.events += len(out)
        if out:
            yield out
        self._order_warnings()

    def _order_warnings(self):
        window = self.reorder_window
        if self.late_events:
            self.warnings.append(
                f"{self.late_events} events came more than {window} events out of timestamp "
                "order; they were used late")
        if self.lost_events:
            self.warnings.append(f"the trace says {self.lost_events} events were lost; "
                                 "the line prefixes fill in who was running")

    def close(self):
        if self._owned:
            self._raw.close()


def _chain(head, rest):
    yield from head
    yield from rest


def open_events(source, *, format=None, reorder_window=DEFAULT_REORDER_WINDOW, max_ts=None,
                refuse_nul=False, fast=True) -> EventStream:
    """Events of a trace file (path or binary file object), in timestamp order. `max_ts` (ns):
    a later timestamp is refused (RefusedValue naming its line); `refuse_nul`: so is a task
    name with a NUL byte (a comm is a C string). `fast=False` reads every line the general way
    (the fast path's reference, schedtrace.lines)."""
    return EventStream(source, format=format, reorder_window=reorder_window, max_ts=max_ts,
                       refuse_nul=refuse_nul, fast=fast)

"""The engine's event queue: events in (time, sequence number) order, one live entry per event.

Each thing that can have a pending event owns one reusable ``Event``: a CPU its run segment and its
balance tick, a sleeping task its timer.  Scheduling an event that is already queued moves it to
its new instant (a CPU re-plans its segment at most events), and cancelling takes it out, so the
queue never holds superseded entries.  Every schedule() takes the next sequence number, so events
at the same instant run in the order they were (last) scheduled, and the order of the events is
fully determined by (when, seq): any correct priority queue pops them in the same order.

Two queues implement that one contract:

* ``EventQueue``, an indexed binary heap (each event knows its position, so it can be moved or
  removed in O(log n)).  Compiled by mypyc it compares two native ints per step and allocates
  nothing per event: this is the compiled build's queue, several times faster than heapq;
* ``LazyHeapQueue``, heapq over ``(when, seq, event)`` tuples, where moving or cancelling an
  event leaves its old entry behind to be skipped when popped.  heapq's C code makes this the
  faster choice when the package runs as pure Python.

``new_queue()`` picks by build; tests/simulator/test_event_queue.py runs both on every workload
and requires identical results.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any, Final, cast

if TYPE_CHECKING:
    # mypyc's native 64-bit integer, an annotation only (as pure Python an i64 is an int, and
    # the package imports nothing outside the standard library at run time).  Positions and
    # sequence numbers are i64: compiled, the sifts then index the heap and compare sequence
    # numbers as plain machine integers, without the tagged-int checks and reference counts
    # of an int.  An instant stays an int (a hostile workload may ask for any duration).
    from mypy_extensions import i64

NOT_QUEUED: Final = -1
# LazyHeapQueue compacts its heap once it outgrows twice its live events, never below this size
HEAP_SLACK: Final = 32


class Event:
    """One pending (or idle) event: its instant, its sequence number, what it is for."""

    __slots__ = ("when", "seq", "kind", "obj", "pos")

    def __init__(self, kind: int, obj: Any) -> None:
        self.when: int = 0
        self.seq: i64 = 0
        self.kind: int = kind
        self.obj: Any = obj
        # EventQueue: the index in its heap; LazyHeapQueue: 0 while queued; NOT_QUEUED otherwise
        self.pos: i64 = NOT_QUEUED

    @property
    def queued(self) -> bool:
        return self.pos != NOT_QUEUED


class EventQueue:
    """An indexed binary min-heap of events ordered by (when, seq)."""

    __slots__ = ("heap", "seq")

    def __init__(self) -> None:
        self.heap: list[Event] = []
        self.seq: i64 = 0

    def __len__(self) -> int:
        """Live events (an indexed heap holds no others)."""
        return len(self.heap)

    def _stamp(self, ev: Event, when: int) -> i64:
        """Give ``ev`` its new instant and the next sequence number, which it returns."""
        seq = self.seq = self.seq + 1
        ev.when = when
        ev.seq = seq
        return seq

    def schedule(self, ev: Event, when: int) -> None:
        """Make ``when`` the instant of ``ev``, queued or not, with the next sequence number."""
        pos = ev.pos
        # the new sequence number is the largest yet, so a queued event's (when, seq) grows
        # exactly when ``when`` does not fall: moved later (or to the same instant) it can only
        # sink, moved earlier (or new) only rise -- one sift, not both
        later = pos != NOT_QUEUED and when >= ev.when
        seq = self.seq = self.seq + 1  # _stamp(), inlined: this runs once per event
        ev.when = when
        ev.seq = seq
        if later:
            self._sift_down(ev, pos)
            return
        if pos == NOT_QUEUED:
            pos = len(self.heap)
            self.heap.append(ev)
        self._sift_up(ev, pos)

    def cancel(self, ev: Event) -> None:
        """Take ``ev`` out of the queue (nothing happens if it is not queued)."""
        pos = ev.pos
        if pos == NOT_QUEUED:
            return
        ev.pos = NOT_QUEUED
        last = self.heap.pop()
        if last is not ev:
            self._sift_up(last, pos)
            if last.pos == pos:
                self._sift_down(last, pos)

    def first(self) -> Event | None:
        """The earliest event, left in the queue while the engine handles it (settle() then
        takes it out), or None when the queue is empty.  Handling an event usually schedules it
        again -- a CPU's segment ends and its next one is planned -- and a queued event moves
        in one sift where a popped one would need two (out, then in again)."""
        heap = self.heap
        return heap[0] if heap else None

    def settle(self, ev: Event, seq: i64) -> None:
        """``ev``, returned by first() with sequence number ``seq``, has been handled: take it
        out of the queue unless the handling scheduled it again (or cancelled it)."""
        if ev.seq == seq:
            self.cancel(ev)

    def pop(self) -> Event | None:
        """Remove and return the earliest event, or None when the queue is empty."""
        heap = self.heap
        if not heap:
            return None
        top = heap[0]
        last = heap.pop()
        if heap:
            self._sift_down(last, 0)
        top.pos = NOT_QUEUED
        return top

    def _sift_up(self, ev: Event, pos: i64) -> None:
        heap = self.heap
        when = ev.when
        seq = ev.seq
        while pos > 0:
            parent_pos = (pos - 1) >> 1
            parent = heap[parent_pos]
            if when < parent.when or (when == parent.when and seq < parent.seq):
                heap[pos] = parent
                parent.pos = pos
                pos = parent_pos
            else:
                break
        heap[pos] = ev
        ev.pos = pos

    def _sift_down(self, ev: Event, pos: i64) -> None:
        heap = self.heap
        size: i64 = len(heap)
        when = ev.when
        seq = ev.seq
        while True:
            child_pos = 2 * pos + 1
            if child_pos >= size:
                break
            child = heap[child_pos]
            child_when = child.when
            right_pos = child_pos + 1
            if right_pos < size:
                right = heap[right_pos]
                right_when = right.when
                if right_when < child_when or (right_when == child_when and right.seq < child.seq):
                    child = right
                    child_pos = right_pos
                    child_when = right_when
            if child_when < when or (child_when == when and child.seq < seq):
                heap[pos] = child
                child.pos = pos
                pos = child_pos
            else:
                break
        heap[pos] = ev
        ev.pos = pos


class LazyHeapQueue(EventQueue):
    """heapq of (when, seq, event) entries; an entry whose seq is no longer its event's (moved
    or cancelled since) is skipped when popped, and dropped when the heap is compacted."""

    __slots__ = ("entries", "limit")

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[tuple[int, int, Event]] = []
        self.limit: int = HEAP_SLACK

    def __len__(self) -> int:
        """Entries held, superseded ones included (compact() keeps them from piling up)."""
        return len(self.entries)

    def schedule(self, ev: Event, when: int) -> None:
        seq = self._stamp(ev, when)
        ev.pos = 0
        heapq.heappush(self.entries, (when, seq, ev))
        if len(self.entries) > self.limit:
            self.compact()

    def cancel(self, ev: Event) -> None:
        ev.pos = NOT_QUEUED

    def first(self) -> Event | None:
        entries = self.entries
        while entries:
            _when, seq, ev = entries[0]
            if ev.seq == seq and ev.pos != NOT_QUEUED:
                return ev
            heapq.heappop(entries)
        return None

    def pop(self) -> Event | None:
        entries = self.entries
        while entries:
            _when, seq, ev = heapq.heappop(entries)
            if ev.seq == seq and ev.pos != NOT_QUEUED:
                ev.pos = NOT_QUEUED
                return ev
        return None

    def compact(self) -> None:
        """Drop superseded entries.  An idle CPU re-arms its balance tick earlier each time it
        goes idle, and the later entries it leaves behind would otherwise make up most of the
        heap.  The pop order cannot change: (when, seq) is unique."""
        entries = self.entries
        entries[:] = [e for e in entries if e[2].seq == e[1] and e[2].pos != NOT_QUEUED]
        heapq.heapify(entries)
        self.limit = max(HEAP_SLACK, 2 * len(entries))


def bare_loop(queue: EventQueue, events: int, pending: int = 16) -> None:
    """The bare event loop of bench/simulator_speed.py on ``queue``: pop the earliest event,
    schedule it again a little later, ``events`` times over ``pending`` events.  It lives here
    so that it runs compiled whenever this module is (a loop in the bench would time the
    interpreter's calls into the compiled queue instead)."""
    for i in range(pending):
        queue.schedule(Event(0, None), i)
    seq = pending
    for _ in range(events):
        ev = cast(Event, queue.pop())  # never None: every pop is followed by a push
        seq += 1
        queue.schedule(ev, ev.when + 1000 + (seq & 1023))


def _probe() -> None:
    """A function whose type tells whether this module runs compiled."""


# mypyc compiles functions to builtins; the sources' functions are plain Python functions
COMPILED: Final = type(_probe).__name__ != "function"
QUEUES: Final = {"indexed": EventQueue, "heapq": LazyHeapQueue}


def new_queue(kind: str | None = None) -> EventQueue:
    """A new queue: ``kind`` "indexed" or "heapq", or None for the faster one in this build."""
    if kind is None:
        kind = "indexed" if COMPILED else "heapq"
    return QUEUES[kind]()

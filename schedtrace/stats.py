"""Streaming statistics over an event stream: the per-task figures `perf sched latency` and
`perf sched timehist` print, per-CPU busy time and idle gaps, and the per-CPU run segments a
timeline draws. One pass, memory proportional to the number of tasks and CPUs.

How the scheduler state is rebuilt (the rules a reader of the numbers needs):
- A line's prefix (`comm-pid [cpu]`) names the task running on that CPU at that moment. When it
  disagrees with what the switches said (a lost or unrecorded `sched_switch`; on KVM guests
  switch-ins from idle go missing by the hundred), the prefix wins and the missing switch-in is
  inferred where the events place it: at the task's wakeup (or migration) onto that CPU if that
  came after the CPU's last line, else at that last line (the CPU's last recorded switch, or a
  later line that still showed the old occupant), and never before the task left another CPU.
  The inferred switch-in counts as a switch and ends the task's wait like a recorded one (but
  its wait, a lower bound, stays out of the latency histogram); `inferred_switch_ins` counts
  them and `warnings()` says so. A prefix of idle (pid 0) on a CPU a task held ends that task
  at the line itself: nothing places a lost switch to idle earlier. Nothing before a CPU's first
  line (or after a `LOST EVENTS` marker, until its next line) is counted.
- A task is runnable-but-waiting from a wakeup (`sched_wakeup`, `_new` or `sched_waking`,
  whichever comes first) or from a switch-out in state R (preempted) until its next switch-in.
  Only waits that start with a wakeup go into the wakeup-to-run latency histogram.
- `switches` counts switch-ins (times the task got a CPU), `wakeups` counts sleeping-to-runnable
  transitions, `migrations` counts `sched_migrate_task` events.
- pid reuse: once a task has exited (`sched_process_exit`, or a switch-out in state X/Z) and left
  the CPU, the next task with that pid, or a fork of a child with that pid, is a new task.
- A `LOST EVENTS` marker forgets what ran on that CPU until its next line.
"""

import gc
import struct
from array import array
from collections.abc import Callable, Iterable
from typing import Final

from . import event as ev
from .event import Event

# on_segment(cpu, task, start_ns, end_ns, end_state), on_wakeup(from_cpu, to_cpu, task, at_ns)
SegmentHook = Callable[[int, "TaskStats", int, int, str], object]
WakeupHook = Callable[[int, int, "TaskStats", int], object]

# bucket i holds latencies in [2^i, 2^(i+1)) ns; bucket 0 also holds 0 and 1
HIST_BUCKETS: Final = 40


def bucket_of(latency_ns: int) -> int:
    return min(max(latency_ns, 1).bit_length() - 1, HIST_BUCKETS - 1)


def bucket_bounds_ns(index: int) -> tuple[int, int]:
    return (0 if index == 0 else 1 << index), 1 << (index + 1)


class TaskStats:
    """One task (pid instance). Times are in ns."""

    # Typed attributes, no __slots__: compiled (schedtrace/build.py) a task is a C struct.
    def __init__(self, index: int, pid: int, comm: str, ts: int,
                 parent_pid: int | None = None) -> None:
        self.index = index
        # the same number as an int object, made once: compiled, RunRecorder appends it to
        # its lists for each of the task's segments and wakeups instead of boxing (allocating,
        # above 256) the index again for each
        self.index_object: int | None = index
        self.pid = pid
        self.comm = comm
        self.first_ns = ts
        self.last_ns = ts
        self.runtime_ns = 0
        self.switches = 0
        self.wakeups = 0
        self.migrations = 0
        self.wait_sum_ns = 0
        self.wait_max_ns = 0
        self.wait_count = 0
        self.latency_hist = [0] * HIST_BUCKETS
        self.runnable_since: int | None = None
        self.woken = False
        self.running_on: int | None = None
        self.exited = False
        self.dead = False
        self.parent_pid = parent_pid
        self.left_ns: int | None = None     # when it last left a CPU
        self.placed_cpu: int | None = None  # the CPU a wakeup, migration or preemption queued
        self.placed_ns: int | None = None   # it on, and when: where a lost switch-in is placed

    @property
    def wait_avg_ns(self) -> float:
        return self.wait_sum_ns / self.wait_count if self.wait_count else 0.0

    def as_dict(self) -> dict:
        """The task shape of the trace API (docs/traces.md), in ms, plus extras."""
        return {
            "pid": self.pid, "comm": self.comm,
            "runtime_ms": self.runtime_ns / 1e6, "switches": self.switches,
            "wakeups": self.wakeups, "migrations": self.migrations,
            "wait_sum_ms": self.wait_sum_ns / 1e6, "wait_max_ms": self.wait_max_ns / 1e6,
            "wait_avg_ms": self.wait_avg_ns / 1e6, "waits": self.wait_count,
            "latency_hist": list(self.latency_hist), "parent_pid": self.parent_pid,
            "first_ms": self.first_ns / 1e6, "last_ms": self.last_ns / 1e6,
        }


class CpuStats:
    def __init__(self, cpu: int, ts: int) -> None:
        self.cpu = cpu
        self.current: TaskStats | None = None  # the task running, None for idle (when known)
        self.since = ts        # when `current` (or idle) started
        # `since` as an int object when one was at hand (else None): the segment that ends
        # records it as it is (see TraceStats._switch)
        self.since_object: int | None = None
        self.known = False     # False until a line on this CPU says who runs
        self.first_ns = ts
        self.last_ns = ts
        self.busy_ns = 0
        self.idle_ns = 0
        self.idle_gaps = 0
        self.idle_max_ns = 0

    def as_dict(self) -> dict:
        return {"cpu": self.cpu, "busy_ms": self.busy_ns / 1e6, "idle_ms": self.idle_ns / 1e6,
                "idle_gaps": self.idle_gaps, "idle_max_ms": self.idle_max_ns / 1e6,
                "first_ms": self.first_ns / 1e6, "last_ms": self.last_ns / 1e6}


_CPU_LIST: Final = 4096  # CPU numbers TraceStats finds by list index (see _cpu)


class TraceStats:
    """Feed events with `add(event)` (or `consume(iterable)`), then `finish()`.

    `on_segment(cpu, task, start_ns, end_ns, end_state)` is called for every (non-empty)
    stretch a task ran on a CPU (end_state: the switch's prev_state, or "?" when the trace
    does not say, e.g. an inferred switch or the end of the trace);
    `on_wakeup(from_cpu, to_cpu, task, at_ns)` for every wakeup that made a sleeping task
    runnable.
    """

    def __init__(self, *, on_segment: SegmentHook | None = None,
                 on_wakeup: WakeupHook | None = None) -> None:
        self.tasks: list[TaskStats] = []
        self.cpus: dict[int, CpuStats] = {}
        self._by_pid: dict[int | None, TaskStats] = {}  # keys: int (see _task)
        self.on_segment = on_segment
        self.on_wakeup = on_wakeup
        # A RunRecorder's own hooks are called directly (compiled: no Python call per segment)
        owner = getattr(on_segment, "__self__", None)
        self._runs: RunRecorder | None = None
        if isinstance(owner, RunRecorder) and on_segment == owner.segment \
                and on_wakeup == owner.wakeup:
            self._runs = owner
        self.events = 0
        # first_ns and last_ns (None before the first event) are kept as native ints plus a
        # flag: compiled, an `int | None` attribute set per event would box the int each time
        self._seen = False
        self._first_ns = 0
        self._last_ns = 0
        # CpuStats by CPU number for the numbers below _CPU_LIST (self.cpus holds them all):
        # a list index instead of a dict lookup per event
        self._cpu_list: list[CpuStats | None] = []
        self.lost_events = 0
        self.inferred_switches = 0     # sched_switch events the trace lacks, found missing
        self.inferred_switch_ins = 0   # ... of them, switch-ins of a task placed by inference
        self.inferred_switch_outs = 0  # tasks taken off a CPU without a recorded switch-out
        self.finished = False

    @property
    def first_ns(self) -> int | None:
        """The first event's timestamp (ns), None before any."""
        return self._first_ns if self._seen else None

    @property
    def last_ns(self) -> int | None:
        """The latest timestamp seen (ns), None before any event."""
        return self._last_ns if self._seen else None

    # -- tasks ---------------------------------------------------------------------------------
    def task(self, pid: int, comm: str | None, ts: int, *, new: bool = False,
             parent_pid: int | None = None) -> TaskStats:
        return self._task(pid, comm, ts, new, parent_pid)

    def _task(self, pid: int | None, comm: str | None, ts: int, new: bool = False,
              parent_pid: int | None = None) -> TaskStats:
        """task(), for a pid that is not None. Typed `int | None` so that, compiled, an event's
        pid (an int object already) is the dict's key as it is: an `int` would be boxed anew
        for every lookup."""
        assert pid is not None
        task = self._by_pid.get(pid)
        if task is None or new or task.dead:
            task = TaskStats(len(self.tasks), pid, comm if comm and comm != "<...>" else "",
                             ts, parent_pid)
            self.tasks.append(task)
            self._by_pid[pid] = task
        elif comm and comm != "<...>":
            task.comm = comm  # exec renames a task; the latest name is the one people know
        task.last_ns = ts
        return task

    # -- CPU state machine ---------------------------------------------------------------------
    def _stop(self, cpu: CpuStats, ts: int, state: str, ts_object: int | None = None) -> None:
        """End whatever runs on `cpu` at `ts` (task segment or idle gap); `ts_object`: `ts` as
        an int object, when the caller has one (see _switch)."""
        if not cpu.known:
            return
        start = cpu.since
        length = max(ts - start, 0)
        task = cpu.current
        if task is None:
            if length:
                cpu.idle_ns += length
                cpu.idle_gaps += 1
                cpu.idle_max_ns = max(cpu.idle_max_ns, length)
        else:
            cpu.busy_ns += length
            task.runtime_ns += length
            task.running_on = None
            end: int | None = ts_object if ts_object is not None and ts >= start \
                else max(ts, start)
            task.left_ns = end
            if state in ("X", "Z") or task.exited:
                task.dead = True
            if length:
                runs = self._runs
                if runs is not None:
                    began: int | None = start if cpu.since_object is None else cpu.since_object
                    runs.record_segment(cpu.cpu, task, began, end, state)
                elif self.on_segment is not None:
                    self.on_segment(cpu.cpu, task, start, max(ts, start), state)
        cpu.known = False

    def _start(self, cpu: CpuStats, task: TaskStats | None, ts: int, *, recorded: bool = True,
               inferred: bool = False, ts_object: int | None = None) -> None:
        """`task` (None = idle) runs on `cpu` from `ts`; `recorded`: a sched_switch said so;
        `inferred`: a lost switch-in placed at `ts` (counted like a recorded one); `ts_object`:
        `ts` as an int object, when the caller has one."""
        cpu.current, cpu.since, cpu.known = task, ts, True
        cpu.since_object = ts_object
        if task is None:
            return
        elsewhere = task.running_on
        if elsewhere is not None and elsewhere != cpu.cpu:
            # The task cannot run on two CPUs: its switch-out there was never recorded.
            other = self.cpus[elsewhere]
            self._stop(other, ts, "?")
            self.inferred_switches += 1
            self.inferred_switch_outs += 1
        task.running_on = cpu.cpu
        task.placed_cpu = task.placed_ns = None
        if not (recorded or inferred):
            task.runnable_since = None  # it got the CPU at some unknown moment before `ts`
            return
        task.switches += 1
        self.inferred_switch_ins += inferred
        since = task.runnable_since
        if since is not None:
            wait = max(ts - since, 0)
            task.wait_sum_ns += wait
            task.wait_count += 1
            task.wait_max_ns = max(task.wait_max_ns, wait)
            if task.woken and recorded:  # an inferred switch-in's wait is only a lower bound
                task.latency_hist[bucket_of(wait)] += 1
            task.runnable_since = None

    def _reconcile(self, cpu: CpuStats, event: Event) -> None:
        """Trust the line's prefix over a missing sched_switch."""
        pid = event.pid
        if pid is None:
            return  # the parser could not name the running task (perf's `:-1 -1`)
        if cpu.known and (pid == 0 and cpu.current is None
                          or cpu.current is not None and cpu.current.pid == pid):
            return
        ts = event.ts
        task = None if pid == 0 else self._task(pid, event.comm, ts)
        if not cpu.known:  # the CPU's first line, or its first after lost events
            self._start(cpu, task, ts, recorded=False)
            return
        self.inferred_switches += 1
        self.inferred_switch_outs += cpu.current is not None
        at = ts if task is None else self._placed_at(cpu, task, ts)
        self._stop(cpu, at, "?")
        self._start(cpu, task, at, recorded=False, inferred=task is not None)

    def _placed_at(self, cpu: CpuStats, task: TaskStats, ts: int) -> int:
        """Where the events place `task`'s lost switch-in on `cpu`, seen running there at `ts`:
        not before the CPU's last line (`cpu.last_ns`: its old occupant was still there) nor
        before the task left (or was last seen on) another CPU or became runnable; at its
        wakeup onto this CPU when that came later."""
        floor = max(cpu.since, cpu.last_ns)
        for after in (task.left_ns, task.runnable_since):
            if after is not None:
                floor = max(floor, after)
        if task.running_on is not None and task.running_on != cpu.cpu:
            floor = max(floor, self.cpus[task.running_on].last_ns)
        if task.placed_cpu == cpu.cpu and task.placed_ns is not None:
            floor = max(floor, task.placed_ns)
        return min(floor, ts)  # events used late (beyond the reorder window) can go backwards

    # -- events --------------------------------------------------------------------------------
    def add(self, event: Event) -> None:
        ts = event.ts
        cpu = self._cpu(event.cpu, ts)
        kind = event.kind
        if kind == ev.LOST:
            self.lost_events += event.lost or 0
            self._stop(cpu, cpu.last_ns, "?")
            return
        self.events += 1
        if not self._seen:
            self._seen = True
            self._first_ns = self._last_ns = ts
        elif ts > self._last_ns:
            self._last_ns = ts
        self._reconcile(cpu, event)
        # an if-chain, not a table of methods: compiled, these are direct calls
        if kind == ev.SWITCH:
            self._switch(cpu, event)
        elif kind == ev.WAKEUP or kind == ev.WAKING or kind == ev.WAKEUP_NEW:
            self._wakeup(cpu, event)
        elif kind == ev.FORK:
            self._fork(cpu, event)
        elif kind == ev.EXIT:
            self._exit(cpu, event)
        elif kind == ev.MIGRATE:
            self._migrate(cpu, event)
        else:
            raise KeyError(kind)
        if ts > cpu.last_ns:  # after: _placed_at reads the CPU's previous line
            cpu.last_ns = ts

    def _cpu(self, number: int, ts: int) -> CpuStats:
        """The CpuStats of CPU `number`, made (starting at `ts`) on its first event."""
        listed = self._cpu_list
        if 0 <= number < len(listed):
            found = listed[number]
            if found is not None:
                return found
        cpu = self.cpus.get(number)
        if cpu is None:
            cpu = self.cpus[number] = CpuStats(number, ts)
        if 0 <= number < _CPU_LIST:
            while len(listed) <= number:
                listed.append(None)
            listed[number] = cpu
        return cpu

    def consume(self, events: Iterable[Event]) -> "TraceStats":
        """Add every event; from an EventStream a list at a time (its `event_chunks`)."""
        chunks = getattr(events, "event_chunks", None)
        if chunks is None:
            for event in events:
                self.add(event)
            return self
        # No reference cycles are made here, yet the cyclic collector would walk the reorder
        # window's events and the timeline buffers again and again (a quarter of the time):
        # it waits until the stream is read.
        collecting = gc.isenabled()
        gc.disable()
        try:
            chunk: list[Event]
            for chunk in chunks():
                for event in chunk:
                    self.add(event)
        finally:
            if collecting:
                gc.enable()
        return self

    # The handlers read the fields their kind always has (the parsers set them all): a None
    # there is a caller's bug, which the asserts name.
    def _switch(self, cpu: CpuStats, event: Event) -> None:
        ts = event.ts
        state, prev_pid, next_pid = event.prev_state, event.prev_pid, event.next_pid
        assert state is not None and next_pid is not None
        prev = cpu.current if cpu.known else None
        # compiled: the timestamp boxed once (allocated) for every field and timeline record
        # that keeps it: the end of the segment switched out and the start of the next one,
        # the task's left_ns, runnable_since and placed_ns
        at: int | None = ts
        self._stop(cpu, ts, state, at)
        if prev is None or prev.pid != prev_pid:
            prev = self._by_pid.get(prev_pid) if prev_pid else None
        if prev is not None and state.startswith("R") and not prev.dead:
            prev.runnable_since, prev.woken = at, False
            prev.placed_cpu, prev.placed_ns = cpu.cpu, at
        nxt = None if next_pid == 0 else self._task(next_pid, event.next_comm, ts)
        self._start(cpu, nxt, ts, ts_object=at)

    def _wakeup(self, cpu: CpuStats, event: Event) -> None:
        ts, pid, target_cpu = event.ts, event.target_pid, event.target_cpu
        assert pid is not None
        new = event.kind == ev.WAKEUP_NEW and self._fresh_needed(pid)
        task = self._task(pid, event.target_comm, ts, new)
        at: int | None = ts  # compiled: boxed once for the fields and the record below
        if task.running_on is None and target_cpu is not None:
            # sched_wakeup after sched_waking names the CPU finally chosen: the later one wins
            task.placed_cpu, task.placed_ns = target_cpu, at
        if task.running_on is not None or task.runnable_since is not None:
            return  # already runnable: sched_waking then sched_wakeup, or a spurious wakeup
        task.runnable_since, task.woken = at, True
        task.wakeups += 1
        runs, hook = self._runs, self.on_wakeup
        if runs is not None:
            runs.record_wakeup(cpu.cpu, target_cpu if target_cpu is not None else cpu.cpu,
                               task, at)
        elif hook is not None:
            hook(cpu.cpu, target_cpu if target_cpu is not None else cpu.cpu, task, ts)

    def _fresh_needed(self, pid: int) -> bool:
        task = self._by_pid.get(pid)
        return task is not None and (task.dead or task.switches > 0 or task.exited)

    def _fork(self, cpu: CpuStats, event: Event) -> None:
        parent_pid, child_pid = event.parent_pid, event.child_pid
        assert parent_pid is not None and child_pid is not None
        parent = self.task(parent_pid, event.parent_comm, event.ts)
        self.task(child_pid, event.child_comm, event.ts, new=True, parent_pid=parent.pid)

    def _exit(self, cpu: CpuStats, event: Event) -> None:
        pid = event.target_pid
        assert pid is not None
        task = self.task(pid, event.target_comm, event.ts)
        task.exited = True
        if task.running_on is None:
            task.dead = True

    def _migrate(self, cpu: CpuStats, event: Event) -> None:
        pid = event.target_pid
        assert pid is not None
        task = self.task(pid, event.target_comm, event.ts)
        task.migrations += 1
        if task.running_on is None and event.dest_cpu is not None:
            task.placed_cpu, task.placed_ns = event.dest_cpu, event.ts

    def finish(self):
        """Close what still runs at the last timestamp. Idempotent."""
        if not self.finished:
            self.finished = True
            end = self.last_ns
            for cpu in self.cpus.values():
                if end is not None:
                    self._stop(cpu, end, "?")
        return self

    # -- results -------------------------------------------------------------------------------
    @property
    def duration_ns(self) -> int:
        first, last = self.first_ns, self.last_ns
        return 0 if first is None or last is None else last - first

    def real_tasks(self):
        """Tasks that did something visible (pid 0 is idle, never a task)."""
        return [task for task in self.tasks if task.pid != 0]

    def latency_hist(self) -> list[int]:
        """Wakeup-to-run latency histogram over all tasks."""
        total = [0] * HIST_BUCKETS
        for task in self.tasks:
            for index, count in enumerate(task.latency_hist):
                total[index] += count
        return total

    def summary(self) -> dict:
        return {
            "events": self.events, "cpus": len(self.cpus), "tasks": len(self.real_tasks()),
            "duration_ms": self.duration_ns / 1e6, "lost_events": self.lost_events,
            "inferred_switches": self.inferred_switches,
            "inferred_switch_ins": self.inferred_switch_ins,
            "inferred_switch_outs": self.inferred_switch_outs,
        }

    def warnings(self) -> list[str]:
        """What a reader of the figures must know about switches the trace did not record."""
        said = []
        if self.inferred_switch_ins:
            said.append(
                f"{self.inferred_switch_ins} switch-ins were missing from the trace and were "
                "inferred (a task seen running on a CPU with no sched_switch to it, placed at "
                "its wakeup on that CPU or the CPU's last line before); runtime, switches and "
                "waits count them")
        if self.inferred_switch_outs:
            said.append(
                f"{self.inferred_switch_outs} switch-outs were missing from the trace and were "
                "inferred (a task seen on another CPU, or another task or idle on its CPU)")
        return said


# -- timeline recording (schedtrace.runs) ----------------------------------------------------

# the task indexes are int objects given as they are (typed so: see TaskStats.index_object)
Lists = tuple[list[int | None], list[int | None], list[int | None], list[int]]
WakeLists = tuple[list[int | None], list[int], list[int], list[int | None]]
SEGMENT_TYPES = ("q", "q", "i", "b")  # start, end (ns), task index, end state code
WAKEUP_TYPES = ("q", "i", "i", "i")   # at (ns), from cpu, to cpu, task index


class RunRecorder:
    """`segment(cpu, task, start_ns, end_ns, end_state)` keeps, per CPU, start, end, the task's
    index and `state_codes[end_state[:1]]` (`other` when the letter is not there,
    `state_codes["?"]` for an empty state); `wakeup(from_cpu, to_cpu, task, at_ns)` keeps at,
    from, to and the task's index. Once `limit` are held, or on `flush(name)`, they go to
    `spill(name, arrays)` (name "cpu<N>" or "wake"; arrays typed as SEGMENT_TYPES or
    WAKEUP_TYPES) and the buffers start again."""

    def __init__(self, state_codes: dict[str, int], other: int,
                 spill: Callable[[str, tuple[array, ...]], object], limit: int = 1 << 16) -> None:
        self.state_codes = state_codes
        self.other = other
        self.unknown = state_codes["?"]
        self.spill = spill
        self.limit = limit
        self.cpus: dict[int, Lists] = {}
        self._cpu_list: list[Lists | None] = []  # self.cpus by index, as TraceStats._cpu
        self.wakes: WakeLists = ([], [], [], [])

    def _lists(self, cpu: int) -> Lists:
        listed = self._cpu_list
        if 0 <= cpu < len(listed):
            found = listed[cpu]
            if found is not None:
                return found
        lists = self.cpus.get(cpu)
        if lists is None:
            lists = ([], [], [], [])
            self.cpus[cpu] = lists
        if 0 <= cpu < _CPU_LIST:
            while len(listed) <= cpu:
                listed.append(None)
            listed[cpu] = lists
        return lists

    def segment(self, cpu: int, task: object, start_ns: int, end_ns: int,
                end_state: str) -> None:
        self.record_segment(cpu, task, start_ns, end_ns, end_state)

    # record_segment and record_wakeup take the times as int objects (never None; typed so
    # that, compiled, TraceStats' objects are appended as they are, not unboxed and boxed again)
    def record_segment(self, cpu: int, task: object, start_ns: int | None, end_ns: int | None,
                       end_state: str) -> None:
        lists = self._lists(cpu)
        starts = lists[0]
        starts.append(start_ns)
        lists[1].append(end_ns)
        lists[2].append(_index_object(task))
        lists[3].append(self.state_codes.get(end_state[:1], self.other) if end_state
                        else self.unknown)
        if len(starts) >= self.limit:
            self.flush(f"cpu{cpu}")

    def wakeup(self, from_cpu: int, to_cpu: int, task: object, at_ns: int) -> None:
        self.record_wakeup(from_cpu, to_cpu, task, at_ns)

    def record_wakeup(self, from_cpu: int, to_cpu: int, task: object,
                      at_ns: int | None) -> None:
        at, source, target, index = self.wakes
        at.append(at_ns)
        source.append(from_cpu)
        target.append(to_cpu)
        index.append(_index_object(task))
        if len(at) >= self.limit:
            self.flush("wake")

    def flush(self, name: str) -> None:
        """Hand what `name` holds ("cpu<N>" or "wake") to `spill`, even when it is nothing."""
        lists: Lists | WakeLists
        if name == "wake":
            lists, types = self.wakes, WAKEUP_TYPES
        else:
            lists, types = self.cpus.get(int(name[3:]), ([], [], [], [])), SEGMENT_TYPES
        columns: list[list[int] | list[int | None]] = list(lists)
        arrays = tuple(_typed(code, values) for code, values in zip(types, columns, strict=True))
        for values in columns:
            values.clear()
        self.spill(name, arrays)


def _typed(code: str, values: list[int] | list[int | None]) -> array:
    """array(code, values), the items packed by struct first: struct converts each int
    directly, where array parses each one as a call's argument (some 200 instructions an item
    against 340, and a segment is four items). The same native layout ("@"); a value that does
    not fit is refused by array itself, with the error it always gave."""
    try:
        return array(code, struct.pack(f"@{len(values)}{code}", *values))
    except struct.error:
        return array(code, values)


def _index_object(task: object) -> int | None:
    """The task's index (never None): TraceStats passes its TaskStats (its index_object read
    directly, compiled); anything else with an `index` is accepted too (e.g. a caller building
    a timeline by hand)."""
    if isinstance(task, TaskStats):
        return task.index_object
    index: int = getattr(task, "index")  # noqa: B009 - typed for the compiled build
    return index

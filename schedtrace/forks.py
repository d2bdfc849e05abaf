"""Where each forked child was placed, and what it cost: for every `sched_wakeup_new` of a task
whose `sched_process_fork` the trace shows, the parent and its CPU, the CPU the child was
queued on, what every other CPU was doing at that instant, and how long the child waited from
its wakeup_new to its first switch-in.

What a CPU "was doing" comes from `sched_switch`: idle after a switch to pid 0, busy with the
switched-in task otherwise, unknown before the CPU's first switch. An idle CPU onto which a
task was woken (`sched_wakeup` or `sched_wakeup_new` naming it, or a `sched_migrate_task`
moving such a woken task there) and not yet switched in is "waking": the kernel's idle_cpu()
no longer counts it as idle (its runqueue is not empty), so neither does the classification.
A `sched_waking` onto an idle CPU makes it unknown until its next switch (that event names the
task's previous CPU, not where it will run).

Every later line on a CPU checks its state: a line whose prefix (the task running there)
agrees confirms it up to that line; one that disagrees (a lost or unrecorded switch, frequent
on KVM guests) shows it changed at some moment since the last confirming line, so what was read
from it in between becomes unknown, and so does the CPU until its next switch. A `LOST EVENTS`
marker does the same. A state is therefore reported only where the trace shows it held, never
guessed. "Every other CPU" means every CPU the trace has a line for or names as a wakeup's or
migration's target: a CPU the trace never mentions cannot be known to exist, so a local
placement with no other CPU in the trace is unknown too.

Delays are the child's first recorded switch-in minus its wakeup_new; None when the child
never ran in the trace, or when its first switch-in may be missing (it was seen running with no
switch to it, or events were lost while it waited).
"""

import statistics
from collections.abc import Iterable
from typing import NamedTuple

from . import event as ev
from .event import Event
from .reader import EventStream, open_events

IDLE = "idle"
WAKING = "waking"  # running idle, with a task woken onto it and not yet switched in
BUSY = "busy"
UNKNOWN = "unknown"

# the placement classes, in the order the summary lists them
ON_IDLE_CPU = "on_idle_cpu"            # queued on another CPU that was idle
LOCAL_OTHER_IDLE = "local_other_idle"  # on the parent's CPU while another CPU was idle
LOCAL_NONE_IDLE = "local_none_idle"    # on the parent's CPU while no other CPU was idle
ON_BUSY_CPU = "on_busy_cpu"            # queued on another CPU that was not idle
CLASSES = (ON_IDLE_CPU, LOCAL_OTHER_IDLE, LOCAL_NONE_IDLE, ON_BUSY_CPU, UNKNOWN)

# how the child's first run shows in the trace
SWITCHED_IN = "switched_in"  # a recorded sched_switch to it: the delay is exact
UNRECORDED = "unrecorded"    # it ran, but its first switch-in may be missing: no delay
NEVER = "never"              # it never ran in the trace: no delay


class CpuState(NamedTuple):
    """IDLE, BUSY (`pid`/`comm` running), WAKING (idle, `pid`/`comm` the first task woken onto
    it since) or UNKNOWN."""

    state: str
    pid: int | None = None
    comm: str | None = None

    def __str__(self) -> str:
        if self.state == BUSY:
            return f"{self.comm}-{self.pid}"
        if self.state == WAKING:
            return f"idle, waking {self.comm}-{self.pid}"
        return self.state


UNKNOWN_STATE = CpuState(UNKNOWN)
IDLE_STATE = CpuState(IDLE, 0)


class ForkPlacement(NamedTuple):
    child_pid: int
    child_comm: str
    parent_pid: int
    parent_comm: str
    fork_ns: int
    fork_cpu: int    # the CPU of the sched_process_fork line
    parent_cpu: int  # the CPU of the sched_wakeup_new line: where the parent placed the child
    wakeup_ns: int
    wakeup_line: int
    target_cpu: int | None
    local: bool | None           # target_cpu == parent_cpu (None: the line names no target)
    others: dict[int, CpuState]  # every other CPU at the wakeup_new
    placement: str               # one of CLASSES
    first_run: str               # SWITCHED_IN, UNRECORDED or NEVER
    delay_ns: int | None         # wakeup_new to first switch-in, when SWITCHED_IN


class _Pending:
    """A placement being gathered: `others` may still turn unknown, the delay is not known."""

    def __init__(self, fork: Event, wakeup: Event) -> None:
        self.fork, self.wakeup = fork, wakeup
        self.others: dict[int, CpuState] = {}
        self.first_run = NEVER
        self.delay_ns: int | None = None


class _Cpu:
    def __init__(self, number: int) -> None:
        self.number = number
        self.running = UNKNOWN_STATE  # IDLE, BUSY or UNKNOWN, from the switches
        self.woken: dict[int, str] = {}  # tasks woken onto it while idle: pid -> comm
        # placements that read this CPU's state since the last line confirming it
        self.readers: list[_Pending] = []

    def state(self) -> CpuState:
        if self.running.state == IDLE and self.woken:
            pid, comm = next(iter(self.woken.items()))
            return CpuState(WAKING, pid, comm)
        return self.running


class ForkPlacements:
    """Feed events with `add(event)` (or `consume(events)`), then `finish()`: `placements`
    (ForkPlacement, in wakeup_new order), `wakeups_new` (all of them), `without_fork`
    (wakeup_new lines of a child whose fork the trace does not show: not placed), `forks`,
    `cpus` (every CPU the trace has a line for or names as a target) and `summary()`."""

    def __init__(self) -> None:
        self.placements: list[ForkPlacement] = []
        self.wakeups_new = 0
        self.without_fork = 0
        self.forks = 0
        self.cpus: set[int] = set()
        self._cpus: dict[int, _Cpu] = {}
        self._forked: dict[int, Event] = {}         # child pid -> its fork, until placed
        self._gathering: list[_Pending] = []
        self._waiting: dict[int, _Pending] = {}     # child pid -> placement, until it runs

    def consume(self, events: Iterable[Event]) -> "ForkPlacements":
        chunks = getattr(events, "event_chunks", None)
        if chunks is None:
            for event in events:
                self.add(event)
        else:
            for chunk in chunks():
                for event in chunk:
                    self.add(event)
        return self

    def _cpu(self, number: int) -> _Cpu:
        cpu = self._cpus.get(number)
        if cpu is None:
            cpu = self._cpus[number] = _Cpu(number)
            self.cpus.add(number)
        return cpu

    def add(self, event: Event) -> None:
        cpu = self._cpu(event.cpu)
        if event.kind == ev.LOST:
            self._contradicted(cpu)
            for waiting in self._waiting.values():
                waiting.first_run = UNRECORDED  # its switch-in may be among the lost events
            self._waiting.clear()
            return
        self._check_prefix(cpu, event)
        running = self._waiting.pop(event.pid, None) if event.pid is not None else None
        if running is not None:  # the child runs here, and no switch to it was seen
            running.first_run = UNRECORDED
        kind = event.kind
        if kind == ev.SWITCH:
            self._switch(cpu, event)
        elif kind == ev.FORK and event.child_pid is not None:
            self.forks += 1
            self._forked[event.child_pid] = event
        elif kind in ev.WAKE_KINDS:
            if kind == ev.WAKEUP_NEW:
                self._wakeup_new(event)
            self._woken(event.target_cpu, event.target_pid, event.target_comm,
                        known=kind != ev.WAKING)
        elif kind == ev.MIGRATE:
            self._migrated(event)

    def _check_prefix(self, cpu: _Cpu, event: Event) -> None:
        """The line's prefix against the task the switches put on the CPU."""
        known = cpu.running
        if known.state == UNKNOWN or event.pid is None:  # perf's `:-1 -1`: says nothing
            return
        agrees = event.pid == known.pid
        if agrees and event.kind == ev.SWITCH:
            agrees = event.prev_pid == known.pid
        if agrees:
            cpu.readers.clear()  # what they read held up to this line
        else:
            self._contradicted(cpu)

    def _contradicted(self, cpu: _Cpu) -> None:
        """The CPU's state changed unseen since its last confirming line."""
        for reader in cpu.readers:
            reader.others[cpu.number] = UNKNOWN_STATE
        cpu.readers.clear()
        cpu.running = UNKNOWN_STATE
        cpu.woken.clear()

    def _switch(self, cpu: _Cpu, event: Event) -> None:
        nxt = event.next_pid
        cpu.readers.clear()
        cpu.woken.clear()
        cpu.running = IDLE_STATE if nxt == 0 else CpuState(BUSY, nxt, event.next_comm)
        waiting = self._waiting.pop(nxt, None) if nxt is not None else None
        if waiting is not None:
            waiting.first_run = SWITCHED_IN
            waiting.delay_ns = event.ts - waiting.wakeup.ts

    def _woken(self, number: int | None, pid: int | None, comm: str | None,
               known: bool) -> None:
        """A task queued onto CPU `number`; `known`: the event names where it is queued."""
        if number is None or pid is None:
            return
        cpu = self._cpu(number)
        if cpu.running.state != IDLE:
            return
        if known:
            cpu.woken.setdefault(pid, comm or "")
        else:  # sched_waking: the task may yet go elsewhere, or land here
            self._contradicted(cpu)

    def _migrated(self, event: Event) -> None:
        pid = event.target_pid
        if event.orig_cpu is not None and pid is not None:
            orig = self._cpu(event.orig_cpu)
            if orig.woken.pop(pid, None) is not None:  # taken away before it ran there
                self._woken(event.dest_cpu, pid, event.target_comm, known=True)

    def _wakeup_new(self, event: Event) -> None:
        self.wakeups_new += 1
        child = event.target_pid
        fork = self._forked.pop(child, None) if child is not None else None
        if fork is None or child is None:
            self.without_fork += 1
            return
        pending = _Pending(fork, event)
        for number, cpu in self._cpus.items():
            if number != event.cpu:
                state = pending.others[number] = cpu.state()
                if state.state != UNKNOWN:
                    cpu.readers.append(pending)
        self._gathering.append(pending)
        replaced = self._waiting.pop(child, None)
        if replaced is not None:  # the pid forked again before it was seen to run
            replaced.first_run = UNRECORDED
        self._waiting[child] = pending

    def finish(self) -> "ForkPlacements":
        """Turn what was gathered into ForkPlacements (a CPU first seen after a wakeup_new is
        unknown at it). Idempotent."""
        for pending in self._gathering:
            self.placements.append(self._placement(pending))
        self._gathering = []
        return self

    def _placement(self, pending: _Pending) -> ForkPlacement:
        fork, wakeup = pending.fork, pending.wakeup
        assert fork.parent_pid is not None and wakeup.target_pid is not None
        others = {number: pending.others.get(number, UNKNOWN_STATE)
                  for number in sorted(self.cpus) if number != wakeup.cpu}
        target = wakeup.target_cpu
        local = None if target is None else target == wakeup.cpu
        return ForkPlacement(
            child_pid=wakeup.target_pid, child_comm=fork.child_comm or "",
            parent_pid=fork.parent_pid, parent_comm=fork.parent_comm or "",
            fork_ns=fork.ts, fork_cpu=fork.cpu, parent_cpu=wakeup.cpu, wakeup_ns=wakeup.ts,
            wakeup_line=wakeup.line, target_cpu=target, local=local, others=others,
            placement=classify(target, local, others), first_run=pending.first_run,
            delay_ns=pending.delay_ns)

    def summary(self) -> dict[str, dict]:
        """Per class (CLASSES order): count, how many children ran with a recorded switch-in
        (`timed`), never ran, or ran unrecorded, and the median, max and total of the timed
        delays in ms (None without any)."""
        table = {}
        for name in CLASSES:
            chosen = [p for p in self.placements if p.placement == name]
            delays = [p.delay_ns for p in chosen if p.delay_ns is not None]
            table[name] = {
                "count": len(chosen), "timed": len(delays),
                "never_ran": sum(p.first_run == NEVER for p in chosen),
                "unrecorded": sum(p.first_run == UNRECORDED for p in chosen),
                "median_ms": statistics.median(delays) / 1e6 if delays else None,
                "max_ms": max(delays) / 1e6 if delays else None,
                "total_ms": sum(delays) / 1e6 if delays else None,
            }
        return table


def classify(target: int | None, local: bool | None, others: dict[int, CpuState]) -> str:
    """The placement's class, from the target CPU and the other CPUs' states (a waking CPU is
    not idle: the kernel's idle_cpu() says so too)."""
    if target is None or local is None:
        return UNKNOWN
    if not local:
        state = others.get(target, UNKNOWN_STATE).state
        if state == IDLE:
            return ON_IDLE_CPU
        return ON_BUSY_CPU if state in (BUSY, WAKING) else UNKNOWN
    states = {state.state for state in others.values()}
    if IDLE in states:
        return LOCAL_OTHER_IDLE
    if states and states <= {BUSY, WAKING}:
        return LOCAL_NONE_IDLE
    return UNKNOWN  # no other CPU in the trace, or one unknown and none idle


def fork_placements(source, **open_kwargs) -> tuple[EventStream, ForkPlacements]:
    """Open and read a whole trace (as `analyse`: `open_events`' arguments):
    (EventStream, finished ForkPlacements)."""
    stream = open_events(source, **open_kwargs)
    return stream, ForkPlacements().consume(stream).finish()

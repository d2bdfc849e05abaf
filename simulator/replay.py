"""``python -m simulator replay``: rebuild a workload from a real trace and run it on any profile.

Per task the trace gives its fork (parent, and where in the parent's own CPU time it happened),
its CPU bursts, its sleeps and who woke it after each one, and its exit. Each task becomes a
program: RUN for the CPU time between two points of interest, FORK where it forked, POST where it
woke a recorded task, WAIT where it slept until a recorded task woke it, SLEEP (the recorded
duration) where something outside the recorded set woke it (a timer, an interrupt, another
program), EXIT at its end. Dependencies therefore survive a different schedule: a task woken by X
waits for X to reach the same point of X's own CPU time, however late that comes.

What a trace cannot tell is in docs/simulator.md ("Replaying a trace").
"""

import dataclasses
import gzip
import io
import itertools
import lzma
import math
import time
from typing import Any

import schedtrace

from . import __version__ as VERSION
from .api import make_policy, validate
from .engine import Engine
from .errors import InvalidValueError
from .ftrace import FtraceWriter
from .program import (
    ADD,
    EXIT,
    FORK,
    POST,
    RUN,
    SLEEP,
    SPIN,
    WAIT,
    Counter,
    Semaphore,
    Task,
    nice_to_weight,
)
from .results import VMSTAT_COLUMNS, vmstat_rows
from .topology import parse_topology

# The harness's placeholder for tasks outside the benchmark (harness/schedbench.py).
OTHER_PID_BASE = 4194304
OTHER_TID_BASE = 2 * OTHER_PID_BASE  # the replay's stand-ins for them: never a recorded pid
REUSED_TID_BASE = 3 * OTHER_PID_BASE  # a second task with a pid seen before
# A spin-wait (docs/simulator.md, "Spins that wait for another task"): the spinner's next
# recorded action comes at most this much of its own CPU time after the other task's event.
# A spin loop that sees its flag change and goes on (pthread_join, the next pthread_create, a
# futex wait) takes a few to a few tens of microseconds; real work ending just there is rare.
SPIN_TAIL_NS = 50_000
# ... and before the event it ran at least this long since its previous action: programs that
# pass messages (hackbench) act every few microseconds, so one of their actions follows any
# event closely without having waited for it.
SPIN_MIN_NS = 2 * SPIN_TAIL_NS
SKIP = "skip"  # not a program op: program() drops the recorded CPU time up to its position
# Autogroup (docs/simulator.md, "Autogroup"): a session's task group starts with the shares of
# nice 0 (autogroup_create() -> sched_create_group(); alloc_fair_sched_group() sets
# tg->shares = NICE_0_LOAD; the simulator's weights are in units of nice 0 = 1024).
AUTOGROUP_SHARES = nice_to_weight(0)
# Kernel threads keep init_task's autogroup, whose group is the root one (autogroup_init()).
# A trace names a task only by comm: these are the kernel's own thread names.
KTHREAD_COMMS = ("kworker/", "ksoftirqd/", "rcu_", "migration/", "kthreadd", "kswapd",
                 "khugepaged", "kcompactd", "kdamond", "jbd2/", "irq/", "cpuhp/", "watchdog",
                 "oom_reaper", "kauditd", "khungtaskd", "kblockd", "idle_inject/")
# What the harness writes in a recording's header (harness/schedbench.py, filter_trace()).
AUTOGROUP_KEY = "sched_autogroup_enabled="
HEADER_BYTES = 4096  # the header is the first few comment lines: no need to read further


@dataclasses.dataclass(eq=False)  # compared and hashed by identity
class TaskTrace:
    pid: int
    comm: str
    parent: int | None = None
    start_ns: int = 0        # fork / first sight, trace time
    end_ns: int = 0
    ran_ns: int = 0          # CPU time so far (its program position)
    on_cpu_since: int | None = None
    blocked_at: int | None = None   # program position of an open sleep
    blocked_since: int | None = None
    ops: list = dataclasses.field(default_factory=list)  # (position, seq, op)
    exited: bool = False
    forked_by: "TaskTrace | None" = None  # its recorded parent
    kin: set = dataclasses.field(default_factory=set)       # its parent and children, alive
    ran_with: set = dataclasses.field(default_factory=set)  # kin it ran beside this stretch
    # kin that ran on its CPU in its place after it was preempted (in R) this stretch
    ran_instead: set = dataclasses.field(default_factory=set)
    last_cpu: int | None = None
    preempted: bool = False  # switched out runnable and not on a CPU since
    spins: list = dataclasses.field(default_factory=list)  # (start, at, seq): its spin-waits
    pending: tuple | None = None  # (own position, other task, its position): a possible spin
    acted_at: int = 0        # the position of its last action: where its current stretch began
    prio: int | None = None  # the kernel prio its last switch or wakeup line showed


class Rebuild:
    """One pass over the events: CPU time per task, and the ops placed at their positions."""

    def __init__(self, spin_waits=True, queued_spins=True, spin_work="least"):
        self.tasks = {}     # pid -> its current task
        self.all = []       # every task, pid reuse included
        self.running = {}   # cpu -> pid on it (None idle)
        self.seq = 0
        self.first_ns = None
        self.last_ns = 0
        self.events = 0
        self.others = []
        self.bench_wait_ns = 0  # the recorded tasks' waits, runnable but not running
        self.spin_waits_on = spin_waits
        self.queued_spins = queued_spins  # spins on kin queued behind the spinner on its CPU
        self.spin_work = spin_work  # "recorded" or "least": see trim_spins()
        self.spin_waits = 0     # spins turned into waits on another task's event
        self.stand_ins = {}     # replay tid -> recorded pid, for a reused pid's second task
        # sched_autogroup_enabled as the recording's header gives it; None: not recorded
        self.autogroup_recorded: bool | None = None

    def recorded(self, pid):
        return pid is not None and 0 < pid < OTHER_PID_BASE

    def task(self, pid, comm, ts):
        found = self.tasks.get(pid)
        if found is None or (found.exited and found.on_cpu_since is None):
            found = self.new_task(pid, comm, ts)
        elif comm and comm != found.comm:
            found.comm = comm  # exec renamed it (the harness's child becomes the benchmark)
        return found

    def new_task(self, pid, comm, ts, parent=None):
        task = self.tasks[pid] = TaskTrace(pid, comm or "task", start_ns=ts, end_ns=ts,
                                           forked_by=parent)
        self.all.append(task)
        if parent is not None:
            parent.kin.add(task)
            task.kin.add(parent)
        return task

    def position(self, task, ts):
        return task.ran_ns + (ts - task.on_cpu_since if task.on_cpu_since is not None else 0)

    def put(self, task, position, op):
        self.seq += 1
        task.ops.append((position, self.seq, op))

    def add(self, e):
        if e.kind == schedtrace.LOST:
            return
        self.events += 1
        ts = e.ts
        self.first_ns = ts if self.first_ns is None else self.first_ns
        self.last_ns = max(self.last_ns, ts)
        self.prefix(e)
        handler = getattr(self, "on_" + e.kind, None)
        if handler is not None:
            handler(e)

    def prefix(self, e):
        """The line's prefix names who runs on its CPU: trust it over a missing switch."""
        pid = e.pid if self.recorded(e.pid) else None
        if self.running.get(e.cpu) != pid and e.kind != schedtrace.event.SWITCH:
            self.switch_out(e.cpu, e.ts)
            if pid is not None:
                self.switch_in(e.cpu, self.task(pid, e.comm, e.ts), e.ts)

    def switch_out(self, cpu, ts, state="R"):
        pid = self.running.pop(cpu, None)
        task = self.tasks.get(pid) if pid is not None else None
        if task is None or task.on_cpu_since is None:
            return None
        task.ran_ns += max(0, ts - task.on_cpu_since)
        task.on_cpu_since = None
        task.end_ns = ts
        task.last_cpu, task.preempted = cpu, state[:1] == "R"
        if state[:1] in ("S", "D", "I") and not task.exited:
            task.blocked_at, task.blocked_since = task.ran_ns, ts
            if self.spin_waits_on:
                self.mark(task, task.ran_ns)
        return task

    def switch_in(self, cpu, task, ts):
        self.running[cpu] = task.pid
        task.on_cpu_since = ts
        task.preempted = False
        for other in task.kin if self.spin_waits_on else ():
            if other.preempted and other.last_cpu == cpu and not other.exited:
                # it runs where a preempted kin was running, which then waited behind it
                other.ran_instead.add(task)
        if task.blocked_at is not None:  # woken by nobody we saw: it slept that long
            self.resolve(task, None, ts)
        for other_cpu, pid in self.running.items() if self.spin_waits_on else ():
            other = self.tasks.get(pid) if other_cpu != cpu else None  # beside it: spin-waits
            if other is not None and other in task.kin:
                other.ran_with.add(task)
                task.ran_with.add(other)

    def on_sched_switch(self, e):
        if self.running.get(e.cpu) is None or self.running.get(e.cpu) == e.prev_pid:
            self.switch_out(e.cpu, e.ts, e.prev_state or "R")
        else:
            self.switch_out(e.cpu, e.ts)
        if self.recorded(e.next_pid):
            self.switch_in(e.cpu, self.task(e.next_pid, e.next_comm, e.ts), e.ts)
        self.note_prio(e.prev_pid, e.prev_prio)
        self.note_prio(e.next_pid, e.next_prio)

    def note_prio(self, pid, prio):
        task = self.tasks.get(pid) if prio is not None and self.recorded(pid) else None
        if task is not None:
            task.prio = prio

    # -- spins that wait for another task (docs/simulator.md) ----------------------------------
    def beside(self, task):
        """The task's kin running on other CPUs now."""
        return {other for other in task.kin if other.on_cpu_since is not None}

    def signal(self, task, ts):
        """``task``, on a CPU, exited, woke or forked a task at ``ts``: a family member in the
        middle of a stretch of CPU time that ran beside it on another CPU may be spinning
        until this (it becomes a spin-wait if its next action follows within SPIN_TAIL_NS)."""
        if task.on_cpu_since is None:
            return
        at = self.position(task, ts)
        for other in task.kin:
            if other.exited or other.blocked_at is not None:
                continue
            if task in other.ran_with or (self.queued_spins and task in other.ran_instead):
                other.pending = (self.position(other, ts), task, at)

    def mark(self, task, position):
        """The task acted at ``position`` of its CPU time (forked, woke, slept, exited): a
        pending spin-wait it ended close enough is made, and its next stretch starts."""
        pending = task.pending
        if (pending is not None and position - pending[0] <= SPIN_TAIL_NS
                and pending[0] - task.acted_at >= SPIN_MIN_NS):
            at, other, other_at = pending
            counter = Counter(f"{other.pid}=>{task.pid}")
            self.put(other, other_at, (ADD, counter, 1))
            self.put(task, at, (SPIN, counter, 1, False))
            task.spins.append((task.acted_at, at, self.seq))
            self.spin_waits += 1
        task.pending = None
        task.acted_at = position
        task.ran_with = self.beside(task)
        task.ran_instead = set()

    def resolve(self, task, waker, ts):
        """Close the task's open sleep: a WAIT on the waker's POST, or a SLEEP of that long."""
        at = task.blocked_at
        if waker is not None:
            sem = Semaphore(f"{waker.pid}->{task.pid}")
            self.put(waker, self.position(waker, ts), (POST, sem, 1))
            self.put(task, at, (WAIT, sem))
        else:
            self.put(task, at, (SLEEP, max(0, ts - task.blocked_since)))
        task.blocked_at = task.blocked_since = None

    def on_sched_wakeup(self, e):
        task = self.tasks.get(e.target_pid)
        if task is None:
            return
        self.note_prio(e.target_pid, e.target_prio)
        waker = self.tasks.get(e.pid) if self.recorded(e.pid) else None
        if waker is task or (waker is not None and waker.on_cpu_since is None):
            waker = None
        if waker is not None and self.spin_waits_on:
            if task in waker.kin:  # a wakeup among kin may be what a third one spins on
                self.signal(waker, e.ts)
            self.mark(waker, self.position(waker, e.ts))
        if task.blocked_at is not None:
            self.resolve(task, waker, e.ts)

    on_sched_waking = on_sched_wakeup

    def on_sched_process_fork(self, e):
        if not self.recorded(e.child_pid):
            return
        parent = self.tasks.get(e.parent_pid) if self.recorded(e.parent_pid) else None
        child = self.new_task(e.child_pid, e.child_comm, e.ts, parent)
        if parent is not None and parent.on_cpu_since is not None:
            child.parent = parent.pid
            position = self.position(parent, e.ts)
            self.put(parent, position, (FORK, child))
            if self.spin_waits_on:
                self.signal(parent, e.ts)
                self.mark(parent, position)

    def on_sched_process_exit(self, e):
        task = self.tasks.get(e.target_pid)
        if task is not None:
            if self.spin_waits_on and task.on_cpu_since is not None:
                self.signal(task, e.ts)
                self.mark(task, self.position(task, e.ts))
            task.exited = True
            for other in task.kin:
                other.kin.discard(task)

    def on_sched_wakeup_new(self, e):
        if self.recorded(e.target_pid) and e.target_pid not in self.tasks:
            self.task(e.target_pid, e.target_comm, e.ts)

    def finish(self):
        for cpu in list(self.running):
            self.switch_out(cpu, self.last_ns)
        if self.spin_work == "least":
            for task in self.all:
                self.trim_spins(task)
        return self

    def trim_spins(self, task):
        """Move each spin-wait's start back to where the task's own work is estimated to end:
        the least CPU time it ran between an action and a spin-wait's end anywhere in the
        trace (a loop's iterations do alike work; the least one spun least). The CPU time
        recorded beyond it was spinning: SKIP drops it, the replay spins as long as its own
        schedule makes it."""
        if not task.spins:
            return
        work = min(at - start for start, at, _seq in task.spins)
        by_seq = {seq: (start, at) for start, at, seq in task.spins}
        ops = []
        for position, seq, op in task.ops:
            if seq in by_seq and op[0] == SPIN:
                start, at = by_seq[seq]
                begin = min(at, start + work)
                ops.append((begin, seq, op))
                ops.append((begin, seq, (SKIP, at)))
            else:
                ops.append((position, seq, op))
        task.ops = ops


def program(task, make_child, fresh):
    """The ops of one task in the order of its CPU time, RUN filling the gaps. ``fresh`` maps
    each recorded semaphore and counter to this run's own (a run changes their state)."""
    prog: list[tuple[Any, ...]] = []
    done = 0
    for position, _seq, op in sorted(task.ops, key=lambda item: (item[0], item[1])):
        if position > done:
            prog.append((RUN, position - done))
            done = position
        if op[0] == SKIP:  # the recorded spin up to here is the SPIN just placed
            done = max(done, op[1])
            continue
        if op[0] == FORK:
            op = (FORK, make_child(op[1]))
        elif op[0] in (WAIT, POST, SPIN, ADD):
            obj = fresh.get(id(op[1]))
            if obj is None:
                obj = fresh[id(op[1])] = type(op[1])(op[1].name)
            op = (op[0], obj, *op[2:])
        prog.append(op)
    if task.ran_ns > done:
        prog.append((RUN, task.ran_ns - done))
    prog.append((EXIT,))
    return prog


def read_trace(path, spin_waits=True, *, queued_spins=True, spin_work="least"):
    """(Rebuild, real stats) from a trace file; bad input is an InvalidValueError.
    ``rebuild.others`` lists (cpu, start_ns, end_ns) of the harness's "other" placeholders:
    the time other programs held a CPU the benchmark could have used. ``spin_waits``: turn
    the spins the trace shows waiting for another task into waits on it (docs/simulator.md,
    "Spins that wait for another task"); ``queued_spins``: also those on a task queued behind
    the spinner on its CPU; ``spin_work``: "least" starts each spin after the least work the
    task did before one, "recorded" after all of its recorded CPU time."""
    if spin_work not in ("least", "recorded"):
        raise InvalidValueError("spin_work", f"{spin_work!r}: 'least' or 'recorded'")
    rebuild = Rebuild(spin_waits, queued_spins, spin_work)

    def other(cpu, task, start, end, _state):
        if task.pid >= OTHER_PID_BASE and end > start:
            rebuild.others.append((cpu, start, end))

    real = schedtrace.TraceStats(on_segment=other)
    try:
        for event in schedtrace.open_events(path):
            rebuild.add(event)
            real.add(event)
    except schedtrace.TraceError as exc:
        raise InvalidValueError("trace", f"{path}: {exc}") from None
    rebuild.finish()
    real.finish()
    rebuild.autogroup_recorded = recorded_autogroup(path)
    rebuild.bench_wait_ns = sum(t.wait_sum_ns for t in real.tasks if rebuild.recorded(t.pid))
    if not any(rebuild.recorded(pid) for pid in rebuild.tasks):
        raise InvalidValueError("trace", f"{path}: no scheduler events of any task")
    return rebuild, real


def header_lines(path):
    """The comment lines the trace file at ``path`` starts with (plain, gzip or xz)."""
    with open(path, "rb") as raw:
        magic = raw.read(6)
        raw.seek(0)
        if magic[:2] == b"\x1f\x8b":
            with gzip.GzipFile(fileobj=raw) as stream:
                head = stream.read(HEADER_BYTES)
        elif magic == b"\xfd7zXZ\x00":
            with lzma.LZMAFile(raw) as stream:
                head = stream.read(HEADER_BYTES)
        else:
            head = raw.read(HEADER_BYTES)
    lines = head.decode("utf-8", "replace").split("\n")
    return list(itertools.takewhile(lambda line: line.startswith("#"), lines))


def recorded_autogroup(path):
    """sched_autogroup_enabled from the trace's header (True / False), None when the header
    does not say: recordings made before the harness wrote it, and other recorders' files."""
    try:
        lines = header_lines(path)
    except (OSError, EOFError, lzma.LZMAError):
        return None  # read_trace() has read the whole file: a damaged header says nothing
    for line in lines:
        at = line.find(AUTOGROUP_KEY)
        if at >= 0:
            value = line[at + len(AUTOGROUP_KEY):].split(";")[0].strip()
            return {"1": True, "0": False}.get(value)
    return None


def resolve_autogroup(autogroup, rebuild):
    """(on?, why): the option when given; else what the recording says; else on, as every
    recording of this project was made with autogroup enabled (docs/simulator.md)."""
    if autogroup is not None:
        return bool(autogroup), "option"
    if rebuild.autogroup_recorded is not None:
        return rebuild.autogroup_recorded, "recording"
    return True, "default"


def is_kernel_thread(comm):
    return comm.startswith(KTHREAD_COMMS)


def session_group(task_trace):
    """The autogroup of a recorded task: its recorded ancestry's (a fork copies the parent's,
    sched_autogroup_fork()), named after the first ancestor the trace shows; None (the root
    group) for a kernel thread."""
    root = task_trace
    while root.forked_by is not None:
        root = root.forked_by
    if is_kernel_thread(task_trace.comm) or is_kernel_thread(root.comm):
        return None
    return f"autogroup-{root.pid}"


class StatsWriter(FtraceWriter):
    """The replayed schedule straight into schedtrace's accounting, without text."""

    def __init__(self):
        super().__init__(io.StringIO(), pid_base=0)
        self.stats = schedtrace.TraceStats()

    def _line(self, cpu_id, comm, pid, flags, event, body):
        fields = schedtrace.fields.parse_fields(event, body)
        # the engine writes only the events and shapes schedtrace reads
        assert fields is not None and self.eng is not None, (event, body)
        self.stats.add(schedtrace.Event(self.eng.now, cpu_id, event, pid, comm, 0, **fields))


def replay(path, kernel, *, cpus=None, topology=None, machine=None, tunables=None, seed=1,
           others=True, spin_waits=True, queued_spins=True, spin_work="least",
           priorities=False, autogroup=None):
    """Replay the trace at ``path`` on ``kernel``; the run-shaped result with tasks/makespan.
    ``spin_waits=False`` replays every recorded spin as work of its recorded length;
    ``queued_spins``, ``spin_work``: see read_trace(); ``priorities``: run each task at the
    nice level of its recorded prio (nice_of()) instead of nice 0; ``autogroup``: each
    recorded session in its own task group and the other programs in theirs (True), all in
    the root group (False), or as the recording says (None; on when it does not say)."""
    tunables = dict(tunables or {})
    # The recorded bursts are CPU time measured on the busy machine: they already hold the
    # slowdown busy CPUs cause each other, so a calibration's contention would count it twice.
    tunables.setdefault("busy_contention", 0)
    # threadtest only lends the spec its shape: a replay runs recorded bursts, no counting loop,
    # so which loop figure the calibration has does not matter ("register" needs none extra)
    spec = {"workload": "threadtest", "kernel": kernel, "tunables": tunables, "seed": seed,
            "params": {"counter": "register"}}
    for key, value in (("cpus", cpus), ("topology", topology), ("machine", machine)):
        if value not in (None, ""):
            spec[key] = value
    norm = validate(spec)
    rebuild, real = read_trace(path, spin_waits, queued_spins=queued_spins,
                               spin_work=spin_work)
    started = time.perf_counter()
    grouped = resolve_autogroup(autogroup, rebuild)
    eng, writer = simulate(norm, rebuild, others, priorities, autogroup=grouped[0])
    result = assemble(norm, path, rebuild, real, eng, writer, time.perf_counter() - started,
                      others)
    result["params"]["autogroup"], result["params"]["autogroup_from"] = grouped
    return result


def nice_of(prio):
    """The nice level of a recorded kernel prio: 100-139 are the fair class's nice -20..19
    (prio = 120 + nice, include/linux/sched/prio.h); below 100 is a real-time or deadline task,
    which the simulator's fair-class-only machine runs at the strongest weight, nice -20."""
    if prio is None:
        return 0
    return max(-20, min(19, prio - 120))


def simulate(norm, rebuild, others=True, priorities=False, writer=None, *, autogroup=None):
    """Run the rebuilt programs; ``writer``: a StatsWriter (subclass) to receive the events;
    ``autogroup``: as replay()'s."""
    autogroup = resolve_autogroup(autogroup, rebuild)[0]
    topo = parse_topology(norm["topology"])
    writer = StatsWriter() if writer is None else writer
    eng = Engine(topo, make_policy(norm, topo.ncpus), norm["tunables"], norm["seed"],
                 norm["max_events"], ftrace=writer)
    used: set[int] = set()
    fresh: dict[int, Any] = {}

    def make(task_trace):
        # a reused pid gets a stand-in number: the old and the new task may overlap now
        tid = task_trace.pid if task_trace.pid not in used else REUSED_TID_BASE + len(used)
        used.add(tid)
        if tid != task_trace.pid:
            rebuild.stand_ins[tid] = task_trace.pid
        nice = nice_of(task_trace.prio) if priorities else 0
        # a list: the compiled Task types its program
        task = Task(tid, task_trace.comm[:15], [], nice=nice)
        group = session_group(task_trace) if autogroup else None
        if group is not None:
            task.group, task.group_shares = group, AUTOGROUP_SHARES
        task.prog = program(task_trace, lambda child: lambda _eng, _parent: make(child), fresh)
        return task

    roots = [t for t in rebuild.all if t.parent is None]
    latest = 0
    for root in roots:
        offset = root.start_ns - rebuild.first_ns
        latest = max(latest, offset)
        if offset <= 0:
            eng.spawn(make(root))
        else:
            eng.call_at(offset, lambda e, r=root: _start(e, make(r)))
    if others:
        latest = max(latest, background(eng, rebuild, topo.ncpus, autogroup=autogroup))
    eng.alive += 1  # late starters are not spawned yet: keep the engine running for them
    eng.call_at(latest, _release)
    eng.run()
    writer.stats.finish()
    return eng, writer


def others_nice(rebuild):
    """The nice level that makes the stand-ins take from the benchmark what the others took:
    the benchmark's tasks waited (runnable, not running) `wait` for every `run` they ran; a
    fair scheduler shares by weight, so that is the weight ratio of the two sides, and weights
    step by 1.25x per nice level."""
    bench = sum(t.ran_ns for t in rebuild.all)
    if not rebuild.others or not rebuild.bench_wait_ns or not bench:
        return 0
    ratio = rebuild.bench_wait_ns / bench
    return max(-20, min(19, -round(math.log(ratio) / math.log(1.25))))


def background(eng, rebuild, ncpus, *, autogroup=False):
    """Other programs' recorded CPU time, as one short task per stretch pinned to its CPU
    (modulo the replay's CPU count), weighted to take the share it took in the recording:
    the benchmark meets the same competition. With autogroup the weight is that of their
    sessions' group, one per CPU (the harness's placeholders are one per CPU), its tasks at
    nice 0 inside it: a session's shares weigh at the root, a task's nice only inside its
    group. Returns the last start offset."""
    latest = 0
    nice = others_nice(rebuild)
    for index, (cpu, start, end) in enumerate(rebuild.others):
        offset = max(0, start - rebuild.first_ns)
        latest = max(latest, offset)
        task = stand_in(index, cpu % ncpus, end - start, nice=nice, autogroup=autogroup)
        eng.call_at(offset, lambda e, t=task: _start(e, t, t.affinity[0]))
    return latest


def stand_in(index, cpu, run_ns, *, nice, autogroup):
    """One stretch of the other programs' CPU time: a task pinned to ``cpu`` at ``nice``,
    or with autogroup at nice 0 in the others' group on that CPU, whose shares weigh what
    ``nice`` would."""
    task = Task(OTHER_TID_BASE + index, "other", [(RUN, run_ns), (EXIT,)], group="other",
                nice=0 if autogroup else nice, affinity=(cpu,))
    if autogroup:
        task.group = f"autogroup-others-cpu{cpu}"
        task.group_shares = nice_to_weight(nice)
    return task


def _start(eng, task, cpu_id=None):
    """A task appearing mid-run: queued, and its CPU told (an idle one would not look)."""
    eng.spawn(task, cpu_id)
    eng.check_preempt(eng.cpus[task.cpu], task)


def _release(eng):
    eng.alive -= 1


def _ms(ns):
    return round(ns / 1e6, 6)


def task_rows(stats, keep, pids=None):
    """One row per task ``keep`` accepts; ``pids`` maps a stand-in tid to the recorded pid."""
    rows = []
    for t in stats.tasks:
        if keep(t.pid):
            d = t.as_dict()
            d["pid"] = (pids or {}).get(t.pid, t.pid)
            rows.append({k: (round(d[k], 6) if isinstance(d[k], float) else d[k])
                         for k in ("pid", "comm", "runtime_ms", "switches", "wakeups",
                                   "migrations", "wait_sum_ms", "wait_max_ms", "wait_avg_ms")})
    return rows


def assemble(norm, path, rebuild, real, eng, writer, wall, others):
    def recorded(pid):
        return rebuild.recorded(pid) or pid >= REUSED_TID_BASE

    ends = [t.end_ns for t in rebuild.all]
    real_makespan = (max(ends) if ends else rebuild.last_ns) - rebuild.first_ns
    # the benchmark's end, not the background's: the last event of a recorded task
    makespan = max((t.last_ns for t in writer.stats.tasks if recorded(t.pid)), default=0)
    counters = dict(eng.counters)
    return {
        "simulator_version": VERSION, "workload": "replay", "kernel": norm["kernel"],
        "params": {"trace": str(path), "tasks": len(rebuild.all),
                   "events": rebuild.events, "others": others},
        "tunables": norm["tunables"], "topology": norm["topology"], "seed": norm["seed"],
        "metrics": {"makespan_ms": [_ms(makespan)]},
        "counters": counters,
        "groups": {},
        "vmstat": {"columns": VMSTAT_COLUMNS, "rows": vmstat_rows(eng)},
        "wall_seconds": round(wall, 6),
        "makespan_ms": _ms(makespan),
        "tasks": task_rows(writer.stats, recorded, rebuild.stand_ins),
        "real": {"makespan_ms": _ms(real_makespan), "tasks": task_rows(real, recorded)},
        **({"machine": norm["machine"]} if "machine" in norm else {}),
    }


def wait_agreement(result, *, comms, floor_ms=1.0):
    """Per-task wait sums of the replay against the recording, for the tasks named ``comms``
    (a whole-system recording holds other programs too). A pid's rows are added up on each
    side (an exec or a reused pid splits one), and a wait under ``floor_ms`` counts as
    ``floor_ms``: sub-millisecond waits are one unlucky tick apart. Returns the rows
    ``(pid, comm, recorded_ms, replayed_ms, ratio)``, the ratio of the floored figures."""
    def by_pid(rows):
        sums: dict[int, list] = {}
        for row in rows:
            if row["comm"] in comms:
                entry = sums.setdefault(row["pid"], [row["comm"], 0.0])
                entry[1] += row["wait_sum_ms"]
        return sums

    real, sim = by_pid(result["real"]["tasks"]), by_pid(result["tasks"])
    rows = []
    for pid, (comm, recorded) in sorted(real.items()):
        replayed = sim.get(pid, [comm, 0.0])[1]
        rows.append((pid, comm, recorded, replayed,
                     max(replayed, floor_ms) / max(recorded, floor_ms)))
    return rows

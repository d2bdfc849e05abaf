"""The discrete-event engine: integer-nanosecond clock, an event queue of reusable events.

Each CPU owns one segment event and one balance event, each sleeping task one timer event
(simulator/eventq.py); re-planning moves the owner's event rather than adding another, so the
queue holds at most a few events per CPU and per sleeping task.

A CPU has at most one pending segment event: the moment its running task finishes its current
action, its slice expires at a tick, or a spinner would hand the CPU over -- whichever is first.
Progress inside a segment is computed analytically from elapsed time and the CPU's speed, so a
100 ms busy loop costs one event, not 25 ticks.  Ticks are only visited when something happens on
them (slice expiry, a due balance pass).
"""

import random
import time
from typing import TYPE_CHECKING, Any, Final

from . import balance
from .domains import DomainLevel
from .errors import CpuBudgetExceeded, EventBudgetExceeded
from .eventq import Event, EventQueue, new_queue
from .events import EV_BALANCE, EV_CALL, EV_SAMPLE, EV_SEG, EV_STOP, EV_TIMER, NO_TIME
from .interp import MONITOR_PARK, monitor_park, run_actions, step, step_reference
from .pelt import Pelt
from .policies import NICE_0, Policy
from .policies.base import NO_SLICE_END, RunQueue, remove_task
from .program import (
    BLOCKED,
    DONE,
    QUEUED,
    RUNNING,
    Counter,
    Mutex,
    Task,
)
from .topology import SHARED_CACHE

if TYPE_CHECKING:
    from mypy_extensions import i64  # see simulator/eventq.py

# the CPU-time budget is looked at once every CPU_CHECK_MASK + 1 events
CPU_CHECK_MASK: Final = 8191
# The flat migration refill (us) of a run whose workload gives no working set: the price the
# model always had, no source (docs/simulator.md, Machine model); x0.1 / x1 / x3 by distance
UNMODELLED_REFILL_US: Final = 30.0
# x86 cache line (Intel 64 and IA-32 optimisation manual; every level of the CPUs modelled)
CACHE_LINE_BYTES: Final = 64


class Cpu:
    __slots__ = ("id", "rq", "curr", "seg_start", "speed", "seg_event", "busy_ns", "sys_ns",
                 "need_resched", "domains", "bal_at", "bal_event", "siblings", "preempt_at",
                 "load_hist", "load_now", "load_tick", "kicked", "preempt_valid",
                 "pending_at", "llc_span", "tick_phase", "busy_since", "bal_hold",
                 "idle_stamp", "push_cpu", "idle_since", "avg_idle", "newidle_stamp")

    def __init__(self, cpu_id, rq, siblings):
        self.id: int = cpu_id
        self.rq: RunQueue = rq
        self.curr: Task | None = None
        self.seg_start: int = 0
        self.speed: float = 1.0
        # the CPU's run-segment event: when its task's action ends, its slice expires, ...
        self.seg_event: Event = Event(EV_SEG, self)
        self.busy_ns: int = 0
        self.sys_ns: int = 0
        self.need_resched: bool = False
        self.domains: list[DomainLevel] = []
        self.bal_at: int | None = None
        self.bal_event: Event = Event(EV_BALANCE, self)
        self.siblings: list[int] = siblings
        # when the running task's slice expires, NO_TIME when it does not
        self.preempt_at: int = NO_TIME
        self.load_hist: list[float] = [0.0] * 5
        self.load_now: int = 0  # policy.load_of(): typed, not boxed at every load change
        self.load_tick: int = 0
        self.kicked: bool = False
        self.preempt_valid: bool = False
        # the time of the CPU's one live segment event, NO_TIME when there is none
        self.pending_at: int = NO_TIME
        self.llc_span: tuple[int, ...] = (cpu_id,)
        # this CPU's ticks fall at tick_phase + k x tick (0 <= tick_phase < tick): the
        # scheduler tick is a per-CPU timer, not one instant for every CPU (see tick_skew)
        self.tick_phase: int = 0
        # when the CPU last went from idle to a task (-1 while idle), and the rq->next_balance
        # it kept when it last went idle (idle_keeps_busy_next_balance; 0: none)
        self.busy_since: int = -1
        self.bal_hold: int = 0
        # when the CPU last went idle (6.6's rq->idle_stamp; find_idlest_group_cpu() prefers
        # the most recently idled CPU, whose cache is likely warmer)
        self.idle_stamp: int = 0
        # 3.3's rq->avg_idle and the rq->idle_stamp its idle_balance() sets (-1: none)
        self.avg_idle: int = 0
        self.newidle_stamp: int = -1
        # rq->push_cpu while rq->active_balance is set: the CPU an active balance asked this
        # CPU's migration thread (stopper) to push a task to; -1 when none is pending
        self.push_cpu: int = -1
        # when the CPU last went idle, for the machine's wakeup-to-run latency (every CPU, with
        # or without domains); -1: it has not run yet, idle since long before the run
        self.idle_since: int = -1


class Engine:
    __slots__ = ("topo", "policy", "tun", "rng", "_random", "max_events", "trace_file", "now",
                 "queue", "tasks", "exited", "alive", "stop_at", "tick_ns", "noise",
                 "refill_us", "_counters", "marks", "samples", "overloaded", "pending_timers",
                 "depth", "track_load", "pelt", "cpus", "global_queue", "tick_preempts", "hrtick",
                 "newidle", "switch_ns", "flat_cost", "reference", "vruntime_only", "slice_only",
                 "idle_wake_ns", "idle_wake_polled_ns", "halt_poll_ns", "contention",
                 "contention_span", "has_account", "yield_ns",
                 "update_curr_first", "newidle_gate", "migration_cost_ns",
                 "warm_ns", "refill_by_distance", "threads", "socket_cpus", "smt_speed",
                 "n_switches", "n_migrations", "n_wakeups", "n_preemptions", "n_yields",
                 "n_decisions", "n_cost_ns", "wakeup_ns", "has_refill", "wake_affine",
                 "wake_affine_3x", "idle_sibling_3x", "balance_wake", "idle_sibling",
                 "idle_balance_kick", "keep_busy_balance",
                 "ftrace", "max_cpu_seconds",
                 "cpu_started", "cpu_exceeded")

    def __init__(self, topo, policy, tun, seed, max_events, trace=None, reference=False,
                 ftrace=None, queue=None, max_cpu_seconds=None):
        # reference mode routes every event through the plain functions (step_reference,
        # account(), sleep()) instead of the fast path's inlined cases; results must be
        # identical (tests/simulator/test_reference_mode.py)
        self.reference: bool = reference
        self.topo: Any = topo
        self.policy: Policy = policy
        self.tun: dict[str, Any] = tun
        self.rng: random.Random = random.Random(seed)
        self._random: Any = self.rng.random
        self.max_events: int = max_events
        # the CPU time (of this process) the run may use, None for no limit; checked every
        # CPU_CHECK_EVENTS events so that the check costs nothing measurable
        self.max_cpu_seconds: float | None = max_cpu_seconds
        self.cpu_started: float = 0.0
        self.cpu_exceeded: bool = False
        self.trace_file: Any = trace
        # an FtraceWriter (simulator/ftrace.py) or None; hooks sit where the schedule changes
        self.ftrace: Any = ftrace
        self.now: int = 0
        # "indexed" or "heapq" (simulator/eventq.py); None: the faster one in this build
        self.queue: EventQueue = new_queue(queue)
        # live tasks by tid; exited ones only leave their totals behind, so memory stays
        # O(live tasks) however many threads a run forks
        self.tasks: dict[int, Task] = {}
        self.exited: dict[str, list[int]] = {}
        self.alive: int = 0
        self.stop_at: int | None = None
        self.tick_ns: int = 1_000_000_000 // tun["HZ"]
        self.noise: float = tun["noise_pct"] / 100.0
        self.refill_us: Any = tun["cache_refill_us"]
        # refill_cost()'s inputs: the refill a migration costs per topology distance (same CPU,
        # SMT sibling, same socket, another socket) and how long a cache stays warm.  A
        # negative cache_refill_us (the default) asks for the price from the task's working set
        # (set_working_set()); until a workload gives one, the flat price the model always had
        flat_us = UNMODELLED_REFILL_US if self.refill_us < 0 else self.refill_us
        self.refill_by_distance: list[int] = [int(flat_us * 1000 * factor)
                                              for factor in (0.0, 0.1, 1.0, 3.0)]
        self.warm_ns: Any = tun["cache_warm_ms"] * 1e6
        self.threads: int = topo.threads
        self.socket_cpus: int = topo.cores * topo.threads
        self.smt_speed: Any = tun["smt_speed"]
        self.yield_ns: int = tun["yield_syscall_ns"]
        self.wakeup_ns: int = tun["wakeup_ns"]
        self.has_refill: bool = any(self.refill_by_distance)
        # the placement and balancing switches balance.py reads at every wakeup
        self.wake_affine: bool = bool(tun.get("wake_affine"))
        self.balance_wake: bool = bool(tun.get("balance_wake"))
        self.idle_sibling: bool = bool(tun.get("select_idle_sibling"))
        self.wake_affine_3x: bool = tun.get("wake_affine_form") == "3.x"
        self.idle_sibling_3x: bool = tun.get("idle_sibling_form") == "3.x"
        self.idle_balance_kick: bool = bool(tun.get("idle_balance_kick"))
        self.keep_busy_balance: bool = bool(tun.get("idle_keeps_busy_next_balance"))
        # the counters the engine bumps at nearly every event live in int fields while it runs
        # (the `counters` property folds them in); the others stay in this dict
        self.n_switches: int = 0
        self.n_migrations: int = 0
        self.n_wakeups: int = 0
        self.n_preemptions: int = 0
        self.n_yields: int = 0
        self.n_decisions: int = 0
        self.n_cost_ns: int = 0
        self._counters: dict[str, int] = dict.fromkeys(
            ("events", "context_switches", "migrations", "wakeups", "balance_attempts",
             "balance_failed", "balance_moved", "cache_hot_refusals", "preemptions", "yields",
             "forks", "sched_decisions", "sched_cost_total_ns", "deadline_misses", "jobs",
             "spin_blocks"), 0)
        self.marks: dict[str, Any] = {}
        self.samples: list[Any] = []
        self.overloaded: int = 0
        self.pending_timers: int = 0
        self.depth: int = 0
        # constants of the policy class and tunables the hot paths read, as plain slots
        self.global_queue: bool = policy.global_queue
        self.tick_preempts: bool = policy.tick_preempts
        self.hrtick: bool = policy.hrtick
        self.track_load: bool = not policy.global_queue
        self.newidle: bool = bool(tun["newidle_balance"]) and not policy.global_queue
        self.newidle_gate: bool = bool(tun.get("newidle_avg_idle", False))
        self.migration_cost_ns: int = int(tun.get("sched_migration_cost_ns", 0))
        self.switch_ns: int = tun["context_switch_ns"]
        # the machine: an idle CPU needs idle_wake_ns (IPI, idle-state exit, a halted vCPU's
        # wake by the host) before it runs what it was woken for; busy CPUs slow each other
        self.idle_wake_ns: int = tun["idle_wake_ns"]
        # a guest's vCPU idle for less than the host's halt-polling window is still polling on
        # its host CPU: the host need not schedule it back in, and the wake costs
        # idle_wake_polled_ns instead (docs/simulator.md, Machine model)
        self.halt_poll_ns: int = tun["halt_poll_ns"]
        self.idle_wake_polled_ns: int = tun["idle_wake_polled_ns"]
        self.contention: Any = tun["busy_contention"]
        self.contention_span: int = max(1, topo.ncpus - topo.threads)  # CPUs outside one core
        # the cost of a schedule() decision when the policy keeps the base class's flat one
        flat = type(policy).decision_cost is Policy.decision_cost
        self.flat_cost: int | None = policy.sched_cost if flat else None
        policy.attach(self)
        # False when the policy keeps the base class's no-op account(): the hot paths skip it
        self.has_account: bool = type(policy).account is not Policy.account
        # CfsPolicy's and O1Policy's account(), which _segment_done() inlines
        self.vruntime_only: bool = policy.account_is_vruntime
        self.slice_only: bool = policy.account_is_slice
        # enqueue_entity() begins with update_curr(): CFS and EEVDF place a task against the
        # running task's vruntime as of now (Policy.update_curr_on_enqueue)
        self.update_curr_first: bool = policy.update_curr_on_enqueue
        self.cpus: list[Cpu] = [Cpu(c, policy.new_rq(c), topo.siblings(c))
                                for c in range(topo.ncpus)]
        for cpu in self.cpus:  # sched_init(): rq->avg_idle = 2 * sysctl_sched_migration_cost
            cpu.avg_idle = 2 * self.migration_cost_ns
        if tun.get("tick_skew"):
            # tick_setup_sched_timer() of 2.6.21-2.6.32: each CPU's tick timer starts
            # (tick_period / 2) / num_possible_cpus() x cpu later than CPU 0's
            step = (self.tick_ns >> 1) // len(self.cpus)
            for cpu in self.cpus:
                cpu.tick_phase = step * cpu.id
        # 6.6's PELT utilisation and runnable averages for its balancer (pelt.py); None for
        # every other profile, whose hot paths then do no PELT work
        self.pelt: Pelt | None = (Pelt(topo.ncpus, 0) if tun.get("balance_66")
                                  and tun.get("pelt_signals") and not policy.global_queue
                                  else None)
        balance.setup(self)
        if ftrace is not None:
            ftrace.attach(self)

    @property
    def counters(self) -> dict[str, int]:
        """The run's counters by name (the hottest folded in from their int fields)."""
        counters = self._counters
        counters["context_switches"] = self.n_switches
        counters["migrations"] = self.n_migrations
        counters["wakeups"] = self.n_wakeups
        counters["preemptions"] = self.n_preemptions
        counters["yields"] = self.n_yields
        counters["sched_decisions"] = self.n_decisions
        counters["sched_cost_total_ns"] = self.n_cost_ns
        return counters

    # ----------------------------------------------------------------- event plumbing
    def push(self, when, kind, obj):
        """Queue a one-off event (a sample, the stop, a call)."""
        self.queue.schedule(Event(kind, obj), when)

    def trace(self, cpu_id, what, detail=""):
        if self.trace_file is not None:
            self.trace_file.write(f"{self.now} cpu{cpu_id} {what} {detail}\n".rstrip() + "\n")

    def tick_after(self, t: int) -> int:
        """``t`` rounded up to a whole number of ticks (a duration, or a time on CPU 0's and
        jiffies' tick grid)."""
        tick = self.tick_ns
        return -(-t // tick) * tick

    def cpu_tick_after(self, cpu: Cpu, t: int) -> int:
        """The first of ``cpu``'s own ticks at or after ``t`` (its grid is offset by its
        tick_phase)."""
        tick = self.tick_ns
        phase = cpu.tick_phase
        return -(-(t - phase) // tick) * tick + phase

    def jitter(self, ns):
        if self.noise <= 0.0 or ns <= 0:
            return ns
        ns = int(ns * (1.0 + self.noise * (2.0 * self._random() - 1.0)))
        return ns if ns > 0 else 1

    # ----------------------------------------------------------------- main loop
    def _seed_events(self):
        if self.tun["vmstat_interval_ms"] > 0:
            self.push(0, EV_SAMPLE, None)
        if self.stop_at is not None:
            self.push(self.stop_at, EV_STOP, None)
        for cpu in self.cpus:
            self.arm(cpu, 0)

    def run(self):
        """Process events until every task is done, the stop time, or nothing can happen.

        The reference mode (run_reference) does the same through the plain functions only; a
        test requires both to give identical results."""
        self.cpu_started = time.process_time()
        if self.reference:
            return self.run_reference()
        self._seed_events()
        return self._finish(self._event_loop(), self.max_events)

    def _event_loop(self) -> int:
        """Handle events in time order; returns how many (one more than the budget if it ran out).

        Nine events in ten are a CPU's run segment completing its task's action at full speed:
        that case is accounted here and the task's next actions run at once (a method of its own
        would cost the compiled build 1-2 % more instructions per event).  Other segment ends go
        through on_segment_end(), other events through _other_event()."""
        queue = self.queue
        budget = self.max_events
        events = 0
        # the event being handled stays queued until the next turn of the loop settles it
        # (EventQueue.first()): rescheduling it then costs one move, not a removal and a push
        in_hand: Event | None = None
        in_hand_seq: i64 = 0
        while self.alive > 0:
            if in_hand is not None:
                queue.settle(in_hand, in_hand_seq)
            event = in_hand = queue.first()
            if event is None:
                break
            in_hand_seq = event.seq
            now = self.now = event.when
            if event.kind != EV_SEG:
                if not self._other_event(event):
                    break
            else:
                cpu: Cpu = event.obj
                cpu.pending_at = NO_TIME
                task = cpu.curr
                if (task is None or cpu.speed != 1.0 or cpu.need_resched
                        or not 0 < task.remaining <= (elapsed := now - cpu.seg_start)):
                    self.on_segment_end(cpu)
                else:  # account(), inlined
                    cpu.seg_start = now
                    cpu.busy_ns += elapsed
                    task.sum_exec += elapsed
                    if self.vruntime_only:  # CfsPolicy.account(), inlined
                        weight = task.weight
                        task.vruntime += elapsed if weight == NICE_0 else elapsed * NICE_0 // weight
                    elif self.slice_only and task.slice_left > elapsed:
                        task.slice_left -= elapsed  # O1Policy.account() while the slice lasts
                    elif self.has_account:
                        self.policy.account(cpu.rq, task, elapsed, now)
                    run_actions(self, cpu, task)  # step() without its spin check: it ran
            events += 1
            if events > budget or (not events & CPU_CHECK_MASK and self._cpu_spent()):
                break
        if in_hand is not None:
            queue.settle(in_hand, in_hand_seq)
        return events

    def _other_event(self, event: Event) -> bool:
        """Every event but a segment's, at self.now; False for the stop."""
        kind = event.kind
        if kind == EV_TIMER:
            self.pending_timers -= 1  # the task's timer fired
            self.wake(event.obj, None, direct=True)
        elif kind == EV_BALANCE:
            balance.periodic(self, event.obj)
        elif kind == EV_SAMPLE:
            self.sample()
        elif kind == EV_CALL:
            event.obj(self)
        else:
            return False
        return True

    def run_reference(self):
        """run() without inlined cases: every event through its plain handler."""
        budget = self.max_events
        events = 0
        self._seed_events()
        while self.alive > 0:
            event = self.queue.pop()
            if event is None:
                break
            when = event.when
            kind = event.kind
            obj = event.obj
            if kind == EV_SEG:
                obj.pending_at = NO_TIME
                self.now = when
                self.segment_end_reference(obj)
            elif kind == EV_TIMER:
                self.now = when
                self.pending_timers -= 1
                self.wake(obj, None, direct=True)
            elif kind == EV_BALANCE:
                self.now = when
                balance.periodic(self, obj)
            elif kind == EV_SAMPLE:
                self.now = when
                self.sample()
            elif kind == EV_CALL:
                self.now = when
                obj(self)
            else:
                self.now = when
                break
            events += 1
            if events > budget or (not events & CPU_CHECK_MASK and self._cpu_spent()):
                break
        return self._finish(events, budget)

    def _cpu_spent(self) -> bool:
        """Has the run used its CPU-time budget?  (Marks it so that _finish() says so.)"""
        limit = self.max_cpu_seconds
        if limit is None or time.process_time() - self.cpu_started <= limit:
            return False
        self.cpu_exceeded = True
        return True

    def _finish(self, events, budget):
        self._counters["events"] = events
        if events > budget:
            raise EventBudgetExceeded(budget, self.now)
        if self.cpu_exceeded:
            assert self.max_cpu_seconds is not None  # only a limit can be exceeded
            raise CpuBudgetExceeded(self.max_cpu_seconds, self.now)
        for cpu in self.cpus:
            self.account(cpu)
        if self.samples and self.samples[-1][0] < self.now:
            self.alive, alive = 0, self.alive  # final partial interval, no next sample
            self.sample()
            self.alive = alive
        return self.now

    def segment_end_reference(self, cpu: Cpu):
        """on_segment_end() with account() called rather than inlined."""
        task = cpu.curr
        if task is None:
            cpu.need_resched = False
            self.schedule(cpu)
            return
        self.account(cpu)
        if cpu.need_resched:
            self.schedule(cpu)
        elif self.now < cpu.seg_start:
            self.plan(cpu)
        else:
            self.begin(cpu, task)

    # ----------------------------------------------------------------- task lifecycle
    def spawn(self, task: Task, cpu_id=None):
        """Make a task runnable at the start (or from a fork), on ``cpu_id`` or a chosen CPU."""
        task.state = QUEUED
        task.wait_start = self.now
        self.tasks[task.tid] = task
        self.alive += 1
        if cpu_id is None:  # created by the benchmark's main process running on CPU 0
            cpu_id = balance.select_fork_cpu(self, task, 0)
        self.enqueue(self.cpus[cpu_id], task, "fork")
        if self.ftrace is not None:
            self.ftrace.wakeup(task, None, new=True)
        return task

    def enqueue(self, cpu: Cpu, task: Task, how):
        rq = cpu.rq
        if self.global_queue:
            task.cpu = cpu.id
            self.policy.enqueue(rq, task, how, self.now)
            rq.nr_running += 1
            if self.tick_preempts:
                self._replan_all_running()
            return
        if task.cpu is not None and task.cpu != cpu.id:
            self.n_migrations += 1
            if self.ftrace is not None:
                self.ftrace.migrate(task, task.cpu, cpu.id, cpu.id if how == "migrate" else
                                    task.cpu)
        task.cpu = cpu.id
        curr = cpu.curr
        running = curr is not None and curr is not task and curr.state == RUNNING
        if running and self.update_curr_first:
            self.account(cpu)
        before = rq.nr_running
        self.policy.enqueue(rq, task, how, self.now)
        rq.nr_running = before + 1
        if self.pelt is not None:
            task.pelt = self.pelt.enqueue_signal(cpu.id, task.pelt, task.tid, self.now)
        balance.load_changed(self, cpu)
        # a task now waits: the running task needs its slice-expiry event (ticks were skipped)
        cpu.preempt_valid = False
        if running:
            self.plan(cpu)
        if before == 1:
            self.overloaded += 1
            balance.became_overloaded(self, cpu)

    def _replan_all_running(self):
        """Shared queue: a task now waits, so every running task may need its slice expiry."""
        for c in self.cpus:
            if c.curr is not None and c.preempt_at == NO_TIME and c.curr.state == RUNNING:
                c.preempt_valid = False
                self.account(c)
                self.plan(c)

    def dequeue(self, cpu: Cpu, task: Task):
        """Take a queued (not running) task off ``cpu`` for migration."""
        rq = cpu.rq
        self.policy.dequeue(rq, task, self.now)
        cpu.preempt_valid = False
        rq.nr_running -= 1
        if self.pelt is not None:
            signal = task.pelt
            assert signal is not None  # queued: enqueue() gave it one
            self.pelt.dequeue_signal(cpu.id, signal, self.now, False)
        if self.track_load:
            balance.load_changed(self, cpu)
        if rq.nr_running == 1:
            self.overloaded -= 1

    def _leave_cpu(self, cpu: Cpu, task: Task):
        """The running task blocks or exits: it no longer counts on its runqueue."""
        rq = cpu.rq
        self.policy.curr_leaves(rq, task, self.now)
        cpu.preempt_valid = False
        rq.nr_running -= 1
        if self.pelt is not None:
            self._pelt_leave(cpu, task)
        if self.track_load:
            balance.load_changed(self, cpu)
        if rq.nr_running == 1:
            self.overloaded -= 1
        task.last_ran = self.now
        task.last_cpu = cpu.id

    def _pelt_leave(self, cpu: Cpu, task: Task) -> None:
        pelt = self.pelt
        signal = task.pelt
        assert pelt is not None and signal is not None  # it ran: enqueue() gave it one
        pelt.run_signal(cpu.id, signal, self.now, 0)
        pelt.dequeue_signal(cpu.id, signal, self.now, True)
        if task.state == DONE:
            pelt.exit(task.tid, self.now)
            task.pelt = None

    def wake(self, task: Task, waker_cpu, sync=False, direct=False):
        if task.state != BLOCKED:
            return
        self.n_wakeups += 1
        task.state = QUEUED
        now = task.wait_start = self.now
        if self.global_queue:  # one shared queue: placement happens at pick time
            if self.reference:
                shared = self.cpus[task.cpu or 0]
                self.enqueue(shared, task, "wakeup")
                if self.ftrace is not None:
                    self.ftrace.wakeup(task, waker_cpu)
                self.check_preempt(shared, task, direct)
                return
            if task.cpu is None:
                task.cpu = 0
            policy = self.policy
            rq = self.cpus[task.cpu].rq  # the shared queue; enqueue(), inlined
            policy.enqueue(rq, task, "wakeup", now)
            rq.nr_running += 1
            if self.ftrace is not None:
                self.ftrace.wakeup(task, waker_cpu)
            if self.tick_preempts:
                self._replan_all_running()
            target = policy.preempt_target(self, task)  # check_preempt(), inlined
            if target is None:
                return
            if self.trace_file is not None:  # resched(), inlined (a timer's wakeup, per job)
                self.trace(target.id, "resched", "global queue: better task arrived")
            target.need_resched = True
            if target.curr is None:
                if self.idle_wake_ns:
                    self.wake_idle_cpu(target)
                elif direct and self.depth == 0:
                    self.schedule(target)
                else:
                    self.arm(target, now)
            elif direct and self.depth == 0:
                self.account(target)
                self.schedule(target)
            else:
                self.arm(target, now)
            return
        if task.sched_delayed:
            # 6.12's ttwu_runnable(): a task DELAY_DEQUEUE kept queued is still on its
            # runqueue, so it is woken there (ENQUEUE_DELAYED), no select_task_rq()
            queued_on = task.cpu
            assert queued_on is not None
            cpu = self.cpus[queued_on]
        else:
            if task.cpu is not None:  # try_to_wake_up(): task_waking before select_task_rq
                self.policy.task_waking(self.cpus[task.cpu].rq, task, now)
            cpu = self.cpus[balance.select_wake_cpu(self, task, waker_cpu, sync)]
        if cpu.newidle_stamp >= 0:
            balance.end_idle_span(self, cpu)
        self.enqueue(cpu, task, "wakeup")
        if self.ftrace is not None:
            self.ftrace.wakeup(task, waker_cpu)
        self.check_preempt(cpu, task, direct)

    def check_preempt(self, cpu: Cpu, task: Task, direct=False):
        """Does ``task``, just queued on ``cpu``, get a CPU now?  ``direct`` (only from a
        top-level event such as a timer, when no CPU is half-way through its actions) switches
        at once instead of through a resched event."""
        policy = self.policy
        if self.global_queue:
            target = policy.preempt_target(self, task)
            if target is not None:
                self.resched(target, "global queue: better task arrived", direct)
            return
        curr = cpu.curr
        if curr is None:
            self.resched(cpu, "idle cpu has work", direct)
        elif policy.wakeup_preempts(cpu.rq, curr, task, self.now):
            self.account(cpu)
            tracing = self.trace_file is not None
            self.resched(cpu, f"wakeup preemption: {task.name} preempts {curr.name}"
                         if tracing else "")

    def resched(self, cpu: Cpu, reason="", direct=False):
        if self.trace_file is not None:
            self.trace(cpu.id, "resched", reason)
        cpu.need_resched = True
        if cpu.curr is None and self.idle_wake_ns:
            self.wake_idle_cpu(cpu)
        elif direct and self.depth == 0:
            if cpu.curr is not None:
                self.account(cpu)
            self.schedule(cpu)
        else:
            self.arm(cpu, self.now)

    def wake_idle_cpu(self, cpu: Cpu):
        """An idle CPU got work: it runs it after the machine's wakeup-to-run latency (an
        already waking CPU keeps its earlier instant)."""
        if cpu.pending_at != NO_TIME and cpu.pending_at >= self.now:
            return
        now = self.now
        if cpu.idle_since >= 0 and now - cpu.idle_since < self.halt_poll_ns:
            self.arm(cpu, now + self.idle_wake_polled_ns)
        else:
            self.arm(cpu, now + self.idle_wake_ns)

    def call_at(self, when, fn):
        """Run ``fn(engine)`` at simulated time ``when`` (workload bookkeeping, e.g. warm-up)."""
        self.push(when, EV_CALL, fn)

    def check_preempt_after_pull(self, cpu: Cpu):
        if cpu.curr is None:
            self.resched(cpu, "pulled work")

    def fork(self, cpu: Cpu, parent, child):
        """Create ``child`` from the running ``parent``: placement, slice split, who runs first."""
        self._counters["forks"] += 1
        child.parent = parent
        child.wait_start = self.now
        self.tasks[child.tid] = child
        self.alive += 1
        target = balance.select_fork_cpu(self, child, cpu.id)
        self.account(cpu)
        rq = self.cpus[target].rq
        self.policy.task_fork(rq, parent, child, self.now, target == cpu.id)
        child.cpu = target
        self.enqueue(self.cpus[target], child, "fork")
        if self.ftrace is not None:
            self.ftrace.fork(cpu, parent, child)
            self.ftrace.wakeup(child, cpu.id, new=True)
        if target == cpu.id and self.policy.child_runs_first(parent, child):
            self.resched(cpu, f"child runs first: {child.name} preempts {parent.name}")
        else:
            self.check_preempt(self.cpus[target], child)

    # ----------------------------------------------------------------- CPU segments
    def account(self, cpu: Cpu):
        """Charge the time since the segment started to the running task (analytic progress)."""
        task = cpu.curr
        now = self.now
        start = cpu.seg_start
        if task is None or now <= start:
            return
        elapsed = now - start
        cpu.seg_start = now
        cpu.busy_ns += elapsed
        task.sum_exec += elapsed
        if task.remaining > 0:  # a wall-clock burn's remaining is wall time, whatever the speed
            task.remaining -= (elapsed if cpu.speed == 1.0 or task.wall_until is not None
                               else int(elapsed * cpu.speed))
        elif task.spin_yield:
            # with or without a busy wait the part-done round carries over in spin_phase: plan()
            # times the give-up from it, and dropping it made a spin split by more accountings
            # (a vmstat sample, a tick) run longer, so results moved with vmstat_interval_ms
            self.spin_rounds(task, elapsed)
        if self.has_account:
            self.policy.account(cpu.rq, task, elapsed, now)

    def spin_rounds(self, task: Task, elapsed: int):
        """A spinner that busy-waits ``spin_busy`` ns (0: none) before each sched_yield() ran
        ``elapsed`` ns without handing the CPU over: the rounds it completed, each ending in a
        yield; the part of a round begun stays in ``spin_phase``."""
        round_ns = task.spin_busy + self.yield_ns
        total = task.spin_phase + elapsed
        yields = total // round_ns
        if task.spin_sleep and task.spins_left is not None and yields > task.spins_left:
            # past its last yield a sleeping spinner's round ends in its sleep, not a yield
            yields = max(task.spins_left, 0)
        task.spin_phase = total - yields * round_ns
        self.n_yields += yields
        if task.spins_left is not None:
            task.spins_left -= yields

    def on_segment_end(self, cpu: Cpu):
        task = cpu.curr
        if task is None:
            cpu.need_resched = False
            self.schedule(cpu)
            return
        now = self.now
        start = cpu.seg_start
        if now > start and task.remaining > 0 and cpu.speed == 1.0:
            # account(), inlined for the hottest case: a full-speed run segment ends
            elapsed = now - start
            cpu.seg_start = now
            cpu.busy_ns += elapsed
            task.sum_exec += elapsed
            task.remaining -= elapsed
            if self.has_account:
                self.policy.account(cpu.rq, task, elapsed, now)
        else:
            self.account(cpu)
        if cpu.need_resched:
            self.schedule(cpu)
        elif task.remaining <= 0 and task.spin_on is None and self.now >= cpu.seg_start:
            if self.reference:  # the common case: the running action is complete
                step_reference(self, cpu, task)
            else:
                step(self, cpu, task)
        elif self.now < cpu.seg_start:
            # still paying switch/refill overhead; the segment really starts later
            self.plan(cpu)
        else:
            self.begin(cpu, task)

    def preempt_due(self, cpu: Cpu, task: Task) -> bool:
        if cpu.preempt_at == NO_TIME or self.now < cpu.preempt_at:
            return False
        if not self.policy.tick_preempt(cpu.rq, task, self.now):
            cpu.preempt_valid = False
            return False
        if self.trace_file is not None:
            self.trace(cpu.id, "tick", f"slice expired for {task.name}")
        return True

    def plan(self, cpu: Cpu):
        """Schedule the single pending event of a CPU: action end, slice expiry or handover."""
        task = cpu.curr
        assert task is not None  # only a CPU with a task has something to plan
        start: int = cpu.seg_start
        end: int = NO_TIME  # nothing pending
        if task.spin_on is None:
            left = task.remaining if task.remaining > 0 else 0
            speed = cpu.speed
            end = start + (left if speed == 1.0 or task.wall_until is not None
                           else int(-(-left // speed)))
        elif self.spin_ready(task):
            end = start  # a notify may have been superseded by this replan: re-check at once
        elif task.spin_yield:
            busy = task.spin_busy
            spins_left = task.spins_left
            if task.spin_sleep and spins_left is not None and spins_left <= 0:
                end = start + max(0, busy - task.spin_phase)  # its last round, then the sleep
            else:
                if busy and self.policy.yield_hands_over(cpu.rq, task, self.now):
                    end = start + max(0, busy - task.spin_phase)  # its busy wait, the yield
                else:
                    delay = self.policy.yield_handover_delay(cpu.rq, task, self.now)
                    if delay is not None:
                        end = start + delay
                if spins_left is not None:  # a bounded spinner gives up after its last yield
                    # (a sleeping one after one more busy wait: its round ends in the sleep)
                    give_up = start + max(0, spins_left * (busy + self.yield_ns)
                                          + (busy if task.spin_sleep else 0) - task.spin_phase)
                    if end == NO_TIME or give_up < end:
                        end = give_up
        if cpu.need_resched:
            end = self.now
        # the slice-expiry instant is absolute: it only moves when the runqueue changes
        preempt_at = cpu.preempt_at if cpu.preempt_valid else self.slice_expiry(cpu, task, start)
        if preempt_at != NO_TIME and (end == NO_TIME or preempt_at < end):
            end = preempt_at
        if end == NO_TIME:
            self.queue.cancel(cpu.seg_event)  # nothing pending: whatever was armed is obsolete
            cpu.pending_at = NO_TIME
        elif end != cpu.pending_at:  # arm(), inlined (hottest path)
            cpu.pending_at = end
            self.queue.schedule(cpu.seg_event, end)

    def arm(self, cpu: Cpu, when: int):
        """Make ``when`` the instant of the CPU's one pending segment event."""
        cpu.pending_at = when
        self.queue.schedule(cpu.seg_event, when)

    def slice_expiry(self, cpu: Cpu, task: Task, start: int) -> int:
        """When the running task's slice expires (>= start), or NO_TIME if it does not."""
        preempt_at = NO_TIME
        if self.tick_preempts and (cpu.rq.nr_running > 1 or self.global_queue):
            at = self.policy.preempt_time(cpu.rq, task, start)
            if at != NO_SLICE_END:
                if not self.hrtick:  # cpu_tick_after(), inlined: the CPU's own tick
                    tick = self.tick_ns
                    phase = cpu.tick_phase
                    at = -(-(at - phase) // tick) * tick + phase
                preempt_at = at if at > start else start
        cpu.preempt_at = preempt_at
        cpu.preempt_valid = True
        return preempt_at

    # ----------------------------------------------------------------- scheduling
    def schedule(self, cpu: Cpu):
        """Put the running task back (if it still runs), pick the next one and switch to it."""
        cpu.need_resched = False
        prev = cpu.curr
        rq = cpu.rq
        policy = self.policy
        now = self.now
        involuntary = False
        if prev is not None and prev.state == RUNNING:
            involuntary = not prev.yield_pending
            prev.state = QUEUED
            prev.wait_start = now
            prev.last_ran = now
            prev.last_cpu = cpu.id
            policy.put_prev(rq, prev, now)
            if self.pelt is not None:
                signal = prev.pelt
                assert signal is not None  # it runs: enqueue() gave it one
                self.pelt.run_signal(cpu.id, signal, now, 0)
        if cpu.push_cpu >= 0:  # the stopper ran first: its push, then the pick from the rest
            balance.active_push(self, cpu)
        nxt = policy.pick_next(rq, cpu, now)
        if nxt is None and self.newidle:
            balance.newidle(self, cpu)
            nxt = policy.pick_next(rq, cpu, now)
        if nxt is None:
            self.go_idle(cpu, prev)
            return
        flat = self.flat_cost
        cost: int = flat if flat is not None else policy.decision_cost(rq)
        self.n_decisions += 1  # decisions that had a task to pick
        self.n_cost_ns += cost
        if nxt is not prev:
            if involuntary:
                self.n_preemptions += 1
            self.n_switches += 1
            cost += self.switch_ns
            if prev is not None and prev.state == QUEUED and self.trace_file is not None:
                self.trace(cpu.id, "switch", f"{prev.name} -> {nxt.name}")
        # switch in nxt (in this function rather than a helper: it runs at every switch)
        was_idle = prev is None or cpu.curr is None
        if self.ftrace is not None and nxt is not prev:
            self.ftrace.switch(cpu, prev, nxt)
        nxt.state = RUNNING
        nxt.wait_sum += now - nxt.wait_start
        last = nxt.last_cpu
        if last is not None and last != cpu.id:
            if self.has_refill:
                cost += self.refill_cost(nxt, cpu.id)
            if self.global_queue:
                self.n_migrations += 1
                if self.ftrace is not None:
                    self.ftrace.migrate(nxt, last, cpu.id, cpu.id)
        nxt.cpu = cpu.id
        nxt.never_ran = False
        cpu.curr = nxt
        cpu.sys_ns += cost
        cpu.seg_start = now + cost
        if nxt.wall_until is not None:  # the wall clock ran on while it waited
            left = nxt.wall_until - cpu.seg_start
            nxt.remaining = left if left > 0 else 0
        cpu.preempt_at = NO_TIME
        cpu.preempt_valid = not self.tick_preempts  # no tick preempts: None is already valid
        policy.on_pick(rq, nxt, now)
        if self.pelt is not None:
            signal = nxt.pelt
            assert signal is not None  # queued: enqueue() gave it one
            self.pelt.run_signal(cpu.id, signal, now, 1)
        if was_idle:
            cpu.busy_since = now
            if self.contention:
                self.update_speeds()
            elif cpu.siblings:
                self.sibling_changed(cpu)
        if cpu.seg_start == now and self.depth < 32:
            self.depth += 1
            if (nxt.remaining <= 0 and nxt.spin_on is None and not cpu.need_resched
                    and not self.reference):
                step(self, cpu, nxt)  # begin()'s commonest case: the next action is due
            else:
                self.begin(cpu, nxt)
            self.depth -= 1
        else:
            # Continue through an event rather than recursing without bound: a chain of tasks
            # that block at once would otherwise nest one Python frame per task.
            self.arm(cpu, cpu.seg_start)

    def set_working_set(self, nbytes: int) -> None:
        """Price a migration from the working set each task of the run touches, when
        cache_refill_us asks for it (negative): every line of it the task had in the private
        caches (L1/L2) of its old CPU is fetched again on the new one, at the load-to-use
        latency of the nearest level the two CPUs share (docs/simulator.md, Machine model).
        SMT siblings share L1 and L2, so nothing is refetched; cores of one socket refetch
        from the shared LLC; across sockets from the other socket's cache or memory.  Each
        line is charged its full latency, as a dependent load (an upper bound: out-of-order
        cores overlap independent misses)."""
        if self.refill_us >= 0:
            return  # an explicit flat price overrides the model
        lines = -(-nbytes // CACHE_LINE_BYTES)
        latency = {"L1": 0.0, "L2": 0.0, "LLC": self.tun["cache_llc_ns"],
                   "remote": self.tun["cache_remote_ns"]}
        self.refill_by_distance = [int(lines * latency[level]) for level in SHARED_CACHE]
        self.has_refill = any(self.refill_by_distance)

    def refill_cost(self, task: Task, cpu_id: int) -> int:
        last = task.last_cpu
        if last is None or last == cpu_id or task.never_ran or not self.has_refill:
            return 0
        if self.now - task.last_ran > self.warm_ns:
            return 0
        # Topology.distance(last, cpu_id), inlined (last != cpu_id here)
        if last // self.threads == cpu_id // self.threads:
            return self.refill_by_distance[1]
        if last // self.socket_cpus == cpu_id // self.socket_cpus:
            return self.refill_by_distance[2]
        return self.refill_by_distance[3]

    def go_idle(self, cpu: Cpu, prev):
        if self.ftrace is not None and prev is not None:
            self.ftrace.switch(cpu, prev, None)
        cpu.curr = None
        if prev is not None:  # (a CPU that finds nothing after a wake stays idle since then)
            cpu.idle_since = self.now
        cpu.preempt_at = NO_TIME
        cpu.preempt_valid = False
        self.queue.cancel(cpu.seg_event)
        cpu.pending_at = NO_TIME
        if prev is not None and self.contention:
            self.update_speeds()
        elif prev is not None and cpu.siblings:
            self.sibling_changed(cpu)
        if self.trace_file is not None:
            self.trace(cpu.id, "idle")
        if cpu.domains:
            balance.went_idle(self, cpu)

    def update_speeds(self):
        """Busy CPUs slow each other (shared caches, memory bandwidth, host steal): a CPU's
        speed is the SMT share while a sibling is busy, divided by 1 + busy_contention x the
        busy fraction of the CPUs outside its core.  Called when a CPU turns busy or idle."""
        cpus = self.cpus
        topo = self.topo
        share = self.smt_speed
        busy_cores: dict[int, int] = {}
        for c in cpus:
            if c.curr is not None:
                core = topo.core_of(c.id)
                busy_cores[core] = busy_cores.get(core, 0) + 1
        total = sum(busy_cores.values())
        for c in cpus:
            core = topo.core_of(c.id)
            in_core = busy_cores.get(core, 0)
            mine = 1 if c.curr is not None else 0
            speed = share if in_core - mine > 0 else 1.0
            outside = total - in_core
            speed /= 1.0 + self.contention * outside / self.contention_span
            if c.speed != speed:
                if c.curr is not None:
                    self.account(c)
                    c.speed = speed
                    self.plan(c)
                else:
                    c.speed = speed

    def sibling_changed(self, cpu: Cpu):
        """SMT: a core's threads share its throughput, so a sibling's state sets our speed."""
        if not cpu.siblings:
            return
        share = self.smt_speed
        busy = cpu.curr is not None
        for sid in cpu.siblings:
            sib = self.cpus[sid]
            new_speed = share if busy else 1.0
            if sib.curr is not None and sib.speed != new_speed:
                self.account(sib)
                sib.speed = new_speed
                self.plan(sib)
            else:
                sib.speed = new_speed
        cpu.speed = share if any(self.cpus[s].curr is not None for s in cpu.siblings) else 1.0

    # ----------------------------------------------------------------- program execution
    def begin(self, cpu: Cpu, task: Task):
        """Continue the task's current action on ``cpu`` now that its segment has started."""
        if cpu.need_resched:
            self.schedule(cpu)
        elif task.spin_on is not None:
            if self.spin_ready(task):
                if self.reference:
                    step_reference(self, cpu, task)
                else:
                    step(self, cpu, task)
            elif (task.spin_yield and task.spins_left is not None and task.spins_left <= 0
                  and (not task.spin_sleep or task.spin_phase >= task.spin_busy)):
                self.give_up_spin(cpu, task)
            elif (task.spin_yield and task.spin_phase >= task.spin_busy
                  and self.policy.yield_hands_over(cpu.rq, task, self.now)):
                self.do_yield(cpu, task)
            elif self.preempt_due(cpu, task):
                self.schedule(cpu)
            else:
                self.plan(cpu)
        elif task.remaining <= 0:
            if self.reference:
                step_reference(self, cpu, task)
            else:
                step(self, cpu, task)
        elif self.preempt_due(cpu, task):
            self.schedule(cpu)
        else:
            self.plan(cpu)

    def spin_ready(self, task: Task) -> bool:
        if task.lock_mode is not None:  # spinning for a lock
            mutex: Mutex = task.spin_on
            return mutex.owner is None
        counter: Counter = task.spin_on
        return counter.value >= task.spin_target

    def give_up_spin(self, cpu: Cpu, task: Task):
        """A bounded yield-spinner used its last sched_yield(): wait on the futex instead, or
        (``spin_sleep``) sleep by a timer and retry."""
        mutex = task.spin_on
        if task.spin_sleep == MONITOR_PARK:  # a HotSpot monitor's contender parks instead
            monitor_park(self, cpu, task)
            return
        if task.spin_sleep:
            # HotSpot's Thread::SpinAcquire() past its yields: park(1), a timed sleep that no
            # unlock ends (SpinRelease() only clears the lock word), so the task stays the
            # lock's spinner while it sleeps; run again, it takes the lock if it is free, or
            # spins one more busy-wait round and sleeps again
            task.spins_left = 0
            task.spin_phase = 0
            self._counters["spin_sleeps"] = self._counters.get("spin_sleeps", 0) + 1
            if self.trace_file is not None:
                self.trace(cpu.id, "spin-sleep", f"{task.name} sleeps on {mutex.name}")
            self.sleep(cpu, task, self.now + self.jitter(task.spin_sleep))
            return
        remove_task(mutex.spinners, task)
        task.spin_on = None
        task.spin_yield = False
        task.lock_mode = None
        task.spins_left = None
        mutex.waiters.append(task)
        self._counters["spin_blocks"] += 1
        if self.trace_file is not None:
            self.trace(cpu.id, "spin-block", f"{task.name} blocks on {mutex.name}")
        self.block(cpu, task)

    def do_yield(self, cpu: Cpu, task: Task):
        self.n_yields += 1
        if task.spins_left is not None:
            task.spins_left -= 1
        self.account(cpu)
        cpu.sys_ns += self.yield_ns
        cpu.seg_start = max(cpu.seg_start, self.now) + self.yield_ns
        task.spin_phase = 0  # the yield ends a busy-wait-then-yield round
        self.policy.yield_task(cpu.rq, task, self.now)
        if self.trace_file is not None:
            self.trace(cpu.id, "yield", task.name)
        self.schedule(cpu)

    def block(self, cpu: Cpu, task: Task):
        task.state = BLOCKED
        self._leave_cpu(cpu, task)
        self.schedule(cpu)

    def exit(self, cpu: Cpu, task: Task):
        if self.ftrace is not None:
            self.ftrace.exit(cpu, task)
        task.state = DONE
        self.alive -= 1
        self._leave_cpu(cpu, task)
        if task.timer_event is not None and not task.timer_event.queued:
            task.timer_event = None  # it refers back to the task: no cycle left behind
        totals = self.exited.setdefault(task.group, [0, 0])
        totals[0] += task.wait_sum
        totals[1] += task.sum_exec
        del self.tasks[task.tid]
        self.schedule(cpu)

    def group_totals(self):
        """{group: [wait_sum_ns, run_ns]} over every task the run had, live or exited."""
        totals = {g: list(v) for g, v in self.exited.items()}
        for t in self.tasks.values():
            acc = totals.setdefault(t.group, [0, 0])
            acc[0] += t.wait_sum
            acc[1] += t.sum_exec
        return totals

    def notify_spinners(self, spinners: list[Task]):
        """Something spinners wait for changed (``spinners``: a Mutex's or a Counter's, passed
        as the list so that the compiled build reads it natively, not by attribute name):
        running spinners re-check now."""
        for t in spinners:
            if t.state == RUNNING:
                assert t.cpu is not None  # a running task is on a CPU
                self.arm(self.cpus[t.cpu], self.now)

    def arm_timer(self, task: Task, until: int):
        """Wake ``task`` at ``until`` (its one timer: arming it again moves it)."""
        timer = task.timer_event
        if timer is None:
            timer = task.timer_event = Event(EV_TIMER, task)
        self.pending_timers += 1
        self.queue.schedule(timer, until)

    def disarm_timer(self, task: Task):
        """Take ``task``'s timer off the queue if it is armed (a timed wait ended early)."""
        timer = task.timer_event
        if timer is not None and timer.queued:
            self.queue.cancel(timer)
            self.pending_timers -= 1

    def sleep(self, cpu: Cpu, task: Task, until):
        self.arm_timer(task, until)
        task.state = BLOCKED  # block(), inlined
        self._leave_cpu(cpu, task)
        self.schedule(cpu)

    # ----------------------------------------------------------------- vmstat series
    def sample(self):
        interval = int(self.tun["vmstat_interval_ms"] * 1e6)
        # read, not account(): accounting splits the running tasks' segments, and a split
        # changes RSDL's lazy rotations of a lone task (and so the run) with the interval
        now = self.now
        busy = 0
        for cpu in self.cpus:
            busy += cpu.busy_ns
            if cpu.curr is not None and now > cpu.seg_start:
                busy += now - cpu.seg_start
        sys = sum(c.sys_ns for c in self.cpus)
        running = sum(c.rq.nr_running for c in self.cpus) if not self.policy.global_queue else (
            self.policy.nr_running_total(self))
        self.samples.append((self.now, running, self.n_switches, busy, sys))
        if self.alive > 0 and not self.stalled():
            self.push(self.now + interval, EV_SAMPLE, None)

    def stalled(self):
        """Every task blocked with no timer pending: nothing can ever happen again."""
        if self.pending_timers > 0 or any(c.rq.nr_running for c in self.cpus):
            return False
        return all(c.curr is None and not c.need_resched for c in self.cpus)



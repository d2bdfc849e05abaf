"""Task programs: compiled action lists and the synchronisation objects they act on.

A task is a small state machine: ``prog`` is a list of tuples ``(op, *args)`` and ``pc`` the index
of the current one.  Running actions (RUN, SPIN) occupy a CPU; every other action is instantaneous
and either continues, blocks the task, or ends it.  Programs are plain data so the engine can run
millions of actions without coroutine overhead.
"""

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # annotations only
    from .pelt import Signal

# op codes (Final: the compiled build inlines them)
RUN: Final = 0
SPIN: Final = 1
ADD: Final = 2
SET: Final = 3
WAIT: Final = 4
POST: Final = 5
LOCK: Final = 6
UNLOCK: Final = 7
SLEEP: Final = 8
TIMER: Final = 9
YIELD: Final = 10
FORK: Final = 11
EXIT: Final = 12
LOOP: Final = 13
MARK: Final = 14
BARRIER: Final = 15
WALL_RUN: Final = 16
WALL_END: Final = 17

OP_NAMES = ["run", "spin", "add", "set", "wait", "post", "lock", "unlock", "sleep", "timer",
            "yield", "fork", "exit", "loop", "mark", "barrier", "wall_run", "wall_end"]

# task states
QUEUED: Final = 0
RUNNING: Final = 1
BLOCKED: Final = 2
DONE: Final = 3


class Counter:
    """A shared integer that tasks bump (ADD/SET) and busy-wait on (SPIN until value >= n)."""

    __slots__ = ("name", "value", "spinners")

    def __init__(self, name, value=0):
        self.name: str = name
        self.value: int = value
        self.spinners: list[Any] = []


class Semaphore:
    """Counting semaphore: WAIT blocks while zero (futex/pipe read), POST wakes one waiter."""

    __slots__ = ("name", "count", "waiters")

    def __init__(self, name, count=0):
        self.name: str = name
        self.count: int = count
        self.waiters: list[Any] = []


class Mutex:
    """A lock taken either by blocking (futex) or by spinning on sched_yield() (JVM style)."""

    __slots__ = ("name", "owner", "waiters", "spinners", "contended", "handoff", "wake_all",
                 "monitor", "cxq", "succ", "responsible", "spin_duration", "loop_ns")

    def __init__(self, name, handoff=True, wake_all=False, monitor=False, loop_ns=0.0):
        self.name: str = name
        # True: unlock passes the lock to the first blocked waiter (a FIFO futex lock); False:
        # competitive succession, as the JVM monitors: unlock frees the lock and wakes the
        # first blocked waiter, which competes for it again when it runs
        self.handoff: bool = handoff
        # with competitive succession, True: unlock wakes every blocked waiter, each to spin
        # afresh, as J9's three-tier monitors (Apache Harmony's hythread, IBM's contribution:
        # monitor_exit() -> unblock_spinlock_threads(), "Notify all threads blocked on the
        # monitor's mutex"); False: the first blocked waiter only
        self.wake_all: bool = wake_all
        self.owner: Any = None
        self.waiters: list[Any] = []
        self.spinners: list[Any] = []
        self.contended: int = 0
        # True: HotSpot's ObjectMonitor (interp.py, "HotSpot's Java monitor"): `waiters` is its
        # EntryList, `cxq` its recently arrived threads (front: the newest), `succ` the heir
        # presumptive or a spinner (an exit that finds one wakes nobody), `responsible` the
        # waiter that parks with a timeout, `spin_duration` the adaptive spin's length in spin
        # iterations, priced at `loop_ns` each.  Every contender of a monitor, spinning or
        # parked, is in `spinners` until it owns the monitor.
        self.monitor: bool = monitor
        self.cxq: list[Any] = []
        self.succ: Any = None
        self.responsible: Any = None
        self.spin_duration: int = 0
        self.loop_ns: float = loop_ns


class Barrier:
    __slots__ = ("name", "parties", "arrived", "waiters")

    def __init__(self, name, parties):
        self.name: str = name
        self.parties: int = parties
        self.arrived: int = 0
        self.waiters: list[Any] = []


class Task:
    """One schedulable entity.  Policy-specific fields live here too (slots keep it compact)."""

    __slots__ = (
        "tid", "name", "group", "prog", "pc", "loops", "remaining", "state", "cpu", "last_cpu",
        "last_ran", "exec_start", "sum_exec", "prev_sum_exec", "weight", "nice", "vruntime",
        "deadline", "slice_left", "prio", "level", "quota", "expired", "wait_start", "wait_sum",
        "timer_event", "key", "affinity", "spin_on", "spin_yield", "spin_target",
        "parent", "joinsem", "data", "never_ran", "period", "release", "lock_mode",
        "yield_pending", "skip", "job_deadline", "spins_left", "wall_until", "spin_busy",
        "spin_phase", "spin_sleep", "static_prio", "sleep_avg", "sched_stamp", "sleep_type",
        "entity_weight", "group_shares", "rotation", "sched_delayed", "pelt", "recheck_ms",
        "permit",
    )

    def __init__(self, tid, name, prog, group="default", nice=0, affinity=None):
        self.tid: int = tid
        self.name: str = name
        self.group: str = group
        self.prog: list[Any] = prog
        self.pc: int = 0
        self.loops: list[Any] | None = None
        self.remaining: int = -1
        self.state: int = QUEUED
        self.cpu: int | None = None
        self.last_cpu: int | None = None
        self.last_ran: int = 0
        self.exec_start: int = 0
        self.sum_exec: int = 0
        self.prev_sum_exec: int = 0
        self.nice: int = nice
        self.weight: int = nice_to_weight(nice)
        # The weight of the entity the kernel compares at wakeup preemption when it differs from
        # the task's flattened weight: a task in a flattened cgroup is compared through its
        # group's entity (find_matching_se()), whose weight is up to the group's cpu.shares,
        # where the task's own weight is the shares split over the group's tasks.  0: its own.
        self.entity_weight: int = 0
        # The cpu.shares of the task's cgroup when its entity's weight follows the group's load
        # across CPUs (3.x's windowed group shares, policies/cfs_shares.py).  0: no such group.
        self.group_shares: int = 0
        # RSDL (policies/rsdl.py): the runqueue's major rotation the task last ran in (the
        # kernel's p->rotation); a task that wakes in a later one starts afresh
        self.rotation: int = 0
        # EEVDF's DELAY_DEQUEUE (6.12, policies/eevdf.py): blocked, but still queued on its
        # runqueue until picked or woken
        self.sched_delayed: bool = False
        self.vruntime: int = 0
        self.deadline: int = 0
        self.slice_left: int = 0
        self.prio: int = 120 + nice
        self.level: int = 0
        self.quota: int = 0
        self.expired: bool = False
        self.wait_start: int = 0
        self.wait_sum: int = 0
        self.timer_event: Any = None  # an eventq.Event once the task first sleeps on a timer
        self.key: Any = None
        self.affinity: Any = affinity
        self.spin_on: Any = None
        self.spin_yield: bool = False
        self.spin_target: int = 0
        self.parent: Any = None
        self.joinsem: Any = None
        self.data: Any = None
        self.never_ran: bool = True
        self.period: int = 0
        self.release: int = 0
        self.lock_mode: str | None = None
        self.yield_pending: bool = False
        self.skip: bool = False
        self.job_deadline: int = 0
        # sched_yield() calls a bounded yield-spinner may still make
        self.spins_left: int | None = None
        # a yield-spinner's busy wait before each sched_yield() (a JVM's spin loop, ns) and how
        # far into the current busy-wait-then-yield round it is
        self.spin_busy: int = 0
        self.spin_phase: int = 0
        # what a bounded yield-spinner does once its sched_yield() calls are spent: 0, block
        # on the futex; > 0, spin one more busy-wait round and then sleep this long (ns) by a
        # timer, retrying the lock after it (HotSpot's Thread::SpinAcquire(): park(1))
        self.spin_sleep: int = 0
        # a HotSpot monitor's contender once queued on it (interp.py): the timeout of its next
        # timed park in ms (RecheckInterval: 1, then x8 up to 1000; 0: not queued, -1: between
        # enter()'s early spin and EnterI()'s, not queued yet), and its
        # ParkEvent's permit (an unpark() that came while it was not parked)
        self.recheck_ms: int = 0
        self.permit: bool = False
        self.wall_until: int | None = None  # a wall-clock burn's end (the task polls the clock)
        # O(1)'s interactivity estimator (policies/o1.py): prio above is the dynamic priority
        # there, static_prio the nice level's; sleep_avg (ns) is credited while the task sleeps
        # and debited while it runs; sched_stamp is the kernel's p->timestamp (last switch or
        # wakeup); sleep_type how its last wakeup is credited when it first runs
        self.static_prio: int = 120 + nice
        self.sleep_avg: int = 0
        self.sched_stamp: int = 0
        self.sleep_type: int = 0
        # 6.6's PELT averages of the task (pelt.py), once it was first queued with them on:
        # the same object as Pelt.tasks[tid], kept here so that the switch reads it natively
        self.pelt: Signal | None = None

    def __repr__(self):
        return f"<Task {self.tid} {self.name}>"


# The kernel's prio_to_weight table for nice -20..19 (each step ~1.25x).
_WEIGHTS = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
    9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
    1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
    110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
]


def nice_to_weight(nice):
    return _WEIGHTS[max(-20, min(19, nice)) + 20]

"""The interface every scheduler class implements: the engine's questions, one hook each.

The engine owns time and CPUs; a policy owns the runqueue data structure of its family and answers
the engine's questions (who runs next, when does the tick preempt, does this wakeup preempt, does
sched_yield() give the CPU away).  The running task is never in the queue: pick_next removes it and
put_prev puts it back, as in the kernel's put_prev_task/pick_next_task pair.

Version differences inside a family are tunables (see profiles.py), never tests on the kernel name.
"""

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Final

from ..program import Task

if TYPE_CHECKING:  # annotations only (the engine imports the policies)
    from ..engine import Cpu, Engine

MS: Final = 1_000_000
NICE_0: Final = 1024
NICE_0_SHIFT: Final = 10  # NICE_0 == 1 << NICE_0_SHIFT
NO_SLICE_END: Final = -1  # preempt_time()'s "no slice end": its instants are >= start >= 0


def remove_task(tasks: list[Task], task: Task) -> None:
    """``tasks.remove(task)`` by identity: tasks define no __eq__, so it removes the same
    element, without a rich comparison per element before it (hot in O(n) queues)."""
    for i in range(len(tasks)):
        if tasks[i] is task:
            tasks.pop(i)  # not `del tasks[i]`: the compiled build has a native pop(i)
            return
    raise ValueError("task not in list")


def ilog2(n):
    return max(0, int(n).bit_length() - 1)


class RunQueue:
    __slots__ = ("cpu", "nr_running", "curr", "load", "data", "min_vruntime", "seq", "nr_queued",
                 "active", "expired", "extra", "vsum", "wsum", "nr_delayed")

    def __init__(self, cpu):
        self.cpu: int = cpu
        self.nr_running: int = 0
        self.curr: Task | None = None
        self.load: int = 0
        self.data: Any = None
        self.min_vruntime: int = 0
        self.seq: int = 0
        self.nr_queued: int = 0
        self.active: Any = None
        self.expired: Any = None
        self.extra: Any = None
        self.vsum: int = 0  # EEVDF: sum of weight x vruntime of the queued tasks
        self.wsum: int = 0  # EEVDF: sum of their weights
        self.nr_delayed: int = 0  # EEVDF: of nr_queued, the blocked tasks DELAY_DEQUEUE keeps


class Policy(ABC):
    """A scheduler class.  Subclasses implement the abstract hooks and override defaults."""

    family: ClassVar[str] = ""  # the registry key (policies/__init__.py)
    global_queue = False  # one runqueue shared by every CPU (2.4, global EDF)
    hrtick = False  # slices end at exact instants rather than on the next tick
    tick_preempts = True  # False for classes no tick ever preempts (SCHED_DEADLINE)
    # True when account() does nothing but CFS's weighted vruntime advance, which the engine's
    # event loop then does inline (it runs once per event)
    account_is_vruntime = False
    # True when account() only charges the task's slice_left while it stays positive (O(1)):
    # the event loop then does that inline and calls account() only when the slice runs out
    account_is_slice = False
    # SD_BALANCE_WAKE's slow path: False compares sched groups by weighted load (3.3's
    # find_idlest_group()), True by spare capacity and idle CPUs first (6.6's, since v5.5)
    idlest_by_spare_capacity = False
    wake_affine_66 = False  # 6.6's wake_affine(): WA_IDLE, then WA_WEIGHT on PELT loads
    # True when queueing a task first brings the running task's accounting up to date (CFS's
    # and EEVDF's enqueue_entity() call update_curr() before placing the entity, so the
    # placement sees min_vruntime / the average as of now, not as of the last event)
    update_curr_on_enqueue = False
    # True when select_idle_sibling() runs only after an SD_WAKE_AFFINE level was found (3.3's
    # select_task_rq_fair(): otherwise the wakee goes to prev_cpu or the slow path's pick);
    # False for 6.6, whose fast path calls it whenever no balance flag applies
    idle_sibling_needs_affine = False

    def __init__(self, kernel, tun, ncpus):
        self.kernel = kernel
        self.tun = tun
        self.ncpus = ncpus
        self.eng: Engine | None = None  # set by attach()
        self.sched_cost: int = tun["sched_cost_ns"]

    def attach(self, eng: "Engine"):
        """The engine this policy serves (called once, before any runqueue exists)."""
        self.eng = eng

    def new_rq(self, cpu_id):
        """The runqueue of ``cpu_id`` (global classes return their one shared queue)."""
        return RunQueue(cpu_id)

    # ------------------------------------------------------------------ queueing
    @abstractmethod
    def enqueue(self, rq: RunQueue, task: Task, how, now: int):
        """Queue a task that was not on ``rq``; ``how`` is "fork", "wakeup" or "migrate"."""

    @abstractmethod
    def dequeue(self, rq: RunQueue, task: Task, now: int):
        """Take a queued (not running) task off ``rq`` (the balancer migrates it)."""

    @abstractmethod
    def put_prev(self, rq: RunQueue, task: Task, now: int):
        """The running task stops running but stays runnable: put it back in the queue."""

    @abstractmethod
    def pick_next(self, rq: RunQueue, cpu, now: int) -> Task | None:
        """Remove and return the task ``cpu`` runs next, or None to go idle."""

    def on_pick(self, rq: RunQueue, task: Task, now: int):
        """``task`` (returned by pick_next) starts running on ``rq``'s CPU."""
        rq.curr = task
        task.exec_start = now
        task.prev_sum_exec = task.sum_exec

    def curr_leaves(self, rq: RunQueue, task: Task, now: int):
        """The running task blocks or exits: it leaves ``rq`` without being queued."""
        rq.curr = None
        rq.load -= task.weight

    def task_waking(self, rq: RunQueue, task: Task, now: int) -> None:
        """try_to_wake_up()'s sched_class->task_waking(): ``task``, blocked, is about to be
        woken; ``rq`` is the queue it last ran on (before its CPU is chosen).  Nothing by
        default."""
        return None

    def rebalance_tick(self, rq: RunQueue, now: int) -> bool:
        """Work the periodic balancer does on ``rq`` before balancing (3.x's update_shares());
        True when task weights on ``rq`` may have changed."""
        return False

    # ------------------------------------------------------------------ time and preemption
    def account(self, rq: RunQueue, task: Task, elapsed: int, now: int):  # noqa: B027 - no-op by default, on purpose
        """Charge ``elapsed`` ns of CPU time to the running ``task`` (vruntime, slice, quota)."""

    @abstractmethod
    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int:
        """The instant the running task's slice ends (>= start) if others wait, else NO_SLICE_END
        (an int, not None: an ``int | None`` is a boxed object in the compiled build, made at
        every slice re-plan)."""

    @abstractmethod
    def tick_preempt(self, rq: RunQueue, task: Task, now: int) -> bool:
        """At the tick due by preempt_time: does the running task really lose the CPU?"""

    @abstractmethod
    def wakeup_preempts(self, rq: RunQueue, curr: Task, task: Task, now: int) -> bool:
        """Does the woken ``task`` (queued on rq) preempt the running ``curr`` at once?"""

    # ------------------------------------------------------------------ fork and yield
    @abstractmethod
    def task_fork(self, rq: RunQueue, parent: Task, child: Task, now: int, same_cpu):
        """Set up ``child``'s scheduling state from ``parent`` before it is queued on ``rq``."""

    def child_runs_first(self, parent: Task, child: Task):
        """Does the new child (on the parent's CPU) preempt its parent at once?"""
        return False

    def yield_task(self, rq: RunQueue, task: Task, now: int):
        """sched_yield() by the running task: mark it; put_prev applies the semantics."""
        task.yield_pending = True

    @abstractmethod
    def yield_hands_over(self, rq: RunQueue, task: Task, now: int) -> bool:
        """Would a sched_yield() by the running ``task`` switch to another task now?"""

    def yield_handover_delay(self, rq: RunQueue, task: Task, now: int) -> int | None:
        """A yield-spinner that does not hand over now: ns until it would, or None (never)."""
        return None

    # ------------------------------------------------------------------ shared-queue classes
    def preempt_target(self, eng: "Engine", task: Task) -> "Cpu | None":
        """Classes with one queue for every CPU (``global_queue``): the CPU that should switch
        to ``task``, just queued, now -- an idle one, else one whose task it beats -- or None.
        (Declared here so that the engine's call compiles to a direct one.)"""
        return None

    def nr_running_total(self, eng: "Engine") -> int:
        """Classes with one queue for every CPU: the runnable tasks, running ones included."""
        return 0

    # ------------------------------------------------------------------ costs and balancing
    def decision_cost(self, rq: RunQueue) -> int:
        """CPU time one schedule() decision costs on ``rq`` (ns)."""
        return self.sched_cost

    def load_of(self, rq: RunQueue) -> int:
        """The weighted load the balancer sees for ``rq``."""
        return rq.load

    def wake_load(self, rq: RunQueue, now: int, without: Task | None) -> int:
        """The load the wake-up slow path compares (6.6: cpu_load_without(rq, without),
        cpu_load() for None); the balancer's load here."""
        return self.load_of(rq)

    def task_load(self, task: Task, now: int) -> int:
        """task_h_load() as 6.6's wake_affine_weight() reads it; the task's weight here."""
        return task.weight

    def queued_tasks(self, rq: RunQueue):
        """Queued tasks in the order the balancer considers them for migration."""
        return []

    def best_expired_prio(self, rq: RunQueue) -> int:
        """rq->best_expired_prio of the O(1)-style arrays (MAX_PRIO, 140, when none)."""
        return 140

    def hot(self, task: Task, now: int, level):
        """Is ``task`` cache-hot (the balancer should not migrate it) at domain ``level``?"""
        return False

    def hot_cost(self):
        """The cache-hot window (ns) of this class, for tracing."""
        return self.tun.get("cache_hot_time_ns", self.tun.get("sched_migration_cost_ns", 0))

    def task_hot(self, task: Task, now: int, cost_ns):
        if cost_ns <= 0 or task.never_ran:
            return False
        return now - task.last_ran < cost_ns

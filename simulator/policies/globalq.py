"""Schedulers with one runqueue shared by all CPUs: Linux 2.4 (goodness) and global EDF."""

from typing import TYPE_CHECKING, ClassVar

from ..program import Task
from .base import NO_SLICE_END, Policy, RunQueue, remove_task
from .taskheap import NOT_QUEUED, Heap, Node, push, remove

if TYPE_CHECKING:  # annotations only (the engine imports the policies)
    from ..engine import Cpu, Engine

# instructions of one iteration of the benchmarks' unoptimised counting loop (load, add, store,
# compare-and-branch): turns the calibrated loop_ns into a price per instruction
LOOP_INSNS = 4


class SharedRunQueue(RunQueue):
    __slots__ = ()


class GlobalPolicy(Policy):
    global_queue = True
    tick_preempts = True

    def __init__(self, kernel, tun, ncpus):
        super().__init__(kernel, tun, ncpus)
        self.shared = SharedRunQueue(-1)
        self.shared.data = []

    def new_rq(self, cpu_id):
        return self.shared

    def nr_running_total(self, eng: "Engine") -> int:
        return self.shared.nr_running

    def enqueue(self, rq: RunQueue, task: Task, how, now: int):
        rq.load += task.weight
        rq.data.append(task)

    def dequeue(self, rq: RunQueue, task: Task, now: int):
        remove_task(rq.data, task)
        rq.load -= task.weight

    def put_prev(self, rq: RunQueue, task: Task, now: int):
        rq.data.append(task)

    def on_pick(self, rq: RunQueue, task: Task, now: int):
        task.exec_start = now
        task.prev_sum_exec = task.sum_exec

    def curr_leaves(self, rq: RunQueue, task: Task, now: int):
        rq.load -= task.weight


    def task_fork(self, rq: RunQueue, parent: Task, child: Task, now: int, same_cpu):
        pass

    def queued_tasks(self, rq: RunQueue):
        return []

    def hot(self, task: Task, now: int, level):
        return False

    def idle_cpu_for(self, eng: "Engine", task: Task) -> "Cpu | None":
        cpus = eng.cpus
        if task.last_cpu is not None and cpus[task.last_cpu].curr is None:
            return cpus[task.last_cpu]
        for cpu in cpus:
            if cpu.curr is None and not cpu.need_resched:
                return cpu
        return None


def goodness_scan(tasks: list[Task], cpu_id: int, tick: int, penalty: int) -> tuple[Task | None,
                                                                                       int]:
    """schedule()'s loop over the runqueue list: the task of the highest goodness(), the first
    in list order among equals, and that goodness.  goodness() = remaining counter ticks + 1 +
    (20 - nice) + PROC_CHANGE_PENALTY if the task last ran on this CPU; 0 once its counter is
    used; a task that called sched_yield() scores -1 (0 when it is alone)."""
    best: Task | None = None
    best_g = -1
    yielded = -1 if len(tasks) > 1 else 0
    for t in tasks:
        if t.yield_pending:
            g = yielded
        elif t.quota <= 0:  # _goodness(t, cpu_id), inlined: it runs for every queued task
            g = 0
        else:
            last = t.last_cpu
            g = t.quota // tick + 1 + (20 - t.nice) + (
                penalty if last is not None and last == cpu_id else 0)
        if g > best_g:
            best, best_g = t, g
    return best, best_g


class GoodnessPolicy(GlobalPolicy):
    """Linux 2.4: schedule() computes goodness() for every runnable task and takes the best.

    goodness = remaining counter ticks + (20 - nice) + PROC_CHANGE_PENALTY if the task last ran on
    this CPU.  When every runnable task has used its counter, all tasks (sleepers too) get
    counter = counter / 2 + NICE_TO_TICKS.

    Cost of a decision: a + b * nr_running, where a is the fixed schedule() path every family
    pays (sched_cost_ns) and b is a modelled scan step: ``goodness_insns`` instructions priced
    from the calibrated counting loop (loop_ns / LOOP_INSNS each) plus one cache-line miss for
    the task's scheduling fields (``task_line_miss_ns``).

    That O(n) scan is the modelled kernel's cost, charged in simulated time; the simulator finds
    the same pick in O(log n) (``_indexed_pick``): a queued task's goodness is its static part
    (counter ticks + 1 + 20 - nice, which only changes while it runs or at a recalculation)
    plus the same-CPU bonus, so the best is either the task of the highest static part (heap
    ``by_goodness``) or the best of those that last ran on this CPU (heap ``by_cpu[cpu]``),
    with the bonus added; ties go to the earlier in the runqueue list (queue order).  Tasks
    whose counter is used (goodness 0) and sched_yield() callers (-1) stay out of the heaps:
    when no task is left in them, the plain scan decides (a recalculation, or the yielder
    alone).  Reference mode (``Engine.reference``) always scans; tests compare both.
    """

    family: ClassVar[str] = "goodness"

    def __init__(self, kernel, tun, ncpus):
        super().__init__(kernel, tun, ncpus)
        self.tick: int = 1_000_000_000 // tun["HZ"]
        self.refill: int = tun["timeslice_ticks"] * self.tick
        self.penalty: int = tun["proc_change_penalty"]
        insn_ns = tun["loop_ns"] / LOOP_INSNS
        self.per_task: int = round(tun["goodness_insns"] * insn_ns + tun["task_line_miss_ns"])
        # the runqueue list: queued tasks in list order (a dict keeps insertion order and
        # removes in O(1))
        self.shared.data = {}
        self.order: int = 0  # the last queue-order number given
        self.indexed: bool = self.penalty >= 0  # the bonus may only raise a task (see above)
        self.by_goodness: Heap = Heap()
        self.by_cpu: list[Heap] = [Heap() for _ in range(ncpus)]
        self.yielders: list[Task] = []  # queued sched_yield() callers, out of the heaps

    def attach(self, eng: "Engine"):
        super().attach(eng)
        if eng.reference:
            self.indexed = False

    # ------------------------------------------------------------------ the runqueue list
    def _append(self, rq: RunQueue, task: Task) -> None:
        data: dict[Task, None] = rq.data
        data[task] = None
        if not self.indexed:
            return
        node: Node | None = task.key
        if node is None:
            node = task.key = Node(task)
            node.twin = Node(task)
        self.order += 1
        node.order = self.order
        if task.yield_pending:
            self.yielders.append(task)
        else:
            self._index(node)

    def _index(self, node: Node) -> None:
        """Into the heaps, if its goodness is positive (its counter not used)."""
        task = node.task
        quota = task.quota
        if quota <= 0:
            return
        node.key = -(quota // self.tick + 1 + (20 - task.nice))
        push(self.by_goodness, node)
        last = task.last_cpu
        if last is not None:
            twin = node.twin
            assert twin is not None  # made with the node
            twin.key = node.key
            twin.order = node.order
            twin.home = last
            push(self.by_cpu[last], twin)

    def _unindex(self, node: Node) -> None:
        if node.pos != NOT_QUEUED:
            remove(self.by_goodness, node)
        twin = node.twin
        if twin is not None and twin.pos != NOT_QUEUED:
            remove(self.by_cpu[twin.home], twin)

    def _take(self, rq: RunQueue, task: Task) -> None:
        data: dict[Task, None] = rq.data
        del data[task]
        if self.indexed:
            node: Node = task.key
            if task.yield_pending:
                remove_task(self.yielders, task)
            else:
                self._unindex(node)

    def _reindex(self, rq: RunQueue) -> None:
        """Every counter changed (a recalculation): rebuild the heaps."""
        self.by_goodness.clear()
        for heap in self.by_cpu:
            heap.clear()
        for task in rq.data:
            node: Node = task.key
            node.pos = NOT_QUEUED
            twin = node.twin
            assert twin is not None  # made with the node
            twin.pos = NOT_QUEUED
            if not task.yield_pending:
                self._index(node)

    def enqueue(self, rq: RunQueue, task: Task, how, now: int):
        if task.quota == 0 and how == "fork":  # the int test first: `how` is compared generically
            task.quota = self.refill
        rq.load += task.weight
        self._append(rq, task)

    def dequeue(self, rq: RunQueue, task: Task, now: int):
        self._take(rq, task)
        rq.load -= task.weight

    def put_prev(self, rq: RunQueue, task: Task, now: int):
        self._append(rq, task)

    # ------------------------------------------------------------------ the pick
    def _goodness(self, task: Task, cpu_id: int) -> int:
        if task.quota <= 0:
            return 0
        last = task.last_cpu
        bonus = self.penalty if last is not None and last == cpu_id else 0
        return task.quota // self.tick + 1 + (20 - task.nice) + bonus

    def _recalculate(self):
        assert self.eng is not None  # attached before any task is queued
        for t in self.eng.tasks.values():
            t.quota = t.quota // 2 + self.refill

    def _indexed_pick(self, cpu_id: int) -> Task:
        """The scan's pick from the heaps (not empty): the best static part, with the bonus
        if it last ran here, against the best static part + bonus among this CPU's tasks."""
        best = self.by_goodness.nodes[0]
        best_g = -best.key
        last = best.task.last_cpu
        if last is not None and last == cpu_id:  # an int test, not a generic == on int | None
            best_g += self.penalty
        mine = self.by_cpu[cpu_id]
        if mine.size:
            local = mine.nodes[0]
            local_g = self.penalty - local.key
            if local_g > best_g or (local_g == best_g and local.order < best.order):
                best = local
        return best.task

    def pick_next(self, rq: RunQueue, cpu: "Cpu", now: int) -> Task | None:
        data: dict[Task, None] = rq.data
        if not data:
            return None
        cpu_id = cpu.id  # typed Cpu: a native field read, not an attribute lookup by name
        if self.by_goodness.size:
            best = self._indexed_pick(cpu_id)
        else:
            found, best_g = goodness_scan(list(data), cpu_id, self.tick, self.penalty)
            if best_g == 0:
                self._recalculate()
                if self.indexed:
                    self._reindex(rq)
                return self.pick_next(rq, cpu, now)
            assert found is not None  # data is not empty and every goodness is > best_g's -1
            best = found
        self._take(rq, best)
        self._clear_yields(rq)
        best.yield_pending = False
        return best

    def _clear_yields(self, rq: RunQueue) -> None:
        """After a pick no queued task counts as having yielded any more."""
        if not self.indexed:
            for t in rq.data:
                t.yield_pending = False
            return
        for t in self.yielders:
            t.yield_pending = False
            self._index(t.key)
        self.yielders.clear()

    def account(self, rq: RunQueue, task: Task, elapsed: int, now: int):
        task.quota -= elapsed
        if task.quota <= 0 and not rq.data:
            task.quota = self.refill

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int:
        if not rq.data:
            return NO_SLICE_END
        quota = task.quota  # max(0, quota) spelt out: native in the compiled build
        return start + (quota if quota > 0 else 0)

    def tick_preempt(self, rq: RunQueue, task: Task, now: int) -> bool:
        return task.quota <= 0

    def wakeup_preempts(self, rq: RunQueue, curr: Task, task: Task, now: int) -> bool:
        return False

    def preempt_target(self, eng: "Engine", task: Task) -> "Cpu | None":
        """reschedule_idle(): an idle CPU, else the CPU whose task has the worst goodness."""
        idle = self.idle_cpu_for(eng, task)
        if idle is not None:
            return idle
        worst: Cpu | None = None
        worst_gap = 0
        # _goodness(task, cpu) for every CPU: its static part once, the bonus where it ran
        mine = self._goodness(task, -1)
        bonus = self.penalty if task.quota > 0 else 0
        last: int = -1 if task.last_cpu is None else task.last_cpu
        tick = self.tick
        penalty = self.penalty
        for cpu in eng.cpus:
            curr = cpu.curr
            if curr is None or cpu.need_resched:
                continue
            cpu_id = cpu.id
            theirs = 0  # _goodness(curr, cpu_id), inlined: it runs for every CPU at every wakeup
            quota = curr.quota
            if quota > 0:
                ran = curr.last_cpu
                theirs = quota // tick + 1 + (20 - curr.nice) + (
                    penalty if ran is not None and ran == cpu_id else 0)
            gap = mine + (bonus if last == cpu_id else 0) - theirs
            if gap > worst_gap:
                worst, worst_gap = cpu, gap
        return worst

    def yield_hands_over(self, rq: RunQueue, task: Task, now: int) -> bool:
        return bool(rq.data)

    def decision_cost(self, rq: RunQueue) -> int:
        return self.sched_cost + self.per_task * rq.nr_running


class EdfPolicy(GlobalPolicy):
    """SCHED_DEADLINE as global EDF: the m earliest absolute deadlines run on the m CPUs."""

    family: ClassVar[str] = "edf"

    hrtick = True
    tick_preempts = False

    def pick_next(self, rq: RunQueue, cpu, now: int) -> Task | None:
        data: list[Task] = rq.data
        if not data:
            return None
        best = data[0]
        for t in data:
            if t.deadline < best.deadline or (t.deadline == best.deadline and t.tid < best.tid):
                best = t
        remove_task(data, best)
        return best

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int:
        return NO_SLICE_END

    def tick_preempt(self, rq: RunQueue, task: Task, now: int) -> bool:
        return False

    def wakeup_preempts(self, rq: RunQueue, curr: Task, task: Task, now: int) -> bool:
        return False

    def preempt_target(self, eng: "Engine", task: Task) -> "Cpu | None":
        cpus = eng.cpus
        last = task.last_cpu  # idle_cpu_for(), inlined
        if last is not None and cpus[last].curr is None:
            return cpus[last]
        for cpu in cpus:
            if cpu.curr is None and not cpu.need_resched:
                return cpu
        latest: Cpu | None = None
        latest_deadline, latest_tid = task.deadline, task.tid  # (deadline, tid) ordered
        for cpu in eng.cpus:
            curr = cpu.curr
            if curr is None or cpu.need_resched:
                continue
            if curr.deadline > latest_deadline or (curr.deadline == latest_deadline
                                                   and curr.tid > latest_tid):
                latest, latest_deadline, latest_tid = cpu, curr.deadline, curr.tid
        return latest

    def yield_hands_over(self, rq: RunQueue, task: Task, now: int) -> bool:
        return bool(rq.data)

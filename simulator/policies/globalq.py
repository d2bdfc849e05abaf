"""Schedulers with one runqueue shared by all CPUs: Linux 2.4 (goodness) and global EDF."""

from typing import TYPE_CHECKING, ClassVar

from ..program import Task
from .base import Policy, RunQueue, remove_task

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


class GoodnessPolicy(GlobalPolicy):
    """Linux 2.4: schedule() computes goodness() for every runnable task and takes the best.

    goodness = remaining counter ticks + (20 - nice) + PROC_CHANGE_PENALTY if the task last ran on
    this CPU.  When every runnable task has used its counter, all tasks (sleepers too) get
    counter = counter / 2 + NICE_TO_TICKS.

    Cost of a decision: a + b * nr_running, where a is the fixed schedule() path every family
    pays (sched_cost_ns) and b is a modelled scan step: ``goodness_insns`` instructions priced
    from the calibrated counting loop (loop_ns / LOOP_INSNS each) plus one cache-line miss for
    the task's scheduling fields (``task_line_miss_ns``).
    """

    family: ClassVar[str] = "goodness"

    def __init__(self, kernel, tun, ncpus):
        super().__init__(kernel, tun, ncpus)
        self.tick: int = 1_000_000_000 // tun["HZ"]
        self.refill: int = tun["timeslice_ticks"] * self.tick
        self.penalty: int = tun["proc_change_penalty"]
        insn_ns = tun["loop_ns"] / LOOP_INSNS
        self.per_task: int = round(tun["goodness_insns"] * insn_ns + tun["task_line_miss_ns"])

    def enqueue(self, rq: RunQueue, task: Task, how, now: int):
        if how == "fork" and task.quota == 0:
            task.quota = self.refill
        super().enqueue(rq, task, how, now)

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

    def pick_next(self, rq: RunQueue, cpu, now: int) -> Task | None:
        data: list[Task] = rq.data
        if not data:
            return None
        best: Task | None = None
        best_g = -1
        cpu_id: int = cpu.id
        tick = self.tick
        penalty = self.penalty
        yielded = -1 if len(data) > 1 else 0
        for t in data:
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
        if best_g == 0:
            self._recalculate()
            return self.pick_next(rq, cpu, now)
        assert best is not None  # data is not empty and every goodness is > best_g's -1
        remove_task(data, best)
        for t in data:
            t.yield_pending = False
        best.yield_pending = False
        return best

    def account(self, rq: RunQueue, task: Task, elapsed: int, now: int):
        task.quota -= elapsed
        if task.quota <= 0 and not rq.data:
            task.quota = self.refill

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int | None:
        return start + max(0, task.quota) if rq.data else None

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
        for cpu in eng.cpus:
            curr = cpu.curr
            if curr is None or cpu.need_resched:
                continue
            gap = self._goodness(task, cpu.id) - self._goodness(curr, cpu.id)
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

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int | None:
        return None

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

"""EEVDF (6.6): earliest eligible virtual deadline first."""

from typing import ClassVar

from ..program import Task
from .base import NICE_0, NICE_0_SHIFT, Policy, RunQueue, ilog2, remove_task


def _weighted(task: Task) -> int:
    """vruntime x weight, as a shift for nice 0: the compiled build multiplies inline only
    ints below 2**30, and vruntimes pass that (1.07 s) early in a run, where the shift's
    limit is 2**52."""
    weight = task.weight
    return task.vruntime << NICE_0_SHIFT if weight == NICE_0 else task.vruntime * weight


class EevdfPolicy(Policy):
    """EEVDF (6.6): pick the eligible task (vruntime <= weighted average) with the earliest
    virtual deadline; a task's deadline is its vruntime plus one base slice of virtual time."""

    family: ClassVar[str] = "eevdf"

    def __init__(self, kernel, tun, ncpus):
        super().__init__(kernel, tun, ncpus)
        self.slice: int = tun["base_slice_ns"] * (1 + ilog2(min(ncpus, 8)))
        self.log_cost: int = tun["sched_cost_log_ns"]

    def new_rq(self, cpu_id):
        rq = RunQueue(cpu_id)
        rq.data = []
        # the queued tasks' sum of weight x vruntime (rq.vsum) and sum of weights (rq.wsum),
        # kept as tasks come and go (the kernel's avg_vruntime/avg_load), so the average needs
        # no rescan of the queue
        return rq

    def _add(self, rq: RunQueue, task: Task) -> None:
        data: list[Task] = rq.data
        data.append(task)
        rq.vsum += _weighted(task)
        rq.wsum += task.weight

    def _take(self, rq: RunQueue, task: Task) -> None:
        remove_task(rq.data, task)
        rq.vsum -= _weighted(task)
        rq.wsum -= task.weight

    def _vslice(self, task: Task) -> int:
        return self.slice * NICE_0 // task.weight

    def _avg(self, rq: RunQueue) -> int:
        """The weighted average vruntime of the queued tasks and the running one."""
        total = rq.vsum
        weight = rq.wsum
        curr = rq.curr
        if curr is not None:
            total += _weighted(curr)
            weight += curr.weight
        return total // weight if weight else rq.min_vruntime

    def enqueue(self, rq: RunQueue, task: Task, how, now: int):
        if how == "fork":
            if task.deadline == 0:
                task.vruntime = self._avg(rq)
                task.deadline = task.vruntime + self._vslice(task) // 2
        else:  # wakeup/migrate: keep the lag (stored relative on leaving)
            lag = task.vruntime
            task.vruntime = self._avg(rq) + lag
            task.deadline = task.vruntime + self._vslice(task)
        rq.load += task.weight
        self._add(rq, task)

    def _store_lag(self, rq: RunQueue, task: Task):
        limit = self._vslice(task)
        task.vruntime = max(-limit, min(limit, task.vruntime - self._avg(rq)))

    def dequeue(self, rq: RunQueue, task: Task, now: int):
        self._take(rq, task)
        rq.load -= task.weight
        self._store_lag(rq, task)

    def curr_leaves(self, rq: RunQueue, task: Task, now: int):
        self._store_lag(rq, task)
        super().curr_leaves(rq, task, now)

    def put_prev(self, rq: RunQueue, task: Task, now: int):
        if task.yield_pending:
            task.yield_pending = False
            task.vruntime = task.deadline
            task.deadline = task.vruntime + self._vslice(task)
        rq.curr = None
        self._add(rq, task)

    def pick_next(self, rq: RunQueue, cpu, now: int) -> Task | None:
        data: list[Task] = rq.data
        if not data:
            return None
        avg = self._avg(rq)
        best: Task | None = None
        for t in data:
            if t.vruntime <= avg and (best is None or t.deadline < best.deadline):
                best = t
        if best is None:
            best = min(data, key=lambda t: t.vruntime)
        self._take(rq, best)
        rq.min_vruntime = avg
        return best

    def account(self, rq: RunQueue, task: Task, elapsed: int, now: int):
        task.vruntime += elapsed * NICE_0 // task.weight
        if task.vruntime >= task.deadline and not rq.data:
            task.deadline = task.vruntime + self._vslice(task)

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int | None:
        if not rq.data:
            return None
        return start + max(0, (task.deadline - task.vruntime) * task.weight // NICE_0)

    def tick_preempt(self, rq: RunQueue, task: Task, now: int) -> bool:
        if task.vruntime < task.deadline:
            return False
        task.deadline = task.vruntime + self._vslice(task)
        return True

    def wakeup_preempts(self, rq: RunQueue, curr: Task, task: Task, now: int) -> bool:
        return task.vruntime <= self._avg(rq) and task.deadline < curr.deadline

    def task_fork(self, rq: RunQueue, parent: Task, child: Task, now: int, same_cpu):
        child.deadline = 0


    def yield_hands_over(self, rq: RunQueue, task: Task, now: int) -> bool:
        return bool(rq.data)

    def decision_cost(self, rq: RunQueue) -> int:
        nr = rq.nr_running  # ilog2(max(1, nr)), inlined: this runs at every decision
        return self.sched_cost + self.log_cost * (nr.bit_length() - 1 if nr > 1 else 0)

    def queued_tasks(self, rq: RunQueue):
        return list(reversed(rq.data))

    def hot(self, task: Task, now: int, level):
        return self.task_hot(task, now, self.tun["sched_migration_cost_ns"])

"""EEVDF (6.6): earliest eligible virtual deadline first."""

import heapq
from typing import ClassVar

from ..program import Task
from .base import NICE_0, NICE_0_SHIFT, Policy, RunQueue, ilog2

# a queued task's entry in one of the two heaps: (deadline or vruntime, queue order, task)
Entry = tuple[int, int, Task]


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
    idlest_by_spare_capacity = True  # find_idlest_group() as reworked in v5.5 (balance.py)

    def __init__(self, kernel, tun, ncpus):
        super().__init__(kernel, tun, ncpus)
        self.slice: int = tun["base_slice_ns"] * (1 + ilog2(min(ncpus, 8)))
        self.log_cost: int = tun["sched_cost_log_ns"]
        self.order: int = 0  # the last order number given to a queued task's entry

    def new_rq(self, cpu_id):
        rq = RunQueue(cpu_id)
        # The pick in O(log n), as 6.6's augmented rbtree gives it, with two heaps: rq.data holds
        # (deadline, order, task) for tasks last seen eligible, rq.extra (vruntime, order, task)
        # for the others.  A queued task's vruntime and deadline do not change, so only the
        # average moves eligibility: the pick first moves the tasks the average has passed into
        # rq.data, then drops from its top those it has fallen below.  A task leaving the queue
        # is forgotten lazily: task.key holds the order number of its live entry (None once it
        # left), so an older entry of the same task no longer matches.  rq.nr_queued counts the
        # queued tasks; rq.vsum and rq.wsum are the kernel's avg_vruntime/avg_load sums (weight
        # x vruntime, weights), kept as tasks come and go so the average needs no rescan.
        rq.data = []
        rq.extra = []
        return rq

    def _add(self, rq: RunQueue, task: Task) -> None:
        # one order number across every runqueue: a stale entry left on a runqueue the task
        # migrated from can never match the number of its entry on the new one
        self.order += 1
        order = self.order
        entry: Entry = (task.vruntime, order, task)
        task.key = order
        heapq.heappush(rq.extra, entry)  # the next pick sorts out whether it is eligible
        rq.nr_queued += 1
        rq.vsum += _weighted(task)
        rq.wsum += task.weight

    def _take(self, rq: RunQueue, task: Task) -> None:
        task.key = None
        rq.nr_queued -= 1
        rq.vsum -= _weighted(task)
        rq.wsum -= task.weight
        data: list[Entry] = rq.data
        extra: list[Entry] = rq.extra
        if len(data) + len(extra) > 2 * rq.nr_queued + 32:  # mostly forgotten entries
            rq.data = [e for e in data if e[2].key == e[1]]
            heapq.heapify(rq.data)
            rq.extra = [e for e in extra if e[2].key == e[1]]
            heapq.heapify(rq.extra)

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
        """The eligible task (vruntime <= average) with the earliest deadline, the earliest
        queued first among equals; with none eligible, the least vruntime."""
        if rq.nr_queued == 0:
            return None
        avg = self._avg(rq)
        eligible: list[Entry] = rq.data
        waiting: list[Entry] = rq.extra
        while waiting and (waiting[0][2].key != waiting[0][1] or waiting[0][0] <= avg):
            entry = heapq.heappop(waiting)
            task = entry[2]
            if task.key == entry[1]:  # the average passed its vruntime: order it by deadline
                heapq.heappush(eligible, (task.deadline, entry[1], task))
        best: Task | None = None
        while eligible:
            entry = heapq.heappop(eligible)
            task = entry[2]
            if task.key != entry[1]:
                continue  # it left the queue
            if task.vruntime <= avg:
                best = task
                break
            heapq.heappush(waiting, (task.vruntime, entry[1], task))  # the average fell below it
        if best is None:
            while waiting[0][2].key != waiting[0][1]:
                heapq.heappop(waiting)
            best = heapq.heappop(waiting)[2]
        best.key = None
        rq.nr_queued -= 1
        rq.vsum -= _weighted(best)
        rq.wsum -= best.weight
        rq.min_vruntime = avg
        return best

    def account(self, rq: RunQueue, task: Task, elapsed: int, now: int):
        task.vruntime += elapsed * NICE_0 // task.weight
        if task.vruntime >= task.deadline and rq.nr_queued == 0:
            task.deadline = task.vruntime + self._vslice(task)

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int | None:
        if rq.nr_queued == 0:
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
        return rq.nr_queued > 0

    def decision_cost(self, rq: RunQueue) -> int:
        nr = rq.nr_running  # ilog2(max(1, nr)), inlined: this runs at every decision
        return self.sched_cost + self.log_cost * (nr.bit_length() - 1 if nr > 1 else 0)

    def queued_tasks(self, rq: RunQueue):
        """The queued tasks, the most recently queued first (an O(n) walk, as the balancer's
        own is)."""
        data: list[Entry] = rq.data
        extra: list[Entry] = rq.extra
        live = [e for e in data if e[2].key == e[1]] + [e for e in extra if e[2].key == e[1]]
        live.sort(key=lambda e: -e[1])
        return [e[2] for e in live]

    def hot(self, task: Task, now: int, level):
        return self.task_hot(task, now, self.tun["sched_migration_cost_ns"])

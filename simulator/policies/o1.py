"""The O(1) scheduler (2.6.0 - 2.6.22): priority arrays, per-task timeslices."""

from collections import deque
from typing import ClassVar

from ..program import Task
from .base import MS, Policy, RunQueue


def o1_timeslice(prio, base_ms):
    base = base_ms * MS
    scaled = (base * 4 if prio < 120 else base) * (140 - prio) // 20
    return max(5 * MS, scaled)


def _remove_from(q: deque, task: Task) -> None:
    """``q.remove(task)`` by identity, from the end the balancer takes from: it migrates the
    tail of a list first (queued_tasks()), where deque.remove() scanned from the head with a
    rich comparison per task (O(n) for every task migrated off a long list)."""
    if q[-1] is task:
        q.pop()
        return
    for i in range(len(q) - 2, -1, -1):
        if q[i] is task:
            del q[i]
            return
    raise ValueError("task not in its priority list")


class O1Policy(Policy):
    """2.6.22 O(1): priority arrays, per-task timeslices, arrays swap when active runs dry."""

    family: ClassVar[str] = "o1"

    account_is_slice = True

    def new_rq(self, cpu_id):
        rq = RunQueue(cpu_id)
        rq.active = {}
        rq.expired = {}
        return rq

    def _queue(self, arr, task: Task, front=False):
        q = arr.get(task.prio)
        if q is None:
            q = arr[task.prio] = deque()
        if front:
            q.appendleft(task)
        else:
            q.append(task)

    def enqueue(self, rq: RunQueue, task: Task, how, now: int):
        if task.slice_left <= 0:
            task.slice_left = o1_timeslice(task.prio, self.tun["timeslice_ms"])
        rq.load += task.weight
        rq.nr_queued += 1
        self._queue(rq.expired if task.expired else rq.active, task)

    def dequeue(self, rq: RunQueue, task: Task, now: int):
        arr = rq.expired if task.expired else rq.active
        q = arr[task.prio]
        _remove_from(q, task)
        if not q:
            del arr[task.prio]
        rq.load -= task.weight
        rq.nr_queued -= 1
        task.expired = False

    def put_prev(self, rq: RunQueue, task: Task, now: int):
        rq.curr = None
        rq.nr_queued += 1
        if task.yield_pending:
            task.yield_pending = False
            task.expired = True  # hard yield: to the expired array, slice kept
            self._queue(rq.expired, task)
        elif task.slice_left <= 0:
            task.slice_left = o1_timeslice(task.prio, self.tun["timeslice_ms"])
            task.expired = True
            self._queue(rq.expired, task)
        else:  # preempted by a better task: stays at the head of its list
            self._queue(rq.active, task, front=True)

    def pick_next(self, rq: RunQueue, cpu, now: int) -> Task | None:
        if not rq.active:
            if not rq.expired:
                return None
            rq.active, rq.expired = rq.expired, rq.active
            for q in rq.active.values():
                for t in q:
                    t.expired = False
        prio = min(rq.active)
        q = rq.active[prio]
        task = q.popleft()
        if not q:
            del rq.active[prio]
        rq.nr_queued -= 1
        return task

    def account(self, rq: RunQueue, task: Task, elapsed: int, now: int):
        task.slice_left -= elapsed  # Engine.run() does this itself while the slice lasts
        if task.slice_left <= 0 and rq.nr_queued == 0:
            # alone on the CPU: expiry would requeue it and pick it again; refill lazily
            ts = o1_timeslice(task.prio, self.tun["timeslice_ms"])
            task.slice_left += ts * (1 + (-task.slice_left) // ts)

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int | None:
        return start + max(0, task.slice_left) if rq.nr_queued else None

    def tick_preempt(self, rq: RunQueue, task: Task, now: int) -> bool:
        return task.slice_left <= 0

    def wakeup_preempts(self, rq: RunQueue, curr: Task, task: Task, now: int) -> bool:
        return task.prio < curr.prio

    def task_fork(self, rq: RunQueue, parent: Task, child: Task, now: int, same_cpu):
        half = max(1, parent.slice_left) // 2
        child.slice_left = max(1, half)
        parent.slice_left = max(1, parent.slice_left - half)
        child.prio = parent.prio

    def child_runs_first(self, parent: Task, child: Task):
        return False  # only for fork() without CLONE_VM; every forking workload makes threads


    def yield_hands_over(self, rq: RunQueue, task: Task, now: int) -> bool:
        return rq.nr_queued > 0

    def queued_tasks(self, rq: RunQueue):
        # the balancer prefers the expired array first (cache-cold), tail first
        tasks = []
        for arr in (rq.expired, rq.active):
            for prio in sorted(arr):
                tasks.extend(reversed(arr[prio]))
        return tasks

    def hot(self, task: Task, now: int, level):
        return self.task_hot(task, now, self.tun["cache_hot_time_ns"])

"""CFS (2.6.23 - 3.x): a vruntime-ordered queue, slices from the latency target."""

import bisect
from typing import ClassVar

from ..program import Task
from .base import NICE_0, Policy, RunQueue, ilog2


class CfsPolicy(Policy):
    """CFS (2.6.23 - 3.x): a vruntime-ordered queue, slices from the latency target."""

    family: ClassVar[str] = "cfs"

    account_is_vruntime = True

    def __init__(self, kernel, tun, ncpus):
        super().__init__(kernel, tun, ncpus)
        cap = tun["latency_cap_cpus"]
        factor = 1 + ilog2(min(ncpus, cap) if cap else ncpus)
        self.latency: int = tun["sched_latency_ns"] * factor
        self.min_gran: int = tun["sched_min_granularity_ns"] * factor
        self.wakeup_gran: int = tun["sched_wakeup_granularity_ns"] * factor
        self.nr_latency: int = max(1, tun["sched_latency_ns"]
                                   // max(1, tun["sched_min_granularity_ns"]))
        self.yield_mode: str = "compat" if tun.get("sched_compat_yield") else tun["yield_semantics"]
        self.migration_cost: int = tun["sched_migration_cost_ns"]
        self.log_cost: int = tun["sched_cost_log_ns"]
        # GENTLE_FAIR_SLEEPERS (2.6.32 on) halves the vruntime credit a waking sleeper gets
        gentle = tun["gentle_fair_sleepers"]
        self.sleeper_credit: int = self.latency // 2 if gentle else self.latency

    def new_rq(self, cpu_id):
        rq = RunQueue(cpu_id)
        rq.data = []  # sorted (vruntime, seq, task)
        return rq

    def _insert(self, rq: RunQueue, task: Task) -> None:
        rq.seq += 1
        key = (task.vruntime, rq.seq, task)
        task.key = key
        bisect.insort(rq.data, key)

    def _remove(self, rq: RunQueue, task: Task) -> None:
        data: list[tuple[int, int, Task]] = rq.data
        key: tuple[int, int, Task] = task.key
        del data[bisect.bisect_left(data, (key[0], key[1]))]

    def _update_min(self, rq: RunQueue) -> None:
        """min_vruntime = max(itself, min(running task's vruntime, leftmost queued))."""
        curr = rq.curr
        data: list[tuple[int, int, Task]] = rq.data
        if data:
            v = data[0][0]
            if curr is not None and curr.vruntime < v:
                v = curr.vruntime
        elif curr is not None:
            v = curr.vruntime
        else:
            return
        if v > rq.min_vruntime:
            rq.min_vruntime = v

    def enqueue(self, rq: RunQueue, task: Task, how, now: int):
        self._update_min(rq)
        if how == "fork":
            pass  # placed by task_fork
        elif how == "migrate":
            task.vruntime += rq.min_vruntime
        else:  # wakeup: vruntime was stored relative to the old queue when it slept
            task.vruntime = max(task.vruntime + rq.min_vruntime,
                                rq.min_vruntime - self.sleeper_credit)
        rq.load += task.weight
        self._insert(rq, task)

    def dequeue(self, rq: RunQueue, task: Task, now: int):
        self._update_min(rq)
        self._remove(rq, task)
        rq.load -= task.weight
        task.vruntime -= rq.min_vruntime

    def curr_leaves(self, rq: RunQueue, task: Task, now: int):
        self._update_min(rq)
        super().curr_leaves(rq, task, now)
        task.vruntime -= rq.min_vruntime

    def put_prev(self, rq: RunQueue, task: Task, now: int):
        self._update_min(rq)
        rq.curr = None
        if task.yield_pending:
            task.yield_pending = False
            data: list[tuple[int, int, Task]] = rq.data
            if self.yield_mode == "compat" and data and data[-1][0] >= task.vruntime:
                task.vruntime = data[-1][0] + 1  # right of the rightmost task
            elif self.yield_mode == "skip":
                task.skip = True
        self._insert(rq, task)

    def pick_next(self, rq: RunQueue, cpu, now: int) -> Task | None:
        data: list[tuple[int, int, Task]] = rq.data
        if not data:
            return None
        idx = 0
        if data[0][2].skip:
            data[0][2].skip = False
            if len(data) > 1:
                idx = 1
        task = data.pop(idx)[2]
        self._update_min(rq)
        return task

    def account(self, rq: RunQueue, task: Task, elapsed: int, now: int):
        # min_vruntime is brought up to date lazily where it is used: between those points only
        # the running task's vruntime grows, so the lazy value equals the eager one.  Engine.run
        # has a copy of this line (account_is_vruntime).
        task.vruntime += elapsed * NICE_0 // task.weight if task.weight != NICE_0 else elapsed

    def ideal_slice(self, rq: RunQueue, task: Task) -> int:
        nr = rq.nr_running
        period = self.latency if nr <= self.nr_latency else self.min_gran * nr
        return period * task.weight // max(rq.load, task.weight)

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int | None:
        if not rq.data:
            return None
        # ideal_slice(), inlined (this runs at every re-plan of a busy CPU)
        nr = rq.nr_running
        period = self.latency if nr <= self.nr_latency else self.min_gran * nr
        weight = task.weight
        load = rq.load
        left = period * weight // (load if load > weight else weight) - (
            task.sum_exec - task.prev_sum_exec)
        return start + left if left > 0 else start

    def tick_preempt(self, rq: RunQueue, task: Task, now: int) -> bool:
        return bool(rq.data) and task.sum_exec - task.prev_sum_exec >= self.ideal_slice(rq, task)

    def wakeup_preempts(self, rq: RunQueue, curr: Task, task: Task, now: int) -> bool:
        return curr.vruntime - task.vruntime > self.wakeup_gran

    def task_fork(self, rq: RunQueue, parent: Task, child: Task, now: int, same_cpu):
        self._update_min(rq)
        vslice = self.ideal_slice(rq, child)
        base = parent.vruntime if same_cpu else rq.min_vruntime
        child.vruntime = max(base, rq.min_vruntime + vslice)  # START_DEBIT
        if same_cpu and self.child_runs_first(parent, child) and parent.vruntime < child.vruntime:
            parent.vruntime, child.vruntime = child.vruntime, parent.vruntime

    def child_runs_first(self, parent: Task, child: Task):
        if not self.tun["sched_child_runs_first"]:
            return False
        return self.tun["child_runs_first_threads"]


    def yield_hands_over(self, rq: RunQueue, task: Task, now: int) -> bool:
        """After sched_yield() schedule() runs and picks the leftmost task.  compat_yield=1 first
        moves the yielder right of the rightmost task (unless it is already rightmost); the
        "requeue" code of 2.6.23/2.6.24 only brings its vruntime up to date, so put_prev puts it
        back at its own key, right of equal keys: it hands over only when a queued task's
        vruntime is at most its own (nearly a no-op right after it was picked)."""
        data: list[tuple[int, int, Task]] = rq.data
        if not data:
            return False
        if self.yield_mode in ("compat", "skip"):
            return True
        return data[0][0] <= task.vruntime

    def yield_handover_delay(self, rq: RunQueue, task: Task, now: int) -> int | None:
        """Spinning on sched_yield() with requeue semantics: the yield that hands over comes
        when the spinner's vruntime has caught up with the leftmost queued task."""
        data: list[tuple[int, int, Task]] = rq.data
        if self.yield_mode != "requeue" or not data:
            return None
        gap = data[0][0] - task.vruntime
        return max(1, -(-gap * task.weight // NICE_0))

    def decision_cost(self, rq: RunQueue) -> int:
        nr = rq.nr_running  # ilog2(max(1, nr)), inlined: this runs at every decision
        return self.sched_cost + self.log_cost * (nr.bit_length() - 1 if nr > 1 else 0)

    def queued_tasks(self, rq: RunQueue):
        return [k[2] for k in reversed(rq.data)]

    def hot(self, task: Task, now: int, level):
        return self.task_hot(task, now, self.migration_cost)

    def hot_cost(self):
        return self.migration_cost

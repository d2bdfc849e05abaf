"""The O(1) scheduler (2.6.0 - 2.6.22): priority arrays, per-task timeslices, and the
interactivity estimator (sleep_avg) that sets each task's dynamic priority.

The estimator follows 2.6.22's kernel/sched.c: a task's sleep_avg (ns, at most NS_MAX_SLEEP_AVG)
is credited with the time it slept when it wakes (recalc_task_prio()) and, after a wakeup from
process context, with 30 % of its runqueue wait when it first runs (schedule()); it is debited
with the time it ran, divided by its current bonus, at every schedule() that switches it out.
Its dynamic priority is static_prio - (CURRENT_BONUS - MAX_BONUS / 2), a -5..+5 range; a woken
task preempts the running one when its dynamic priority is better (TASK_PREEMPTS_CURR), and a
task whose slice expires goes back to the active array when TASK_INTERACTIVE and the expired
tasks are not starving (EXPIRED_STARVING), to the expired array otherwise.
"""

from collections import deque
from typing import ClassVar, Final

from ..program import Task
from .base import MS, NO_SLICE_END, Policy, RunQueue

# 2.6.22 kernel/sched.c and include/linux/sched.h
MAX_RT_PRIO: Final = 100
MAX_PRIO: Final = 140
MAX_USER_PRIO: Final = 40
PRIO_BONUS_RATIO: Final = 25
MAX_BONUS: Final = MAX_USER_PRIO * PRIO_BONUS_RATIO // 100  # 10
INTERACTIVE_DELTA: Final = 2
ON_RUNQUEUE_WEIGHT: Final = 30
CHILD_PENALTY: Final = 95
PARENT_PENALTY: Final = 100

# Task.sleep_type: the kernel's enum sleep_type (SLEEP_INTERRUPTED, a wakeup from interrupt
# context, is not modelled: every wakeup in the model comes from a task)...
SLEEP_NORMAL: Final = 0
SLEEP_NONINTERACTIVE: Final = 1
SLEEP_INTERACTIVE: Final = 2
# ... and two marks of the model's own: a new thread queued on its parent's CPU, which
# wake_up_new_task() never checks for preemption; a running task whose first-run credit moved it
# to the tail of another priority list, where it stays if it is preempted
NEW_ON_PARENT_CPU: Final = 3
RUNNING_AT_TAIL: Final = 4


def o1_timeslice(prio, base_ms):
    base = base_ms * MS
    scaled = (base * 4 if prio < 120 else base) * (140 - prio) // 20
    return max(5 * MS, scaled)


class Starvation:
    """EXPIRED_STARVING's state of one runqueue: when a task first expired since the last array
    switch (rq->expired_timestamp, -1 for none) and the best static priority that expired."""

    __slots__ = ("expired_since", "best_expired_prio")

    def __init__(self):
        self.expired_since: int = -1
        self.best_expired_prio: int = MAX_PRIO


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
    """2.6.22 O(1): priority arrays, per-task timeslices, arrays swap when active runs dry;
    dynamic priorities from sleep_avg unless the `interactivity` tunable is off."""

    family: ClassVar[str] = "o1"

    account_is_slice = True

    def __init__(self, kernel, tun, ncpus):
        super().__init__(kernel, tun, ncpus)
        self.estimator: bool = bool(tun["interactivity"])
        hz = tun["HZ"]
        self.jiffy: int = 1_000_000_000 // hz  # JIFFIES_TO_NS(1)
        # MAX_SLEEP_AVG = DEF_TIMESLICE * MAX_BONUS jiffies, DEF_TIMESLICE = 100 ms in jiffies
        self.max_sleep_jiffies: int = max(1, tun["timeslice_ms"] * hz // 1000 * MAX_BONUS)
        self.max_sleep_ns: int = self.max_sleep_jiffies * self.jiffy  # NS_MAX_SLEEP_AVG

    def new_rq(self, cpu_id):
        rq = RunQueue(cpu_id)
        rq.active = {}
        rq.expired = {}
        rq.extra = Starvation()
        return rq

    # ------------------------------------------------------------------ the estimator
    def current_bonus(self, task: Task) -> int:
        """CURRENT_BONUS(): sleep_avg in whole jiffies scaled to 0..MAX_BONUS."""
        return task.sleep_avg // self.jiffy * MAX_BONUS // self.max_sleep_jiffies

    def effective_prio(self, task: Task) -> int:
        prio = task.static_prio - (self.current_bonus(task) - MAX_BONUS // 2)
        return min(MAX_PRIO - 1, max(MAX_RT_PRIO, prio))

    def interactive_delta(self, task: Task) -> int:
        """DELTA(p): how far above its static priority a task must be to count as interactive
        (2 at nice 0, -3 at nice -20, 6 at nice 19)."""
        nice = min(19, max(-20, task.static_prio - 120))
        return (nice + 20) * MAX_BONUS // 40 - 20 * MAX_BONUS // 40 + INTERACTIVE_DELTA

    def task_interactive(self, task: Task) -> bool:
        return task.prio <= task.static_prio - self.interactive_delta(task)

    def recalc_prio(self, task: Task, sleep_ns: int) -> int:
        """recalc_task_prio(): credit ``sleep_ns`` of sleep and return the new priority.  One
        sleep longer than INTERACTIVE_SLEEP lifts sleep_avg no further than that ceiling (800 ms
        less a jiffy at nice 0) and marks the sleep non-interactive (no runqueue-wait credit).
        The kernel's smaller credit for uninterruptible (I/O) sleeps does not arise: every
        sleep in the model is interruptible."""
        if sleep_ns > 0:
            ceiling = (self.max_sleep_jiffies * (MAX_BONUS // 2 + self.interactive_delta(task)
                                                 + 1) // MAX_BONUS - 1) * self.jiffy
            if sleep_ns > ceiling and task.sleep_avg < ceiling:
                task.sleep_avg = ceiling
                task.sleep_type = SLEEP_NONINTERACTIVE
            else:
                task.sleep_avg = min(self.max_sleep_ns, task.sleep_avg + sleep_ns)
        return self.effective_prio(task)

    def charge_run(self, task: Task, now: int):
        """schedule()'s debit of the time ``task`` ran since its last switch or wakeup, divided
        by its bonus so that interactive tasks lose their status slowly."""
        run = min(self.max_sleep_ns, max(0, now - task.sched_stamp))
        run //= self.current_bonus(task) or 1
        task.sleep_avg = max(0, task.sleep_avg - run)
        task.sched_stamp = now

    def starving(self, rq: RunQueue, task: Task, now: int) -> bool:
        """EXPIRED_STARVING(): a better static priority waits in the expired array, or the first
        expired task has waited STARVATION_LIMIT (= MAX_SLEEP_AVG) per runnable task."""
        state: Starvation = rq.extra
        if task.static_prio > state.best_expired_prio:
            return True
        return (state.expired_since >= 0
                and now - state.expired_since > self.max_sleep_ns * rq.nr_running)

    # ------------------------------------------------------------------ queueing
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
            task.slice_left = o1_timeslice(task.static_prio, self.tun["timeslice_ms"])
        if self.estimator:
            if how == "wakeup":  # activate_task()
                task.prio = self.recalc_prio(task, now - task.sched_stamp)
                if task.sleep_type == SLEEP_NORMAL:
                    task.sleep_type = SLEEP_INTERACTIVE
                task.sched_stamp = now
            elif how == "fork":  # wake_up_new_task(): a forked child's sleep_avg is set
                if task.parent is None and task.never_ran:
                    # a task the workload starts: the child of a shell waiting for input, with
                    # the whole bonus (MAX_BONUS), less CHILD_PENALTY
                    task.sleep_avg = self._bonus_sleep(MAX_BONUS, CHILD_PENALTY)
                task.prio = self.effective_prio(task)
                task.sched_stamp = now
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
            task.slice_left = o1_timeslice(task.static_prio, self.tun["timeslice_ms"])
            if self.estimator and self._stays_active(rq, task, now):
                self._queue(rq.active, task)
            else:
                task.expired = True
                self._queue(rq.expired, task)
        else:  # preempted by a better task: keeps its place in its list
            self._queue(rq.active, task, front=task.sleep_type != RUNNING_AT_TAIL)
        if self.estimator:
            task.sleep_type = SLEEP_NORMAL
            self.charge_run(task, now)

    def _stays_active(self, rq: RunQueue, task: Task, now: int) -> bool:
        """The tick that ends a slice: the priority is recomputed (sleep_avg is debited only
        at the switch that follows), and an interactive task goes back to the active array
        unless the expired ones starve."""
        task.prio = self.effective_prio(task)
        state: Starvation = rq.extra
        if state.expired_since < 0:
            state.expired_since = now
        if self.task_interactive(task) and not self.starving(rq, task, now):
            return True
        state.best_expired_prio = min(state.best_expired_prio, task.static_prio)
        return False

    def curr_leaves(self, rq: RunQueue, task: Task, now: int):
        rq.curr = None
        rq.load -= task.weight
        if self.estimator:
            task.sleep_type = SLEEP_NORMAL
            self.charge_run(task, now)

    def pick_next(self, rq: RunQueue, cpu, now: int) -> Task | None:
        if not rq.active:
            state: Starvation = rq.extra
            state.expired_since = -1
            if not rq.expired:
                return None
            rq.active, rq.expired = rq.expired, rq.active
            state.best_expired_prio = MAX_PRIO
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

    def on_pick(self, rq: RunQueue, task: Task, now: int):
        rq.curr = task
        task.exec_start = now
        task.prev_sum_exec = task.sum_exec
        if not self.estimator:
            return
        kind = task.sleep_type
        task.sleep_type = SLEEP_NORMAL
        if kind == SLEEP_INTERACTIVE:
            # first run after a wakeup: the runqueue wait counts as sleep, weighted down
            waited = max(0, now - task.sched_stamp) * (ON_RUNQUEUE_WEIGHT * 128 // 100) // 128
            prio = self.recalc_prio(task, waited)
            if prio != task.prio:  # requeued at the tail of its new list
                task.prio = prio
                task.sleep_type = RUNNING_AT_TAIL
        task.sched_stamp = now

    def account(self, rq: RunQueue, task: Task, elapsed: int, now: int):
        task.slice_left -= elapsed  # Engine.run() does this itself while the slice lasts
        if task.slice_left <= 0 and rq.nr_queued == 0:
            # alone on the CPU: expiry would requeue it and pick it again; refill lazily
            ts = o1_timeslice(task.static_prio, self.tun["timeslice_ms"])
            expiries = 1 + (-task.slice_left) // ts
            if self.estimator:
                self._expire_alone(task, now + task.slice_left, expiries, ts)
            task.slice_left += ts * expiries

    def _expire_alone(self, task: Task, first: int, expiries: int, ts: int):
        """What the skipped expiries of a task alone on its CPU did to its sleep_avg: at each,
        the tick recomputed its priority and the switch back to it debited one slice."""
        for k in range(expiries):
            task.prio = self.effective_prio(task)
            self.charge_run(task, first + k * ts)
            if task.sleep_avg == 0 and k < expiries - 1:  # the later ones change only these
                task.prio = self.effective_prio(task)
                task.sched_stamp = first + (expiries - 1) * ts
                return

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int:
        return start + max(0, task.slice_left) if rq.nr_queued else NO_SLICE_END

    def tick_preempt(self, rq: RunQueue, task: Task, now: int) -> bool:
        return task.slice_left <= 0

    def wakeup_preempts(self, rq: RunQueue, curr: Task, task: Task, now: int) -> bool:
        # TASK_PREEMPTS_CURR; a new thread on its parent's CPU is never checked
        return task.prio < curr.prio and task.sleep_type != NEW_ON_PARENT_CPU

    def task_fork(self, rq: RunQueue, parent: Task, child: Task, now: int, same_cpu):
        half = max(1, parent.slice_left) // 2
        child.slice_left = max(1, half)
        parent.slice_left = max(1, parent.slice_left - half)
        child.prio = parent.prio
        child.static_prio = parent.static_prio
        if self.estimator:
            # wake_up_new_task(): both keep their bonus in whole steps, the child 95 % of it
            child.sleep_avg = self._bonus_sleep(self.current_bonus(parent), CHILD_PENALTY)
            parent.sleep_avg = self._bonus_sleep(self.current_bonus(parent), PARENT_PENALTY)
            child.sleep_type = NEW_ON_PARENT_CPU if same_cpu else SLEEP_NORMAL

    def _bonus_sleep(self, bonus: int, penalty: int) -> int:
        return bonus * penalty // 100 * self.max_sleep_jiffies // MAX_BONUS * self.jiffy

    def child_runs_first(self, parent: Task, child: Task):
        return False  # only for fork() without CLONE_VM; every forking workload makes threads

    def yield_hands_over(self, rq: RunQueue, task: Task, now: int) -> bool:
        return rq.nr_queued > 0

    def best_expired_prio(self, rq: RunQueue) -> int:
        expired: dict = rq.expired
        return min((prio for prio, queue in expired.items() if queue), default=140)

    def queued_tasks(self, rq: RunQueue):
        # the balancer prefers the expired array first (cache-cold), tail first
        tasks = []
        for arr in (rq.expired, rq.active):
            for prio in sorted(arr):
                tasks.extend(reversed(arr[prio]))
        return tasks

    def hot(self, task: Task, now: int, level):
        return self.task_hot(task, now, self.tun["cache_hot_time_ns"])

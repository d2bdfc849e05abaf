"""RSDL (Rotating Staircase DeadLine, 2.6.21-era patches): per-level quotas and rotations."""

from collections import deque

from .base import MS, Policy, RunQueue


class RsdlPolicy(Policy):
    """RSDL: each task gets rr_interval of quota at each priority level it passes through.

    Levels are indexed 0..39 for static priorities 100..139; a nice-0 task starts at level 20 and
    may descend ``priority_levels`` levels.  Spending a level's quota drops the task one level
    (minor rotation); past the last level it goes to the expired array, and when the active array
    is empty the arrays swap and every task restarts at its static level (major rotation).
    Level-wide quotas (a whole level rotating at once) are not modelled.
    """

    family = "rsdl"

    def __init__(self, kernel, tun, ncpus):
        super().__init__(kernel, tun, ncpus)
        self.rr = tun["rr_interval"] * MS
        self.last_level = min(39, 20 + tun["priority_levels"] - 1)

    def new_rq(self, cpu_id):
        rq = RunQueue(cpu_id)
        rq.active = [deque() for _ in range(40)]
        rq.expired = deque()
        return rq

    def _start_level(self, task):
        return min(self.last_level, 20 + task.nice)

    def _queue(self, rq, task, front=False):
        if task.expired:
            rq.expired.append(task)
        elif front:
            rq.active[task.level].appendleft(task)
        else:
            rq.active[task.level].append(task)

    def enqueue(self, rq, task, how, now):
        if task.quota <= 0 and not task.expired:
            if task.never_ran and task.level == 0:
                task.level = self._start_level(task)
            task.quota = self.rr
        rq.load += task.weight
        rq.nr_queued += 1
        self._queue(rq, task)

    def dequeue(self, rq, task, now):
        if task.expired:
            rq.expired.remove(task)
        else:
            rq.active[task.level].remove(task)
        rq.load -= task.weight
        rq.nr_queued -= 1

    def _expire(self, task):
        task.expired = True
        task.level = self._start_level(task)
        task.quota = self.rr

    def _descend(self, task):
        """Quota at this level spent: drop a level (minor rotation) or expire (to major)."""
        if task.level >= self.last_level:
            self._expire(task)
        else:
            task.level += 1
            task.quota = self.rr

    def put_prev(self, rq, task, now):
        rq.curr = None
        rq.nr_queued += 1
        if task.yield_pending:
            task.yield_pending = False
            if self.tun["yield_expire"]:
                self._expire(task)
            self._queue(rq, task)
        elif task.quota <= 0:
            self._descend(task)
            self._queue(rq, task)
        else:
            self._queue(rq, task, front=True)

    def pick_next(self, rq, cpu, now):
        for _ in range(2):
            for q in rq.active:
                if q:
                    rq.nr_queued -= 1
                    return q.popleft()
            if not rq.expired:
                return None
            while rq.expired:  # major rotation
                t = rq.expired.popleft()
                t.expired = False
                rq.active[t.level].append(t)
        return None

    def account(self, rq, task, elapsed, now):
        task.quota -= elapsed
        while task.quota <= 0 and rq.nr_queued == 0:
            self._descend(task)  # alone: rotations change nothing visible, apply lazily
            task.expired = False

    def preempt_time(self, rq, task, start):
        return start + max(0, task.quota) if rq.nr_queued else None

    def tick_preempt(self, rq, task, now):
        return task.quota <= 0

    def wakeup_preempts(self, rq, curr, task, now):
        return not task.expired and task.level < curr.level

    def task_fork(self, rq, parent, child, now, same_cpu):
        child.level = parent.level
        half = max(1, parent.quota // 2)
        child.quota = half
        parent.quota = max(1, parent.quota - half)

    def yield_task(self, rq, task, now):
        task.yield_pending = True

    def yield_hands_over(self, rq, task, now):
        if rq.nr_queued == 0:
            return False
        if self.tun["yield_expire"]:
            return True
        # requeue at the tail of its level: only tasks at the same or a better level get the CPU
        return any(rq.active[lvl] for lvl in range(task.level + 1))

    def queued_tasks(self, rq):
        tasks = list(reversed(rq.expired))
        for q in reversed(rq.active):
            tasks.extend(reversed(q))
        return tasks

    def hot(self, task, now, level):
        return self.task_hot(task, now, self.tun["cache_hot_time_ns"])

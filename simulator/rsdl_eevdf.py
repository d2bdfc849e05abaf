"""RSDL / Staircase Deadline and EEVDF scheduler classes."""

from collections import deque

from .policies import MS, NICE_0, Policy, RunQueue, ilog2


class RsdlPolicy(Policy):
    """RSDL: each task gets rr_interval of quota at each priority level it passes through.

    Levels are indexed 0..39 for static priorities 100..139; a nice-0 task starts at level 20 and
    may descend ``priority_levels`` levels.  Spending a level's quota drops the task one level
    (minor rotation); past the last level it goes to the expired array, and when the active array
    is empty the arrays swap and every task restarts at its static level (major rotation).
    Level-wide quotas (a whole level rotating at once) are not modelled.
    """

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


class EevdfPolicy(Policy):
    """EEVDF (6.6): pick the eligible task (vruntime <= weighted average) with the earliest
    virtual deadline; a task's deadline is its vruntime plus one base slice of virtual time."""

    def __init__(self, kernel, tun, ncpus):
        super().__init__(kernel, tun, ncpus)
        self.slice = tun["base_slice_ns"] * (1 + ilog2(min(ncpus, 8)))
        self.log_cost = tun["sched_cost_log_ns"]

    def new_rq(self, cpu_id):
        rq = RunQueue(cpu_id)
        rq.data = []
        return rq

    def _vslice(self, task):
        return self.slice * NICE_0 // task.weight

    def _avg(self, rq):
        total = 0
        weight = 0
        for t in rq.data:
            total += t.vruntime * t.weight
            weight += t.weight
        curr = rq.curr
        if curr is not None:
            total += curr.vruntime * curr.weight
            weight += curr.weight
        return total // weight if weight else rq.min_vruntime

    def enqueue(self, rq, task, how, now):
        if how == "fork":
            if task.deadline == 0:
                task.vruntime = self._avg(rq)
                task.deadline = task.vruntime + self._vslice(task) // 2
        else:  # wakeup/migrate: keep the lag (stored relative on leaving)
            lag = task.vruntime
            task.vruntime = self._avg(rq) + lag
            task.deadline = task.vruntime + self._vslice(task)
        rq.load += task.weight
        rq.data.append(task)

    def _store_lag(self, rq, task):
        limit = self._vslice(task)
        task.vruntime = max(-limit, min(limit, task.vruntime - self._avg(rq)))

    def dequeue(self, rq, task, now):
        rq.data.remove(task)
        rq.load -= task.weight
        self._store_lag(rq, task)

    def curr_leaves(self, rq, task, now):
        self._store_lag(rq, task)
        super().curr_leaves(rq, task, now)

    def put_prev(self, rq, task, now):
        if task.yield_pending:
            task.yield_pending = False
            task.vruntime = task.deadline
            task.deadline = task.vruntime + self._vslice(task)
        rq.curr = None
        rq.data.append(task)

    def pick_next(self, rq, cpu, now):
        data = rq.data
        if not data:
            return None
        avg = self._avg(rq)
        best = None
        for t in data:
            if t.vruntime <= avg and (best is None or t.deadline < best.deadline):
                best = t
        if best is None:
            best = min(data, key=lambda t: t.vruntime)
        data.remove(best)
        rq.min_vruntime = avg
        return best

    def account(self, rq, task, elapsed, now):
        task.vruntime += elapsed * NICE_0 // task.weight
        if task.vruntime >= task.deadline and not rq.data:
            task.deadline = task.vruntime + self._vslice(task)

    def preempt_time(self, rq, task, start):
        if not rq.data:
            return None
        return start + max(0, (task.deadline - task.vruntime) * task.weight // NICE_0)

    def tick_preempt(self, rq, task, now):
        if task.vruntime < task.deadline:
            return False
        task.deadline = task.vruntime + self._vslice(task)
        return True

    def wakeup_preempts(self, rq, curr, task, now):
        return task.vruntime <= self._avg(rq) and task.deadline < curr.deadline

    def task_fork(self, rq, parent, child, now, same_cpu):
        child.deadline = 0

    def yield_task(self, rq, task, now):
        task.yield_pending = True

    def yield_hands_over(self, rq, task, now):
        return bool(rq.data)

    def decision_cost(self, rq):
        return self.sched_cost + self.log_cost * ilog2(max(1, rq.nr_running))

    def queued_tasks(self, rq):
        return list(reversed(rq.data))

    def hot(self, task, now, level):
        return self.task_hot(task, now, self.tun["sched_migration_cost_ns"])

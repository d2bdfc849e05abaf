"""RSDL (Rotating Staircase DeadLine, 2.6.21-era patches): per-level quotas and rotations."""

from collections import deque
from typing import ClassVar

from ..program import Task
from .base import MS, Policy, RunQueue

LEVELS = 40


def _live(queue):
    """``queue`` without its stale entries (run when they outnumber the live ones)."""
    return deque([e for e in queue if e[0].key is e])


class RsdlPolicy(Policy):
    """RSDL: a staircase of priority levels, each with a quota, rotated as quotas run out.

    Levels are indexed 0..39 for static priorities 100..139; a nice-0 task starts at level 20 and
    may descend ``priority_levels`` levels.  Two quotas run down while a task runs:

    * its own: rr_interval at each level it passes through; spent, the task drops one level;
    * its level's: rr_interval shared by every task of the level on this runqueue; spent, the
      whole level is finished for this epoch and its tasks drop to the next level together
      (minor rotation), which is why rotations come often on a busy runqueue.

    Below the last level a task waits in the expired array; when no level has tasks the arrays
    swap and every task restarts at its static level with fresh quotas (major rotation).

    sched_yield() (``yield_expire``): 1 sends the yielder to the expired array (RSDL 0.33);
    0 is RSDL 0.31's softened yield, nearly a no-op: the yielder keeps its place at the head of
    its level and its quota, so only a task at a strictly better level could run first.
    """

    family: ClassVar[str] = "rsdl"

    def __init__(self, kernel, tun, ncpus):
        super().__init__(kernel, tun, ncpus)
        self.rr: int = tun["rr_interval"] * MS
        self.last_level: int = min(LEVELS - 1, 20 + tun["priority_levels"] - 1)
        self.yield_expire = bool(tun["yield_expire"])

    def new_rq(self, cpu_id):
        rq = RunQueue(cpu_id)
        # Queues hold entries, one-element lists [task]: an entry is live while its task's
        # ``key`` is that very list, so a migrating task leaves in O(1) (its entry goes stale and
        # is dropped when a pick, a rotation or the balancer reaches it) instead of
        # deque.remove()'s O(n).
        rq.active = [deque() for _ in range(LEVELS)]
        rq.expired = deque()
        rq.data = [0] * (LEVELS + 1)  # live entries per level; [LEVELS]: the expired array's
        rq.seq = 0  # bitmap of the levels that hold live tasks, as the kernel's prio bitmap
        # per level: quota left this epoch; rq.min_vruntime is reused as the first level not
        # yet finished this epoch (levels above it were rotated away)
        rq.extra = [self.rr] * LEVELS
        return rq

    def _start_level(self, task: Task):
        return min(self.last_level, 20 + task.nice)

    def _place(self, rq: RunQueue, task: Task):
        """A task may not sit on a level that finished this epoch: move it to the first open one."""
        if not task.expired and task.level < rq.min_vruntime:
            task.level = rq.min_vruntime
            task.quota = self.rr
            if task.level > self.last_level:
                self._expire(task)

    def _queue(self, rq: RunQueue, task: Task, front=False):
        self._place(rq, task)
        entry = [task]  # a list, not a tuple: the compiled build boxes tuples anew (identity)
        task.key = entry
        counts: list[int] = rq.data
        if task.expired:
            rq.expired.append(entry)
            counts[LEVELS] += 1
            return
        level = task.level
        if front:
            rq.active[level].appendleft(entry)
        else:
            rq.active[level].append(entry)
        counts[level] += 1
        rq.seq |= 1 << level

    def enqueue(self, rq: RunQueue, task: Task, how, now: int):
        if task.quota <= 0 and not task.expired:
            if task.never_ran and task.level == 0:
                task.level = self._start_level(task)
            task.quota = self.rr
        rq.load += task.weight
        rq.nr_queued += 1
        self._queue(rq, task)

    def dequeue(self, rq: RunQueue, task: Task, now: int):
        task.key = None  # its entry goes stale where it stands
        counts: list[int] = rq.data
        if task.expired:
            counts[LEVELS] -= 1
            if not counts[LEVELS]:
                rq.expired.clear()
            elif len(rq.expired) > 2 * counts[LEVELS] + 32:
                rq.expired = _live(rq.expired)
        else:
            level = task.level
            counts[level] -= 1
            if not counts[level]:
                rq.seq &= ~(1 << level)
                rq.active[level].clear()
            elif len(rq.active[level]) > 2 * counts[level] + 32:
                rq.active[level] = _live(rq.active[level])
        rq.load -= task.weight
        rq.nr_queued -= 1

    def _expire(self, task: Task):
        task.expired = True
        task.level = self._start_level(task)
        task.quota = self.rr

    def _descend(self, task: Task):
        """The task's own quota at this level is spent: drop a level, or expire below the last."""
        if task.level >= self.last_level:
            self._expire(task)
        else:
            task.level += 1
            task.quota = self.rr

    def _minor_rotation(self, rq: RunQueue, level):
        """Level ``level`` spent its shared quota: it is finished for this epoch and its
        queued tasks move down to the next level, ahead of the tasks already there."""
        rq.min_vruntime = max(rq.min_vruntime, level + 1)
        moving = rq.active[level]
        rq.active[level] = deque()
        rq.seq &= ~(1 << level)
        counts: list[int] = rq.data
        counts[level] = 0
        for entry in reversed(moving):
            t = entry[0]
            if t.key is not entry:
                continue
            t.level = level + 1
            t.quota = self.rr
            if t.level > self.last_level:
                self._expire(t)
                rq.expired.append(entry)
                counts[LEVELS] += 1
            else:
                rq.active[t.level].appendleft(entry)
                counts[t.level] += 1
                rq.seq |= 1 << t.level

    def put_prev(self, rq: RunQueue, task: Task, now: int):
        rq.curr = None
        rq.nr_queued += 1
        level = task.level
        if not task.expired and rq.extra[level] <= 0 and level >= rq.min_vruntime:
            self._minor_rotation(rq, level)
        if task.yield_pending:
            task.yield_pending = False
            if self.yield_expire:
                self._expire(task)
                self._queue(rq, task)
            else:
                self._queue(rq, task, front=True)
        elif task.quota <= 0:
            self._descend(task)
            self._queue(rq, task)
        else:
            self._queue(rq, task, front=True)

    def _major_rotation(self, rq: RunQueue):
        rq.min_vruntime = 0
        rq.extra = [self.rr] * LEVELS
        expired = rq.expired
        rq.expired = deque()
        counts: list[int] = rq.data
        counts[LEVELS] = 0
        for entry in expired:
            t = entry[0]
            if t.key is not entry:
                continue
            t.expired = False
            rq.active[t.level].append(entry)
            counts[t.level] += 1
            rq.seq |= 1 << t.level

    def pick_next(self, rq: RunQueue, cpu, now: int) -> Task | None:
        counts: list[int] = rq.data
        for _ in range(2):
            bitmap = rq.seq
            if bitmap:
                level = (bitmap & -bitmap).bit_length() - 1  # the best level with tasks
                q = rq.active[level]
                entry = q.popleft()
                while entry[0].key is not entry:  # skip the entries of tasks that left
                    entry = q.popleft()
                task: Task = entry[0]
                task.key = None
                counts[level] -= 1
                if not counts[level]:
                    rq.seq = bitmap & ~(1 << level)
                    q.clear()
                rq.nr_queued -= 1
                return task
            if not counts[LEVELS]:
                return None
            self._major_rotation(rq)
        return None

    def account(self, rq: RunQueue, task: Task, elapsed: int, now: int):
        task.quota -= elapsed
        quotas: list[int] = rq.extra
        level = task.level
        left: int = quotas[level] - elapsed
        quotas[level] = left
        if rq.nr_queued == 0:
            # alone: rotations would change nothing visible; apply them lazily
            while task.quota <= 0:
                self._descend(task)
                task.expired = False
            if rq.extra[task.level] <= 0:
                self._major_rotation(rq)

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int | None:
        if not rq.nr_queued:
            return None
        quotas: list[int] = rq.extra
        left = min(task.quota, quotas[task.level])
        return start + max(0, left)

    def tick_preempt(self, rq: RunQueue, task: Task, now: int) -> bool:
        quotas: list[int] = rq.extra
        return task.quota <= 0 or quotas[task.level] <= 0

    def wakeup_preempts(self, rq: RunQueue, curr: Task, task: Task, now: int) -> bool:
        return not task.expired and task.level < curr.level

    def task_fork(self, rq: RunQueue, parent: Task, child: Task, now: int, same_cpu):
        child.level = parent.level
        half = max(1, parent.quota // 2)
        child.quota = half
        parent.quota = max(1, parent.quota - half)

    def yield_hands_over(self, rq: RunQueue, task: Task, now: int) -> bool:
        if rq.nr_queued == 0:
            return False
        if self.yield_expire:
            return True
        # 0.31's softened yield: the task stays at the head of its level, so only a task at a
        # strictly better level would run first -- and such a task would have preempted it
        return bool(rq.seq & ((1 << task.level) - 1))

    def queued_tasks(self, rq: RunQueue):
        tasks = [e[0] for e in reversed(rq.expired) if e[0].key is e]
        active = rq.active
        bitmap: int = rq.seq  # the levels holding tasks, visited worst first
        while bitmap:
            level = bitmap.bit_length() - 1
            bitmap ^= 1 << level
            tasks.extend([e[0] for e in reversed(active[level]) if e[0].key is e])
        return tasks

    def hot(self, task: Task, now: int, level):
        return self.task_hot(task, now, self.tun["cache_hot_time_ns"])

"""RSDL (Rotating Staircase DeadLine, 2.6.21-era patches): per-level quotas and rotations."""

from collections import deque
from typing import ClassVar, Final

from ..program import Task
from .base import MS, NO_SLICE_END, Policy, RunQueue

LEVELS = 40

# the index of a power of two 2**k (k < 66) from its remainder modulo 67, which differs for each
# k (2 generates the multiplicative group modulo the prime 67): sched_find_first_bit() without
# int.bit_length(), a method call by name in the compiled build
_BIT_BY_REMAINDER: Final[list[int]] = [0] * 67
for _bit in range(LEVELS):
    _BIT_BY_REMAINDER[(1 << _bit) % 67] = _bit

# deque's methods called through their descriptors: the compiled build calls the C function
# directly, where q.popleft() looks the method up by name at every call (deque is no native
# class); hot in every pick and queueing
_POPLEFT: Final = deque.popleft
_APPEND: Final = deque.append
_APPENDLEFT: Final = deque.appendleft

def _lowest_bit(bitmap: int) -> int:
    """The index of the lowest set bit of ``bitmap`` (> 0, below bit LEVELS)."""
    return _BIT_BY_REMAINDER[(bitmap & -bitmap) % 67]


class Entry:
    """A task's place in a bucket: live while the task's ``key`` is this entry; ``rotations``
    is the bucket's rotation count the task's level and quota were last settled at.  A class
    rather than a list: the compiled build reads its fields as native ones (no boxed count)."""

    __slots__ = ("task", "bucket", "rotations")

    def __init__(self, task: Task, bucket: "Bucket", rotations: int):
        self.task: Task = task
        self.bucket: Bucket = bucket
        self.rotations: int = rotations


class LevelQuota:
    """A level's quota left this epoch on one runqueue, shared by the level's tasks.  An object
    with a native field rather than an int in a list: the compiled build charges it on every
    event, and a list would box each new value."""

    __slots__ = ("left",)

    def __init__(self, left: int):
        self.left: int = left


class Bucket:
    """The queue of one level (or the expired array) of a runqueue, as a movable whole.

    Entries (task, bucket, rotations): an entry is live while its task's ``key`` is that very
    entry, so a migrating task leaves in O(1) (its entry goes stale and is dropped when
    a pick, a rotation or the balancer reaches it).  A minor rotation moves a whole level down
    by handing its bucket to the next level (the kernel splices the list), counting the
    rotation instead of visiting the tasks: a task whose entry saw fewer rotations than its
    bucket takes the bucket's level and a fresh quota (or expires) when it is next looked at
    (RsdlPolicy._settle).  Two non-empty levels merge by moving the smaller one's entries.

    ``starts`` has a bit set for the static (start) level of every task queued here since the
    bucket was last empty, a superset of its live tasks' start levels: an expired array whose
    tasks all restart at one level becomes that level's queue whole at a major rotation, as the
    kernel swaps its two arrays, instead of visiting each task."""

    __slots__ = ("items", "level", "rotations", "expired", "live", "starts")

    def __init__(self, level: int, expired: bool = False):
        self.items: deque = deque()
        self.level: int = level
        self.rotations: int = 0
        self.expired: bool = expired
        self.live: int = 0  # live entries
        self.starts: int = 0  # bit L: a task starting at level L was queued here (superset)

    def compact(self):
        """Drop the stale entries (run when they outnumber the live ones)."""
        self.items = deque([e for e in self.items if e.task.key is e])

    def live_entries(self) -> list[Entry]:
        return [e for e in self.items if e.task.key is e]


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

    ``level_quota_sum``: 1 gives a level, instead of one rr_interval, the sum of the quotas its
    tasks brought when queued at it this epoch (the RSDL readme: "When each task is queued, the
    cpu that it is queued onto also keeps a record of that quota"), so a level finishes only
    once its tasks' quotas are spent, and minor rotations are rarer.

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
        self.summed: bool = bool(tun["level_quota_sum"])

    def new_rq(self, cpu_id):
        rq = RunQueue(cpu_id)
        rq.active = [Bucket(level) for level in range(LEVELS)]
        rq.expired = Bucket(LEVELS, expired=True)
        rq.seq = 0  # bitmap of the levels that hold live tasks, as the kernel's prio bitmap
        # per level: quota left this epoch; rq.min_vruntime is reused as the first level not
        # yet finished this epoch (levels above it were rotated away)
        # (summed: nothing until tasks are queued)
        rq.extra = [LevelQuota(0 if self.summed else self.rr) for _ in range(LEVELS)]
        rq.vsum = 0  # reused as the count of major rotations (the kernel's rq->prio_rotation)
        return rq

    def _settle(self, entry: Entry):
        """Bring a queued task's level, quota and expiry up to its bucket's rotations."""
        bucket = entry.bucket
        if entry.rotations != bucket.rotations:
            entry.rotations = bucket.rotations
            task = entry.task
            if bucket.expired:
                self._expire(task)
            else:  # a minor rotation, or a major one that made an expired array active
                task.level = bucket.level
                task.quota = self.rr
                task.expired = False

    def _start_level(self, task: Task) -> int:
        level = 20 + task.nice
        return level if level < self.last_level else self.last_level

    def _place(self, rq: RunQueue, task: Task) -> bool:
        """A task may not sit on a level that finished this epoch: move it to the first open
        one (True: it was moved)."""
        if not task.expired and task.level < rq.min_vruntime:
            task.level = rq.min_vruntime
            task.quota = self.rr
            if task.level > self.last_level:
                self._expire(task)
            return True
        return False

    def _count(self, rq: RunQueue, task: Task):
        """With summed level quotas: the task, queued at a level it was not counted at, adds
        its quota to the level's."""
        if self.summed and not task.expired:
            quotas: list[LevelQuota] = rq.extra
            quotas[task.level].left += task.quota

    def _queue(self, rq: RunQueue, task: Task, front: bool = False) -> bool:
        """Queue the task at its level (True: _place() moved it to a new level)."""
        moved = self._place(rq, task)
        active: list[Bucket] = rq.active  # typed: a native index, not a boxed int
        bucket: Bucket = rq.expired if task.expired else active[task.level]
        entry = Entry(task, bucket, bucket.rotations)
        task.key = entry
        bucket.live += 1
        bucket.starts |= 1 << self._start_level(task)
        if task.expired:  # the expired array only grows at its tail
            _APPEND(bucket.items, entry)
            return moved
        if front:
            _APPENDLEFT(bucket.items, entry)
        else:
            _APPEND(bucket.items, entry)
        rq.seq |= 1 << task.level
        return moved

    def enqueue(self, rq: RunQueue, task: Task, how, now: int):
        if task.rotation != rq.vsum and how != "fork":
            # it last ran in an earlier major epoch of this runqueue (or on another one): its
            # level and quota belong to that epoch, and it starts at its static level with a
            # full quota, as the tasks the major rotation restarted
            task.rotation = rq.vsum
            task.level = self._start_level(task)
            task.quota = self.rr
            task.expired = False
        if task.quota <= 0 and not task.expired:
            if task.never_ran and task.level == 0:
                task.level = self._start_level(task)
            task.quota = self.rr
        rq.load += task.weight
        rq.nr_queued += 1
        self._queue(rq, task)
        self._count(rq, task)  # every queueing adds the task's quota (none taken off on leaving)

    def dequeue(self, rq: RunQueue, task: Task, now: int):
        entry: Entry = task.key
        task.key = None  # its entry goes stale where it stands
        self._settle(entry)
        self._leave(rq, entry.bucket)
        rq.load -= task.weight
        rq.nr_queued -= 1

    def _leave(self, rq: RunQueue, bucket: Bucket):
        bucket.live -= 1
        if not bucket.live:
            bucket.items.clear()
            bucket.starts = 0
            if not bucket.expired:
                rq.seq &= ~(1 << bucket.level)
        elif len(bucket.items) > 2 * bucket.live + 32:
            bucket.compact()

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

    def _minor_rotation(self, rq: RunQueue, level: int):
        """Level ``level`` spent its shared quota: it is finished for this epoch and its
        queued tasks move down to the next level, ahead of the tasks already there (below the
        last level: to the expired array's tail, last first, as they are visited from the back)."""
        if rq.min_vruntime < level + 1:
            rq.min_vruntime = level + 1
        active: list[Bucket] = rq.active
        moving: Bucket = active[level]
        rq.seq &= ~(1 << level)
        if not moving.live:  # empty: it stays this level's (no live entry refers to it)
            return
        moving.rotations += 1
        if level + 1 > self.last_level:
            active[level] = Bucket(level)
            moving.expired = True
            moving.level = LEVELS
            self._merge_expired(rq, moving)
            return
        moving.level = level + 1
        if self.summed:  # each moving task brings a fresh quota to the level below
            quotas: list[LevelQuota] = rq.extra
            quotas[level + 1].left += self.rr * moving.live
        below: Bucket = active[level + 1]
        rq.seq |= 1 << (level + 1)
        if not below.live:
            # the two swap places: the empty bucket below (no live entry refers to it) becomes
            # this level's, saving an allocation per rotation
            below.level = level
            below.starts = 0
            active[level] = below
            active[level + 1] = moving
            return
        active[level] = Bucket(level)
        if moving.live <= below.live:
            entries = self._repoint(moving, below)
            entries.reverse()
            below.items.extendleft(entries)
            below.live += moving.live
            below.starts |= moving.starts
        else:
            moving.items.extend(self._repoint(below, moving))
            moving.live += below.live
            moving.starts |= below.starts
            rq.active[level + 1] = moving

    def _merge_expired(self, rq: RunQueue, moving: Bucket):
        """The last level's tasks expire: the expired array becomes its old tasks, then the
        rotated ones in reverse order."""
        expired: Bucket = rq.expired
        if not expired.live:
            moving.items.reverse()  # in C, not a visit of the tasks
            rq.expired = moving
        elif moving.live <= expired.live:
            entries = self._repoint(moving, expired)
            entries.reverse()
            expired.items.extend(entries)
            expired.live += moving.live
            expired.starts |= moving.starts
        else:
            moving.items.reverse()
            entries = self._repoint(expired, moving)
            entries.reverse()
            moving.items.extendleft(entries)
            moving.live += expired.live
            moving.starts |= expired.starts
            rq.expired = moving

    def _repoint(self, src: Bucket, dst: Bucket) -> list[Entry]:
        """The live entries of ``src``, settled and made entries of ``dst``."""
        entries = src.live_entries()
        rotations = dst.rotations
        for entry in entries:
            self._settle(entry)
            entry.bucket = dst
            entry.rotations = rotations
        return entries

    def put_prev(self, rq: RunQueue, task: Task, now: int):
        rq.curr = None
        rq.nr_queued += 1
        level = task.level
        quotas: list[LevelQuota] = rq.extra
        if not task.expired and quotas[level].left <= 0 and level >= rq.min_vruntime:
            self._minor_rotation(rq, level)
        if task.yield_pending:
            task.yield_pending = False
            if self.yield_expire:
                self._expire(task)
                self._queue(rq, task)
            elif self._queue(rq, task, front=True):
                self._count(rq, task)
        elif task.quota <= 0:
            self._descend(task)
            self._queue(rq, task)
            self._count(rq, task)  # a new level, a fresh quota
        elif self._queue(rq, task, front=True):
            self._count(rq, task)

    def _major_rotation(self, rq: RunQueue):
        rq.vsum += 1
        rq.min_vruntime = 0
        quota: LevelQuota
        fresh = 0 if self.summed else self.rr
        for quota in rq.extra:
            quota.left = fresh
        expired: Bucket = rq.expired
        rq.expired = Bucket(LEVELS, expired=True)
        active: list[Bucket] = rq.active
        starts = expired.starts
        if expired.live and not rq.seq and not starts & (starts - 1):
            # every expired task restarts at one level, and no level holds a task: the
            # expired array becomes that level's queue whole, in its order; each task takes
            # the level, a fresh quota and leaves the expired state when next looked at
            level = starts.bit_length() - 1
            if self.summed:
                quotas: list[LevelQuota] = rq.extra
                quotas[level].left = self.rr * expired.live
            expired.rotations += 1
            expired.expired = False
            expired.level = level
            active[level] = expired
            rq.seq = 1 << level
            return
        entry: Entry
        for entry in expired.items:
            t = entry.task
            if t.key is not entry:
                continue
            self._settle(entry)
            t.expired = False
            bucket = active[t.level]
            entry.bucket = bucket
            entry.rotations = bucket.rotations
            bucket.items.append(entry)
            bucket.live += 1
            bucket.starts |= 1 << t.level
            rq.seq |= 1 << t.level
            self._count(rq, t)

    def pick_next(self, rq: RunQueue, cpu, now: int) -> Task | None:
        attempt = 0  # a counted while, not `for _ in range(2)`: no boxed loop variable
        while attempt < 2:
            attempt += 1
            bitmap = rq.seq
            if bitmap:
                level = _lowest_bit(bitmap)  # the best level with tasks
                active: list[Bucket] = rq.active  # typed: a native index, not a boxed int
                bucket: Bucket = active[level]
                q = bucket.items
                entry: Entry = _POPLEFT(q)
                while entry.task.key is not entry:  # skip the entries of tasks that left
                    entry = _POPLEFT(q)
                task: Task = entry.task  # typed: mypy took it for an object (a generic setattr)
                task.key = None
                self._settle(entry)
                task.rotation = rq.vsum
                bucket.live -= 1
                if not bucket.live:
                    rq.seq = bitmap & ~(1 << level)
                    q.clear()
                    bucket.starts = 0
                rq.nr_queued -= 1
                return task
            if not rq.expired.live:
                return None
            self._major_rotation(rq)
        return None

    def account(self, rq: RunQueue, task: Task, elapsed: int, now: int):
        task.quota -= elapsed
        quotas: list[LevelQuota] = rq.extra
        quotas[task.level].left -= elapsed
        if rq.nr_queued == 0:
            # alone: rotations would change nothing visible; apply them lazily
            while task.quota <= 0:
                self._descend(task)
                task.expired = False
                self._count(rq, task)
            if quotas[task.level].left <= 0:
                self._major_rotation(rq)
                self._count(rq, task)  # the running task is on the runqueue in the kernel

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int:
        if not rq.nr_queued:
            return NO_SLICE_END
        quotas: list[LevelQuota] = rq.extra
        left = quotas[task.level].left  # min(), max() spelt out: native in the compiled build
        if task.quota < left:
            left = task.quota
        return start + (left if left > 0 else 0)

    def tick_preempt(self, rq: RunQueue, task: Task, now: int) -> bool:
        quotas: list[LevelQuota] = rq.extra
        return task.quota <= 0 or quotas[task.level].left <= 0

    def wakeup_preempts(self, rq: RunQueue, curr: Task, task: Task, now: int) -> bool:
        return not task.expired and task.level < curr.level

    def task_fork(self, rq: RunQueue, parent: Task, child: Task, now: int, same_cpu):
        child.level = parent.level
        child.rotation = parent.rotation
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

    def best_expired_prio(self, rq: RunQueue) -> int:
        """The best prio among the live tasks of the expired array (as O(1)'s field)."""
        return min((e.task.prio for e in rq.expired.items if e.task.key is e), default=140)

    def queued_tasks(self, rq: RunQueue):
        tasks = [e.task for e in reversed(rq.expired.items) if e.task.key is e]
        active: list[Bucket] = rq.active
        bitmap: int = rq.seq  # the levels holding tasks, visited worst first
        while bitmap:
            level = bitmap.bit_length() - 1
            bitmap ^= 1 << level
            tasks.extend([e.task for e in reversed(active[level].items) if e.task.key is e])
        return tasks

    def hot(self, task: Task, now: int, level):
        return self.task_hot(task, now, self.tun["cache_hot_time_ns"])

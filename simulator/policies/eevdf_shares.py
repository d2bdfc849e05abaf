"""6.6's group shares (CONFIG_FAIR_GROUP_SCHED with PELT load averages), for flattened cgroups.

The model keeps one flat runqueue per CPU: a task of a cgroup with cpu.shares stands for its
group's entity on that CPU (tg->se[cpu]).  6.6's update_cfs_group() gives that entity the
weight calc_group_shares() computes from the group's runqueue on the CPU (grq):

    load = max(grq->load.weight, grq->avg.load_avg)
    shares = tg->shares x load / (tg->load_avg - grq->tg_load_avg_contrib + load)

clamped to [MIN_SHARES, tg->shares].  grq->avg.load_avg is the sum of the PELT load averages of
the tasks attached to grq (a task's is its weight x its decayed runnable fraction; a sleeping
task stays attached to the CPU it last ran on, its average decaying, and moves with the task
when it is queued elsewhere); update_tg_load_avg() folds it into tg->load_avg when it moved by
more than 1/64 of what was folded.  update_cfs_group() runs at every enqueue and dequeue of the
group's tasks on the CPU (after the average and tg->load_avg are brought up to date, after the
task's load.weight is added or removed) and at each tick for the running entity; reweight_entity()
commits the running entity's time first and rescales a queued entity's remaining virtual
deadline (deadline - vruntime) by old/new weight, an off-queue entity's lag the same way.  A
task's weight here is its part of its group's entity: the entity's weight x its own / the
group's load on the CPU.  cpu_load() and task_h_load() give 6.6's wake path (balance.py) the
root runqueue's PELT load and a task's part of it (issue 24's seventh round).

Checked against stored kernel source text: calc_group_shares() (6.x kernel/sched/fair.c),
update_tg_load_avg()'s 1/64 rule (the once-per-ms rate limit beside it is a later patch, merged
after 6.6 as we recall), init_entity_runnable_average() (a new task starts at full load), and
6.6's reweight_entity() (sched-urgent-2023-10-21: the deadline rescaled, the vruntime kept).
From memory, not re-read: enqueue_entity()'s order (update_load_avg(), update_cfs_group(),
place_entity(), account_entity_enqueue()) and the tick's update_cfs_group().

Simplifications (documented in docs/simulator.md, issue 24's sixth round): PELT's geometric
series over 1024-us periods (y^32 = 1/2) is taken as a continuous decay with the same half-life
(32 x 1.024 ms), which equals it at period boundaries; the tick's refresh of the running entity
is done for every group entity of a CPU at that CPU's periodic balance pass (the model skips
ticks); the removed load of a task that moved is subtracted from its old CPU's average at once,
where the kernel does it at that runqueue's next update (tg->load_avg sees it only then in both).
"""

from typing import TYPE_CHECKING

from ..program import DONE, Task, nice_to_weight
from .base import RunQueue
from .cfs_shares import MIN_SHARES, commit_running_member, group_entity_weight

if TYPE_CHECKING:  # annotations only
    from ..engine import Engine
    from .eevdf import EevdfPolicy

HALF_LIFE_NS = 32 * 1_024_000  # PELT: y^32 = 1/2 with periods of 1024 us


class TaskAvg:
    """A task's PELT load average over its own weight (se->avg.load_avg / se_weight)."""

    __slots__ = ("ratio", "stamp", "runnable", "cpu")

    def __init__(self, now: int):
        self.ratio = 1.0  # init_entity_runnable_average(): a new task starts at full load
        self.stamp = now
        self.runnable = False
        self.cpu = -1  # the CPU whose group runqueue it is attached to

    def at(self, now: int) -> float:
        decay = 0.5 ** ((now - self.stamp) / HALF_LIFE_NS)
        return self.ratio * decay + (1.0 - decay if self.runnable else 0.0)

    def settle(self, now: int) -> None:
        self.ratio = self.at(now)
        self.stamp = now


class GroupRq:
    """A group's cfs_rq on one CPU: its runnable tasks, the tasks attached to it, its
    contribution to tg->load_avg and its entity's weight."""

    __slots__ = ("group", "shares", "tasks", "attached", "load", "contrib", "se_weight")

    def __init__(self, group: str, shares: int):
        self.group = group
        self.shares = shares
        self.tasks: list[Task] = []  # runnable (queued or running) on this CPU
        self.attached: list[Task] = []  # whose load average sits here (runnable or asleep)
        self.load = 0  # grq->load.weight: the runnable tasks' own weights
        self.contrib = 0  # grq->tg_load_avg_contrib
        self.se_weight = shares


class PeltShares:
    """The per-CPU group entities of every cgroup with shares, and each group's tg->load_avg."""

    def __init__(self, eng: "Engine", policy: "EevdfPolicy"):
        self.eng = eng
        self.policy = policy
        self.rqs: dict[tuple[str, int], GroupRq] = {}
        self.tg_load: dict[str, int] = {}
        self.avgs: dict[int, TaskAvg] = {}  # by task id
        self.by_cpu: dict[int, list[GroupRq]] = {}  # each CPU's group runqueues

    def _grq(self, group: str, shares: int, cpu: int) -> GroupRq:
        g = self.rqs.get((group, cpu))
        if g is None:
            g = self.rqs[(group, cpu)] = GroupRq(group, shares)
            self.policy.shares_active = True  # the policy's shortcuts end here
            self.by_cpu.setdefault(cpu, []).append(g)
            self.tg_load.setdefault(group, 0)
        return g

    def join(self, rq: RunQueue, task: Task, now: int) -> None:
        """enqueue_entity(): the task's average (decayed over its sleep) attached here, the
        group's average folded, its load added and the entity reweighted.  Sets the joining
        task's new weight; the caller places it and adds it to the queue."""
        avg = self.avgs.get(task.tid)
        if avg is None:
            avg = self.avgs[task.tid] = TaskAvg(now)
        avg.settle(now)
        g = self._grq(task.group, task.group_shares, rq.cpu)
        if avg.cpu != rq.cpu:  # migrated: detach from the old CPU's group runqueue
            if avg.cpu >= 0:
                self.rqs[(task.group, avg.cpu)].attached.remove(task)
            g.attached.append(task)
            avg.cpu = rq.cpu
        avg.runnable = True
        self._update_tg(g, now)
        g.load += nice_to_weight(task.nice)
        g.tasks.append(task)
        self._reweight(g, rq, now, task)

    def leave(self, rq: RunQueue, task: Task, now: int) -> None:
        """dequeue_entity(): call after ``task`` left the policy's queue and ``rq.load``."""
        avg = self.avgs[task.tid]
        g = self.rqs[(task.group, rq.cpu)]
        self._update_tg(g, now)  # its runnable time up to now counts
        avg.settle(now)
        avg.runnable = False
        g.load -= nice_to_weight(task.nice)
        g.tasks.remove(task)
        if task.state == DONE:
            # task_dead_fair() -> remove_entity_load_avg(): an exited task's average leaves the
            # group runqueue it sat on (it no longer counts in cpu_load() or tg->load_avg)
            g.attached.remove(task)
            del self.avgs[task.tid]
        self._reweight(g, rq, now, None)

    def refresh(self, rq: RunQueue, now: int) -> None:
        """The tick's update_load_avg() and update_cfs_group(), here at the CPU's periodic
        balance pass: every group runqueue of this CPU folds its average and reweights."""
        for (_group, cpu), g in self.rqs.items():
            if cpu == rq.cpu:
                self._update_tg(g, now)
                if g.tasks:
                    self._reweight(g, rq, now, None)

    def cpu_load(self, rq: RunQueue, now: int, without: Task | None) -> int:
        """cpu_load() / cpu_load_without(): the root runqueue's PELT load, the wake-up slow
        path's measure.  A group entity's average is its weight x its runnable fraction, taken
        as the sum of its attached tasks' fractions (at most 1: update_tg_cfs_load() adds a
        migrating task's runnable sum to the entity's and caps it at the divider); tasks of no
        group count at their weight (their averages are not kept).  ``without``, attached
        here, has its task_h_load() taken off: its part of its entity's average."""
        grouped = 0
        load = 0.0
        avgs = self.avgs
        for g in self.by_cpu.get(rq.cpu, ()):
            for t in g.tasks:
                grouped += t.weight
            frac = 0.0
            own = mine = 0.0
            for t in g.attached:
                ratio = avgs[t.tid].at(now)
                frac += ratio
                own += nice_to_weight(t.nice) * ratio
                if t is without:
                    mine = nice_to_weight(t.nice) * ratio
            se_load = g.se_weight * min(1.0, frac)
            load += se_load
            if mine > 0.0:  # task_h_load(): its load x the entity's / the group runqueue's
                load -= se_load * mine / own
        return max(0, int(load) + rq.load - grouped)

    def task_h_load(self, task: Task, now: int) -> int:
        """task_h_load(): the task's part of its group entity's average on the CPU it is
        attached to (its average x the entity's / the group runqueue's)."""
        avg = self.avgs.get(task.tid)
        if avg is None or avg.cpu < 0:
            return task.weight  # not yet queued anywhere: a new task is at full load
        g = self.rqs[(task.group, avg.cpu)]
        frac = own = 0.0
        for t in g.attached:
            ratio = self.avgs[t.tid].at(now)
            frac += ratio
            own += nice_to_weight(t.nice) * ratio
        if own <= 0.0:
            return 0
        return int(g.se_weight * min(1.0, frac) * nice_to_weight(task.nice) * avg.at(now) / own)

    def _load_avg(self, g: GroupRq, now: int) -> int:
        avgs = self.avgs
        return int(sum(nice_to_weight(t.nice) * avgs[t.tid].at(now) for t in g.attached))

    def _update_tg(self, g: GroupRq, now: int) -> None:
        """update_tg_load_avg(): fold the group runqueue's average into tg->load_avg when it
        moved by more than 1/64 of what was folded."""
        delta = self._load_avg(g, now) - g.contrib
        if abs(delta) > g.contrib // 64:
            self.tg_load[g.group] += delta
            g.contrib += delta

    def _reweight(self, g: GroupRq, rq: RunQueue, now: int, joining: Task | None) -> None:
        """calc_group_shares() and reweight_entity(): the entity's weight from this CPU's load
        (its instantaneous weight or its average, the larger) against tg->load_avg; each task
        takes its part of it."""
        load = max(g.load, self._load_avg(g, now))
        g.se_weight = group_entity_weight(g.shares, load, self.tg_load[g.group] - g.contrib)
        if not g.tasks:
            return
        commit_running_member(self.eng, rq, g.tasks)
        for t in g.tasks:
            weight = max(MIN_SHARES, g.se_weight * nice_to_weight(t.nice) // g.load)
            t.entity_weight = g.se_weight
            if t is joining:
                t.weight = weight  # not queued yet: the policy places it with this weight
            elif weight != t.weight:
                self.policy.reweight(rq, t, weight)

"""3.x's windowed group shares (CONFIG_FAIR_GROUP_SCHED, 2.6.38 - 3.7), for flattened cgroups.

The model keeps one flat runqueue per CPU: a task of a cgroup with cpu.shares stands for its
group's entity on that CPU.  The kernel gives that entity (tg->se[cpu]) the weight
calc_cfs_shares() computes: the group's shares x the group's load on this CPU / the group's
load summed over all CPUs, where the other CPUs' loads are their averages over the shares
window (sysctl_sched_shares_window, 10 ms) as last folded into tg->load_weight, and this CPU's is
its load as of now.  update_cfs_load() keeps each per-CPU average (load x time summed over a
period halved whenever it passes the window); update_cfs_rq_load_contribution() folds it into
tg->load_weight when it moved by more than an eighth (or at a global update, from the periodic
balancer's update_shares()); reweight_entity() then sets the entity's weight.  A task's weight
here is its share of its group's entity: the entity's weight x its own weight / the group's load
on the CPU.  The tick's update_entity_shares_tick() refreshes a group whose tasks ran here for
more than a window since its last update_cfs_load() (load_unacc_exec_time, the run time
__update_curr() adds up); the model skips ticks, so the check is made at the next enqueue or
dequeue of a group task on that CPU and at its periodic balance pass.  Checked against the
stored text of 3.0's kernel/sched_fair.c and a 3.4-based kernel/sched/fair.c (identical in these
functions): update_cfs_rq_load_contribution(), update_cfs_load(), calc_cfs_shares() (3.4:
calc_tg_weight()), update_entity_shares_tick(), update_cfs_shares(), reweight_entity(),
enqueue_entity()/dequeue_entity()'s order, update_shares_cpu() and update_shares().
"""

from typing import TYPE_CHECKING

from ..program import RUNNING, Task, nice_to_weight
from .base import RunQueue

if TYPE_CHECKING:  # annotations only
    from ..engine import Engine

MIN_SHARES = 2  # the kernel's floor on a group entity's weight


class GroupCpu:
    """A group's cfs_rq on one CPU: its runnable tasks, their load and its windowed average."""

    __slots__ = ("group", "shares", "tasks", "load", "load_avg", "load_period", "load_stamp",
                 "load_last", "contribution", "se_weight", "exec_mark")

    def __init__(self, group: str, shares: int, now: int):
        self.group = group
        self.shares = shares
        self.tasks: list[Task] = []
        self.load = 0  # cfs_rq->load.weight: the group's runnable tasks' own weights
        self.load_avg = 0  # load x ns summed over load_period
        self.load_period = 0
        self.load_stamp = now
        self.load_last = now
        self.contribution = 0  # what this CPU adds to tg->load_weight
        self.se_weight = shares
        # its tasks' summed run time at its last update_cfs_load(): the run time since is
        # cfs_rq->load_unacc_exec_time
        self.exec_mark = 0


class GroupShares:
    """The per-CPU group entities of every cgroup with shares, and each group's tg->load_weight."""

    def __init__(self, eng: "Engine", window_ns: int):
        self.eng = eng
        self.window = window_ns
        self.cpus: dict[tuple[str, int], GroupCpu] = {}
        self.on_cpu: dict[int, list[GroupCpu]] = {}  # the same cfs_rqs, by CPU
        self.tg_load: dict[str, int] = {}

    def _cfs_rq(self, task: Task, cpu: int, now: int) -> GroupCpu:
        key = (task.group, cpu)
        g = self.cpus.get(key)
        if g is None:
            g = self.cpus[key] = GroupCpu(task.group, task.group_shares, now)
            self.on_cpu.setdefault(cpu, []).append(g)
            self.tg_load.setdefault(task.group, 0)
        return g

    def join(self, rq: RunQueue, task: Task, now: int) -> None:
        """enqueue_entity() into the group's cfs_rq: the average up to now at the old load, the
        task's load added, the entity reweighted (the task's weight added to ``rq.load``)."""
        self._ticks(rq, now)
        g = self._cfs_rq(task, rq.cpu, now)
        self._update_load(g, now, False)
        g.load += nice_to_weight(task.nice)
        g.tasks.append(task)
        g.exec_mark = _run_time(g)
        task.weight = 0  # not in rq.load yet: _reweight adds its new weight
        self._reweight(g, rq)

    def leave(self, rq: RunQueue, task: Task, now: int) -> None:
        """dequeue_entity(): call after ``task``'s weight left ``rq.load``."""
        self._ticks(rq, now)
        g = self.cpus[(task.group, rq.cpu)]
        self._update_load(g, now, False)
        g.load -= nice_to_weight(task.nice)
        for i in range(len(g.tasks)):
            if g.tasks[i] is task:
                g.tasks.pop(i)
                break
        g.exec_mark = _run_time(g)
        self._reweight(g, rq)

    def global_update(self, rq: RunQueue, now: int) -> None:
        """update_shares(cpu) from rebalance_domains(): every group's cfs_rq on this CPU folds
        its average into tg->load_weight and its entity is reweighted."""
        self._ticks(rq, now)
        for g in self.on_cpu.get(rq.cpu, ()):
            self._update_load(g, now, True)
            g.exec_mark = _run_time(g)
            self._reweight(g, rq)

    def _ticks(self, rq: RunQueue, now: int) -> None:
        """update_entity_shares_tick(), as of now: a group whose tasks ran on this CPU for more
        than a window since its last update_cfs_load() updates its load and its entity."""
        cpu = self.eng.cpus[rq.cpu]
        curr = cpu.curr
        if curr is None or curr.state != RUNNING or not curr.group_shares:
            return  # only a running group task's time can have grown since the last check
        self.eng.account(cpu)  # its run time up to now
        for g in self.on_cpu.get(rq.cpu, ()):
            if g.tasks and _run_time(g) - g.exec_mark > self.window:
                self._update_load(g, now, False)
                g.exec_mark = _run_time(g)
                self._reweight(g, rq)

    def _update_load(self, g: GroupCpu, now: int, global_update: bool) -> None:
        """update_cfs_load(): load x time since the last stamp; history truncated after four
        idle windows; the period halved (with the sum) while longer than the window."""
        window = self.window
        delta = now - g.load_stamp
        if g.load_stamp > g.load_last and now - g.load_last > 4 * window:
            g.load_period = 0
            g.load_avg = 0
            delta = window - 1
        g.load_stamp = now
        g.load_period += delta
        if g.load:
            g.load_last = now
            g.load_avg += delta * g.load
        if global_update or g.load_period > window or not g.load_period:
            self._update_contribution(g, global_update)
        while g.load_period > window:
            g.load_period //= 2
            g.load_avg //= 2

    def _update_contribution(self, g: GroupCpu, global_update: bool) -> None:
        """update_cfs_rq_load_contribution(): fold the average into tg->load_weight when it
        moved by more than an eighth of what was folded (always at a global update)."""
        change = g.load_avg // (g.load_period + 1) - g.contribution
        if global_update or abs(change) > g.contribution // 8:
            self.tg_load[g.group] += change
            g.contribution += change

    def _reweight(self, g: GroupCpu, rq: RunQueue) -> None:
        """calc_cfs_shares() and reweight_entity(): the entity's weight from this CPU's load
        now against the group's folded loads elsewhere; each task takes its part of it."""
        load = g.load
        g.se_weight = group_entity_weight(g.shares, load, self.tg_load[g.group] - g.contribution)
        if not g.tasks:
            return
        commit_running_member(self.eng, rq, g.tasks)
        for t in g.tasks:
            weight = max(MIN_SHARES, g.se_weight * nice_to_weight(t.nice) // load)
            rq.load += weight - t.weight
            t.weight = weight
            t.entity_weight = g.se_weight


def group_entity_weight(shares: int, load: int, load_elsewhere: int) -> int:
    """The arithmetic calc_cfs_shares() (3.x) and calc_group_shares() (6.x) share: the group's
    shares times this CPU's load over the group's load everywhere, clamped to
    [MIN_SHARES, shares]."""
    total = load_elsewhere + load
    weight = shares * load // total if total > 0 else shares * load
    return min(shares, max(MIN_SHARES, weight))


def commit_running_member(eng: "Engine", rq: RunQueue, tasks) -> None:
    """reweight_entity() commits the running time first: a group member running on this CPU
    is accounted at its old weight before the group's entity weight changes."""
    cpu = eng.cpus[rq.cpu]
    curr = cpu.curr
    if curr is not None and curr.state == RUNNING and curr in tasks:
        eng.account(cpu)


def _run_time(g: GroupCpu) -> int:
    """The summed run time of the group's tasks runnable on this CPU."""
    return sum(t.sum_exec for t in g.tasks)

"""3.x's hierarchical group scheduling (CONFIG_FAIR_GROUP_SCHED) for CFS: one level of groups.

With the tunable ``group_hierarchy`` (and 3.x's windowed shares, cfs_shares.py), a task of a
cgroup with cpu.shares is no longer queued in its CPU's root queue with a share of its group's
weight (the flattening): it is queued in its group's own cfs_rq on that CPU, at its own weight
(nice 0: 1024), and the root queue holds one group entity per (group, CPU), tg->se[cpu], whose
weight is the windowed shares' calc_cfs_shares() weight.  Tasks of no group stay at the root.

Followed, in the stored text of 3.0's kernel/sched_fair.c (CyanogenMod/
android_kernel_samsung_smdk4412 @4b55028b):
- enqueue_task_fair(): for_each_sched_entity, stopping at an entity already on_rq; the task is
  placed in its group's cfs_rq, the parent levels are enqueued with ENQUEUE_WAKEUP, so a group
  entity that was not on the root queue is placed by place_entity(cfs_rq, se, 0): the root's
  min_vruntime less half a latency (GENTLE_FAIR_SLEEPERS), never backwards;
- dequeue_task_fair(): each level dequeued while the cfs_rq below became empty (its
  load.weight 0); parent levels with DEQUEUE_SLEEP, so a group entity keeps its vruntime
  (it never migrates: no normalisation against min_vruntime); a sleeping task keeps its
  absolute vruntime until task_waking_fair() makes it relative to its group's queue there;
- __update_curr() per level (entity_tick() and every enqueue/dequeue call update_curr() on
  their level): the task's vruntime advances at its own weight, the group entity's at the
  entity's weight, each entity's sum_exec_runtime grows with the run time;
- sched_slice(): the period from the level's own nr_running, then slice x se weight / cfs_rq
  load at each level up to the root; check_preempt_tick() for every level from task_tick_fair()
  (its first test, the one the flat model has: the time since set_next_entity() past the
  slice); pick_next_task_fair(): pick_next_entity() + set_next_entity() from the root down
  (set_next_entity() restarts prev_sum_exec_runtime at every level at every pick);
  put_prev_task_fair(): put_prev_entity() at every level;
- check_preempt_wakeup(): find_matching_se() walks the running task's and the wakee's entities
  up to the level where they share a cfs_rq and wakeup_preempt_entity() compares them there,
  the granularity in the wakee-side entity's units (wakeup_gran());
- yield_task_fair(): set_skip_buddy() marks the entity at every level.
With ``cfs_buddies`` each group queue also keeps its skip / last / next buddies and
dequeue_task_fair()'s next buddy on the parent of a sleeping task is set (cfs_buddies.py).
check_preempt_tick()'s second test (the running entity's vruntime lead over its level's
leftmost beyond its slice, after sched_min_granularity of running) with ``tick_lead_preempt``,
as in the flat model (cfs.lead_preempt_at()); 3.0's text above and a 3.4-based
kernel/sched/fair.c both have it.
"""

from typing import TYPE_CHECKING, Any

from ..program import Task, nice_to_weight
from .base import NICE_0, NO_SLICE_END, RunQueue
from .cfs import advanced_min_vruntime, lead_preempt_at, lead_preempts
from .cfs_buddies import Buddies
from .taskheap import Heap, Node, push, remove

if TYPE_CHECKING:  # annotations only
    from ..engine import Engine
    from .cfs import CfsPolicy


class GroupRq:
    """A group's cfs_rq on one CPU (its queued tasks, running task and min_vruntime) and the
    group's entity in that CPU's root queue (tg->se[cpu])."""

    __slots__ = ("data", "curr", "min_vruntime", "entity", "on_rq", "shares", "rank", "bud")

    def __init__(self, entity: Task, rank: int):
        self.data: Heap = Heap()  # the queued tasks, by (vruntime, order)
        self.curr: Task | None = None  # the group's task running on this CPU
        self.min_vruntime = 0
        self.entity = entity  # the group entity: vruntime, sum_exec, key node, skip
        self.on_rq = False  # the entity is queued at the root or runs there
        self.shares: Any = None  # the windowed shares' GroupCpu: load, se_weight
        self.rank = rank  # the group's creation rank (the balancer's task_groups order)
        self.bud = Buddies()  # this cfs_rq's skip / last / next (with cfs_buddies only)


class GroupHierarchy:
    """The group cfs_rqs and entities of a CfsPolicy run with ``group_hierarchy``."""

    def __init__(self, policy: "CfsPolicy", eng: "Engine"):
        self.pol = policy
        self.eng = eng
        self.queues: dict[tuple[str, int], GroupRq] = {}
        self.by_entity: dict[int, GroupRq] = {}  # keyed by the entity's (negative) tid
        self.by_cpu: dict[int, list[GroupRq]] = {}
        self.ranks: dict[str, int] = {}

    # ------------------------------------------------------------------ lookups
    def gq(self, task: Task, cpu: int) -> GroupRq:
        """The group cfs_rq of ``task``'s group on ``cpu`` (made on first use, as the kernel's
        per-CPU cfs_rqs exist from the group's creation on)."""
        key = (task.group, cpu)
        gq = self.queues.get(key)
        if gq is None:
            # from now on a group task may run, whose vruntime does not grow at task.weight
            # (its share of the group's entity): the engine's inline copy of
            # CfsPolicy.account() is switched off, so that account() runs for every event
            self.eng.vruntime_only = False
            rank = self.ranks.setdefault(task.group, len(self.ranks))
            tid = -1 - len(self.queues)
            gq = GroupRq(Task(tid, f"{task.group}/cpu{cpu}", [], group=task.group), rank)
            self.queues[key] = gq
            self.by_entity[tid] = gq
            self.by_cpu.setdefault(cpu, []).append(gq)
        return gq

    def entity_weight(self, gq: GroupRq, task: Task) -> int:
        """The group entity's weight: the shares model's for this (group, CPU)."""
        g = gq.shares
        return g.se_weight if g is not None else task.group_shares

    def root_curr(self, rq: RunQueue, curr: Task) -> Task:
        """The root queue's running entity while ``curr``, a group task, runs."""
        return self.queues[(curr.group, rq.cpu)].entity

    # ------------------------------------------------------------------ queueing
    def enqueue(self, rq: RunQueue, task: Task, how, now: int) -> None:
        """enqueue_task_fair(): the task into its group's cfs_rq, then the group entity into
        the root queue unless it is already there (queued or running)."""
        pol = self.pol
        pol._update_min(rq)
        gq = self.gq(task, rq.cpu)
        _update_min(gq)
        if how == "migrate":
            task.vruntime += gq.min_vruntime
        elif how != "fork":  # wakeup: placed in its own group's queue
            task.vruntime = max(task.vruntime + gq.min_vruntime,
                                gq.min_vruntime - pol.sleeper_credit)
        pol.shares.join(rq, task, now)  # its h_load-like share into rq.load, the entity reweighed
        if gq.shares is None:
            gq.shares = pol.shares.cpus[(task.group, rq.cpu)]
        self._insert(gq, task)
        if not gq.on_rq:  # a parent level enqueued with ENQUEUE_WAKEUP: place_entity(se, 0)
            ent = gq.entity
            ent.vruntime = max(ent.vruntime, rq.min_vruntime - pol.sleeper_credit)
            gq.on_rq = True
            pol._insert(rq, ent)

    def task_waking(self, rq: RunQueue, task: Task) -> None:
        """task_waking_fair() of a group task: relative to its group's queue on the CPU it
        slept on, at that queue's min_vruntime now (CfsPolicy.task_waking())."""
        gq = self.queues[(task.group, rq.cpu)]  # it ran there, so its queue exists
        _update_min(gq)
        task.vruntime -= gq.min_vruntime

    def dequeue(self, rq: RunQueue, task: Task, now: int) -> None:
        """A queued group task leaves (the balancer migrates it); its entity leaves the root
        when the group has nothing runnable left here."""
        pol = self.pol
        pol._update_min(rq)
        gq = self.queues[(task.group, rq.cpu)]
        _update_min(gq)
        remove(gq.data, task.key)
        if pol.buddies is not None:
            pol.buddies.clear_up(rq, task)  # dequeue_entity()'s clear_buddies()
        rq.load -= task.weight
        task.vruntime -= gq.min_vruntime
        pol.shares.leave(rq, task, now)
        if gq.curr is None and not gq.data:
            self._entity_leaves(rq, gq, queued=True)

    def curr_leaves(self, rq: RunQueue, task: Task, now: int) -> None:
        """The running group task blocks or exits: dequeue_task_fair() with DEQUEUE_SLEEP."""
        pol = self.pol
        pol._update_min(rq)
        gq = self.queues[(task.group, rq.cpu)]
        _update_min(gq)
        rq.curr = None
        rq.load -= task.weight
        gq.curr = None  # its vruntime stays absolute until task_waking() (DEQUEUE_SLEEP)
        pol.shares.leave(rq, task, now)
        if pol.buddies is not None:  # the parent becomes the next buddy if it stays
            pol.buddies.sleeps(rq, task, bool(gq.data))
        if gq.data:  # the entity stays: put_prev_entity() puts it back in the root tree
            pol._insert(rq, gq.entity)
        else:
            self._entity_leaves(rq, gq, queued=False)

    def _entity_leaves(self, rq: RunQueue, gq: GroupRq, queued: bool) -> None:
        ent = gq.entity
        if queued:
            self.pol._remove(rq, ent)
        ent.skip = False  # dequeue_entity()'s clear_buddies()
        if self.pol.buddies is not None:
            self.pol.buddies.clear_group_entity(rq, gq)
        gq.on_rq = False

    def put_prev(self, rq: RunQueue, task: Task, now: int) -> None:
        """put_prev_task_fair(): the task back in its group's tree, the entity in the root's;
        a sched_yield() marks both as skip buddies (set_skip_buddy())."""
        pol = self.pol
        pol._update_min(rq)
        gq = self.queues[(task.group, rq.cpu)]
        _update_min(gq)
        rq.curr = None
        gq.curr = None
        if task.yield_pending:
            task.yield_pending = False
            if pol.yield_mode == "skip" and pol.buddies is not None:
                pol.buddies.set_skip(rq, task)
            elif pol.yield_mode == "skip":
                task.skip = True
                gq.entity.skip = True
        self._insert(gq, task)
        pol._insert(rq, gq.entity)

    def descend(self, rq: RunQueue, ent: Task) -> Task:
        """pick_next_task_fair() below the root: ``ent`` (a group entity, just taken off the
        root tree) becomes the root's current entity and its group's pick runs."""
        gq = self.by_entity[ent.tid]
        ent.prev_sum_exec = ent.sum_exec  # set_next_entity()
        buddies = self.pol.buddies
        task = _pick_skipping(gq.data) if buddies is None else buddies.pick(gq.data, gq.bud)
        remove(gq.data, task.key)
        _update_min(gq)
        gq.curr = task
        return task

    def _insert(self, gq: GroupRq, task: Task) -> None:
        node: Node | None = task.key
        if node is None:
            node = task.key = Node(task)
        pol = self.pol
        pol.order += 1
        node.key = task.vruntime
        node.order = pol.order
        push(gq.data, node)

    # ------------------------------------------------------------------ time and preemption
    def account(self, rq: RunQueue, task: Task, elapsed: int) -> None:
        """__update_curr() at each level: the task at its own weight in its group's queue, the
        group entity at its weight in the root queue."""
        own = nice_to_weight(task.nice)
        task.vruntime += elapsed if own == NICE_0 else elapsed * NICE_0 // own
        gq = self.queues[(task.group, rq.cpu)]
        ent = gq.entity
        ent.sum_exec += elapsed
        weight = self.entity_weight(gq, task)
        ent.vruntime += elapsed if weight == NICE_0 else elapsed * NICE_0 // weight

    def _period(self, nr: int) -> int:
        pol = self.pol
        return pol.latency if nr <= pol.nr_latency else pol.min_gran * nr

    def _levels(self, rq: RunQueue, task: Task) -> list[tuple[int, int, int, int]]:
        """(slice, run time since picked, vruntime lead over the level's leftmost, weight) for
        each level of the running ``task`` where another entity waits: sched_slice() up the
        hierarchy, as check_preempt_tick() takes it; the lead grows by NICE_0 / weight per ns
        run (the entity's vruntime at that level)."""
        levels = []
        if not task.group_shares:
            if rq.data:
                weight = task.weight
                slice_ = self._period(len(rq.data) + 1) * weight // max(rq.load, weight)
                levels.append((slice_, task.sum_exec - task.prev_sum_exec,
                               task.vruntime - rq.data[0].key, weight))
            return levels
        gq = self.queues[(task.group, rq.cpu)]
        se_weight = self.entity_weight(gq, task)
        root_load = max(rq.load, se_weight)
        if gq.data:
            own = nice_to_weight(task.nice)
            slice_ = self._period(len(gq.data) + 1) * own // max(gq.shares.load, own)
            levels.append((slice_ * se_weight // root_load, task.sum_exec - task.prev_sum_exec,
                           task.vruntime - gq.data[0].key, own))
        if rq.data:
            ent = gq.entity
            slice_ = self._period(len(rq.data) + 1) * se_weight // root_load
            levels.append((slice_, ent.sum_exec - ent.prev_sum_exec,
                           ent.vruntime - rq.data[0].key, se_weight))
        return levels

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int:
        """The earliest level's slice end, or with ``tick_lead_preempt`` the earlier instant
        its second test holds (cfs.lead_preempt_at())."""
        levels = self._levels(rq, task)
        if not levels:
            return NO_SLICE_END
        pol = self.pol
        at = NO_SLICE_END
        for slice_, ran, lead, weight in levels:
            end = start + slice_ - ran if slice_ > ran else start
            if pol.lead_preempt and slice_ > ran:
                lead_at = lead_preempt_at(start, ran, slice_, lead, weight, pol.min_gran)
                end = lead_at if lead_at < end else end
            at = end if at == NO_SLICE_END or end < at else at
        return at

    def tick_preempt(self, rq: RunQueue, task: Task) -> bool:
        """entity_tick() at each level: any level's slice used up reschedules (and with
        buddies clears that level's running entity's, check_preempt_tick()); with
        ``tick_lead_preempt`` so does a level's lead past its slice (no buddy cleared)."""
        levels = self._levels(rq, task)
        used = [ran >= slice_ for slice_, ran, _lead, _weight in levels]
        if any(used) and self.pol.buddies is not None:
            self.pol.buddies.slice_used(rq, task, self._fired(rq, task, used))
        if any(used) or not self.pol.lead_preempt:
            return any(used)
        min_gran = self.pol.min_gran
        return any(lead_preempts(ran, slice_, lead, min_gran)
                   for slice_, ran, lead, _weight in levels)

    def _fired(self, rq: RunQueue, task: Task, used: list[bool]) -> tuple[bool, bool]:
        """(the task's own level, the root) from _levels()'s list, which holds a level
        only where another entity waits."""
        if not task.group_shares:
            return used[0], False
        at = 0
        own = False
        if self.queues[(task.group, rq.cpu)].data:
            own = used[0]
            at = 1
        return own, bool(rq.data) and used[at]

    def wakeup_preempts(self, rq: RunQueue, curr: Task, task: Task) -> bool:
        """check_preempt_wakeup(): find_matching_se(), then wakeup_preempt_entity() between the
        two entities that share a cfs_rq."""
        pol = self.pol
        if curr.group_shares and task.group_shares and curr.group == task.group:
            se_vruntime = curr.vruntime  # both in the group's cfs_rq on this CPU
            pse_vruntime = task.vruntime
            weight = nice_to_weight(task.nice)
        else:
            se_vruntime = (self.root_curr(rq, curr).vruntime if curr.group_shares
                           else curr.vruntime)
            if task.group_shares:
                gq = self.queues[(task.group, rq.cpu)]
                pse_vruntime = gq.entity.vruntime
                weight = self.entity_weight(gq, task)
            else:
                pse_vruntime = task.vruntime
                weight = task.weight
        gran = pol.wakeup_gran
        if pol.gran_by_wakee and weight != NICE_0:
            gran = gran * NICE_0 // weight
        return se_vruntime - pse_vruntime > gran

    # ------------------------------------------------------------------ fork, yield, balance
    def task_fork(self, rq: RunQueue, parent: Task, child: Task, same_cpu) -> None:
        """task_fork_fair() for a group task: placed in its group's cfs_rq on the target CPU,
        START_DEBIT by sched_vslice() (the slice a new entity would get, up the hierarchy)."""
        pol = self.pol
        pol._update_min(rq)
        gq = self.gq(child, rq.cpu)
        _update_min(gq)
        own = nice_to_weight(child.nice)
        group_load = gq.shares.load if gq.shares is not None else 0
        nr = len(gq.data) + (gq.curr is not None) + 1
        slice_ = self._period(nr) * own // (group_load + own)
        se_weight = self.entity_weight(gq, child)
        slice_ = slice_ * se_weight // max(rq.load, se_weight)
        vslice = slice_ if own == NICE_0 else slice_ * NICE_0 // own
        same_queue = same_cpu and parent.group == child.group and bool(parent.group_shares)
        base = parent.vruntime if same_queue else gq.min_vruntime
        child.vruntime = max(base, gq.min_vruntime + vslice)
        if (same_queue and pol.child_runs_first(parent, child)
                and parent.vruntime < child.vruntime):
            parent.vruntime, child.vruntime = child.vruntime, parent.vruntime

    def yield_hands_over(self, rq: RunQueue, task: Task) -> bool:
        """After sched_yield() by a group task: with skip buddies (3.x) schedule() picks
        another entity whenever one is queued at either level; with requeue semantics the
        yielder hands over when a queued entity's vruntime is at most its own at a level."""
        gq = self.queues[(task.group, rq.cpu)]
        if self.pol.yield_mode in ("compat", "skip"):
            return bool(gq.data or rq.data)
        if gq.data and gq.data[0].key <= task.vruntime:
            return True
        return bool(rq.data) and rq.data[0].key <= gq.entity.vruntime

    def queued_tasks(self, rq: RunQueue) -> list[Task]:
        """3.0's load_balance_fair() walks task_groups, newest group first (sched_create_group()
        adds at the head), the root group last: each group's queued tasks here, right to left,
        then the root's own."""
        out: list[Task] = []
        for gq in sorted(self.by_cpu.get(rq.cpu, ()), key=_newest_first):
            out.extend(_right_to_left(gq.data))
        out.extend(t for t in _right_to_left(rq.data) if t.tid >= 0)
        return out


def _newest_first(gq: GroupRq) -> int:
    return -gq.rank


def _right_to_left(data: Heap) -> list[Task]:
    queued = [(node.key, node.order, node.task) for node in data]
    queued.sort(reverse=True)  # (vruntime, order) is unique: tasks are never compared
    return [entry[2] for entry in queued]


def _update_min(gq: GroupRq) -> None:
    """update_min_vruntime() of a group cfs_rq (CfsPolicy._update_min() at the root)."""
    gq.min_vruntime = advanced_min_vruntime(gq.min_vruntime, gq.data, gq.curr)


def _pick_skipping(data: Heap) -> Task:
    """The leftmost entity, or the second least when the leftmost is the skip buddy (the flat
    model's pick_next rule, at one level; ``data`` is not empty)."""
    task = data[0].task
    if task.skip:
        task.skip = False
        size = len(data)
        if size > 1:
            second = data[1]
            if size > 2:
                other = data[2]
                if other.key < second.key or (
                        other.key == second.key and other.order < second.order):
                    second = other
            task = second.task
    return task

"""6.6's group scheduling (CONFIG_FAIR_GROUP_SCHED) for EEVDF: one level of group entities.

With `group_hierarchy` on, a task of a cgroup with cpu.shares (Task.group_shares) is not queued
in its CPU's root queue: it is queued in its group's own cfs_rq on that CPU, and the root
queue holds the group's entity there (tg->se[cpu]) while that cfs_rq has anything runnable.
Tasks of no group stay in the root queue exactly as without the hierarchy.

Each level keeps what 6.6 keeps per cfs_rq: avg_vruntime / avg_load (here the vsum / wsum of a
RunQueue: the root one, or one per (group, CPU)), min_vruntime, its current entity (curr) and
the RUN_TO_PARITY stash of the deadline its curr was picked with (RunQueue.seq).  A group
entity is a Task object that never runs (tid GROUP_SE_TID): its vruntime, deadline and weight
are the entity's, its vruntime holds its lag while it is off the root queue (as a task's does),
and its `data` is its GroupLevel.  Inside a group cfs_rq a task weighs its own nice weight
(nice 0: 1024); Task.weight stays the flattened, task_h_load-like weight that rq.load and the
balancer see (the group shares model sets it: entity weight x own / the group's load).

Followed from a stored 6.6-era kernel/sched/fair.c (EEVDF with sysctl_sched_base_slice,
pick_eevdf() with the RUN_TO_PARITY `curr->vlag == curr->deadline` stash, the pre-6.7
reweight_entity()), per level:
- enqueue_task_fair(): the task's entity is placed in its group cfs_rq; the walk up stops at
  an entity already on_rq, so the group entity is placed at the root only when its cfs_rq was
  empty (update_cfs_group() first: reweighted off the queue, its lag rescaled), never with
  ENQUEUE_INITIAL (the walk sets ENQUEUE_WAKEUP for the parents);
- dequeue_task_fair(): the task leaves its cfs_rq (update_entity_lag()); the group entity
  leaves the root (its own lag stored) only when its cfs_rq has nothing left;
- update_curr() at each level: the running task's vruntime advances at its own weight, the
  group entity's at the entity's weight; update_deadline() renews a level's deadline when
  its vruntime passes it, a resched when that level has others queued;
- pick_next_task_fair(): pick_eevdf() from the root down, each level with its curr: RUN_TO_
  PARITY keeps a curr whose deadline is the one it was picked with; set_next_entity() (which
  sets the stash) runs only at the levels whose entity changes (prev == p keeps it);
- check_preempt_wakeup(): find_matching_se() walks both entities up to the level where they
  share a cfs_rq; preempt when pick_eevdf() there returns the wakee's entity;
- reweight_entity() (pre-6.7): a queued or running entity keeps its vruntime, its remaining
  deadline rescaled by old / new; an entity off the queue has its lag rescaled;
- yield_task_fair(): the task's own level only.
Placement at every level is 6.6's place_entity() (eevdf.py): the average plus the kept lag
inflated by PLACE_LAG's (W + w) / W at that level's weights (none kept on an empty level), the
lag clamped on leaving at entity_lag()'s max(2 x slice, TICK_NSEC), a full slice for a new
task (wake_up_new_task() places it again without ENQUEUE_INITIAL: eevdf.new_task_deadline()).
"""

from typing import TYPE_CHECKING

from ..program import BLOCKED, Task, nice_to_weight
from .base import NICE_0, NO_SLICE_END, RunQueue
from .eevdf import (
    GROUP_SE_TID,
    _rescale,
    delay,
    finish_delayed,
    new_task_deadline,
    place_lag,
    requeue_delayed,
)
from .taskheap import Heap, Node, push, remove

if TYPE_CHECKING:  # annotations only
    from .eevdf import EevdfPolicy

WAITING = 0  # Node.home, as eevdf.py numbers its two heaps
ELIGIBLE = 1


class GroupLevel:
    """A group's cfs_rq on one CPU and the group's entity in that CPU's root queue."""

    __slots__ = ("group", "cpu", "se", "cfs", "on_rq")

    def __init__(self, group: str, cpu: int, weight: int):
        self.group = group
        self.cpu = cpu
        self.se = Task(GROUP_SE_TID, f"{group}/se{cpu}", [], group=group)
        self.se.weight = weight
        self.se.data = self
        self.cfs = RunQueue(cpu)
        self.cfs.data = Heap()  # the eligible heap, as EevdfPolicy.new_rq() lays it out
        self.cfs.extra = Heap()  # the waiting heap
        self.on_rq = False  # the entity is in the root queue (queued or its curr)


def is_group_se(entity: Task) -> bool:
    return entity.tid == GROUP_SE_TID


def own_weight(task: Task) -> int:
    """A task's weight inside its group cfs_rq: its nice level's (the kernel's se->load)."""
    return nice_to_weight(task.nice)


class EevdfGroups:
    """The group levels of every CPU and the EEVDF operations on them."""

    def __init__(self, policy: "EevdfPolicy"):
        self.policy = policy
        self.levels: dict[tuple[str, int], GroupLevel] = {}
        self.by_cpu: dict[int, list[GroupLevel]] = {}

    def level(self, task: Task, cpu: int) -> GroupLevel:
        lvl = self.levels.get((task.group, cpu))
        if lvl is None:
            lvl = self.levels[(task.group, cpu)] = GroupLevel(task.group, cpu, task.group_shares)
            self.by_cpu.setdefault(cpu, []).append(lvl)
        return lvl

    # ------------------------------------------------------------ one group cfs_rq (own weights)
    def _vslice(self, task: Task) -> int:
        return self.policy.slice * NICE_0 // own_weight(task)

    def _avg(self, cfs: RunQueue) -> int:
        """avg_vruntime() of a group cfs_rq: its queued tasks and its curr, at own weights."""
        total = cfs.vsum
        weight = cfs.wsum
        curr = cfs.curr
        if curr is not None:
            w = own_weight(curr)
            total += curr.vruntime * w
            weight += w
        return total // weight if weight else cfs.min_vruntime

    def _add(self, cfs: RunQueue, task: Task) -> None:
        node: Node | None = task.key
        if node is None:
            node = task.key = Node(task)
        policy = self.policy
        policy.order += 1
        node.key = task.vruntime
        node.order = policy.order
        node.home = WAITING
        push(cfs.extra, node)
        w = own_weight(task)
        cfs.nr_queued += 1
        cfs.vsum += task.vruntime * w
        cfs.wsum += w

    def _take(self, cfs: RunQueue, task: Task) -> None:
        node: Node = task.key
        remove(cfs.data if node.home == ELIGIBLE else cfs.extra, node)
        w = own_weight(task)
        cfs.nr_queued -= 1
        cfs.vsum -= task.vruntime * w
        cfs.wsum -= w

    def _store_lag(self, cfs: RunQueue, task: Task) -> None:
        limit = self.policy._lag_limit(own_weight(task))
        task.vruntime = max(-limit, min(limit, task.vruntime - self._avg(cfs)))

    def _protected(self, cfs: RunQueue, curr: Task) -> bool:
        """RUN_TO_PARITY at a group level (as EevdfPolicy._protected() at the root)."""
        return (self.policy.run_to_parity and curr.deadline == cfs.seq
                and curr.vruntime < curr.deadline and curr.vruntime <= self._avg(cfs))

    def _place(self, cfs: RunQueue, task: Task, how: str) -> None:
        """6.6's place_entity() in a group cfs_rq, at the task's own weight."""
        if how == "fork":
            if task.deadline == 0:
                task.vruntime = self._avg(cfs)
                task.deadline = task.vruntime + new_task_deadline(self._vslice(task))
        else:  # the lag kept on leaving, inflated by PLACE_LAG at this level's weights
            curr = cfs.curr
            load = cfs.wsum + (own_weight(curr) if curr is not None else 0)
            lag = place_lag(task.vruntime, load, own_weight(task))
            task.vruntime = self._avg(cfs) + lag
            task.deadline = task.vruntime + self._vslice(task)
        self._add(cfs, task)

    def _pick_queued(self, cfs: RunQueue) -> Task | None:
        """pick_eevdf() among the queued tasks of a group cfs_rq (the curr already put back);
        a delayed task it meets completes its dequeue and the pick goes on (None: nothing
        runnable was left)."""
        while cfs.nr_queued:
            avg = self._avg(cfs)
            best = self.policy._earliest_eligible(cfs, avg)
            if best is None:
                waiting: Heap = cfs.extra
                best = waiting.nodes[0]
            task = best.task
            self._take(cfs, task)
            cfs.min_vruntime = avg
            if not task.sched_delayed:
                return task
            limit = self.policy._lag_limit(own_weight(task))
            finish_delayed(cfs, task, avg, limit, self.policy.delay_zero)
        return None

    # ------------------------------------------------------------ the policy's hooks
    def enqueue(self, rq: RunQueue, task: Task, how: str, now: int) -> None:
        """enqueue_task_fair() for a group task: its group's shares first (update_cfs_group()),
        the task placed in its cfs_rq, the group entity placed at the root if it was not
        there."""
        lvl = self.level(task, rq.cpu)
        policy = self.policy
        policy.hier_active = True
        if policy.shares is not None:
            policy.shares.join(rq, task, now)
        self.sync_weight(rq, lvl)
        if task.sched_delayed:  # woken while delayed in its cfs_rq: no placement
            requeue_delayed(self, lvl.cfs, task, policy.delay_zero)
        else:
            self._place(lvl.cfs, task, how)
        rq.load += task.weight
        if lvl.se.sched_delayed:  # enqueue_task_fair()'s walk up meets it on_rq and delayed
            requeue_delayed(policy, rq, lvl.se, policy.delay_zero)
        elif not lvl.on_rq:
            se = lvl.se
            curr = rq.curr
            load = rq.wsum + (curr.weight if curr is not None else 0)
            # the entity's kept lag, PLACE_LAG's inflation at the root's weights
            se.vruntime = policy._avg(rq) + place_lag(se.vruntime, load, se.weight)
            se.deadline = se.vruntime + policy._vslice(se)
            policy._add(rq, se)
            lvl.on_rq = True

    def dequeue(self, rq: RunQueue, task: Task, now: int) -> None:
        """A queued group task leaves (the balancer moves it)."""
        lvl = self.level(task, rq.cpu)
        self._take(lvl.cfs, task)
        rq.load -= task.weight
        self._store_lag(lvl.cfs, task)
        self._leave_root_if_empty(rq, lvl)
        self._shares_leave(rq, task, lvl, now)

    def curr_leaves(self, rq: RunQueue, task: Task, now: int) -> None:
        """The running group task blocks or exits."""
        lvl = self.level(task, rq.cpu)
        cfs = lvl.cfs
        if (self.policy.delay_dequeue and task.state == BLOCKED
                and task.vruntime > self._avg(cfs)):
            # not eligible in its cfs_rq: delayed there, so the walk up stops (its group
            # entity stays); the shares model, as the balancer, no longer counts it
            cfs.curr = None
            delay(self, cfs, task)
            rq.load -= task.weight
            self._shares_leave(rq, task, lvl, now)
            return
        self._store_lag(cfs, task)
        cfs.curr = None
        rq.load -= task.weight
        self._leave_root_if_empty(rq, lvl)
        self._shares_leave(rq, task, lvl, now)

    def _leave_root_if_empty(self, rq: RunQueue, lvl: GroupLevel) -> None:
        """dequeue_task_fair()'s walk up: the group entity leaves the root only when its
        cfs_rq has nothing runnable left (update_entity_lag() at the root)."""
        cfs = lvl.cfs
        if cfs.nr_queued or cfs.curr is not None or not lvl.on_rq:
            return
        policy = self.policy
        se = lvl.se
        if policy.delay_dequeue and se.vruntime > policy._avg(rq):
            # the walk up dequeues a parent with DEQUEUE_SLEEP: not eligible, it is delayed
            if rq.curr is se:
                rq.curr = None
                delay(policy, rq, se)
            else:
                se.sched_delayed = True
                rq.nr_delayed += 1
            return
        if rq.curr is se:
            policy._store_lag(rq, se)
            rq.curr = None
        else:
            policy._take(rq, se)
            policy._store_lag(rq, se)
        lvl.on_rq = False

    def _shares_leave(self, rq: RunQueue, task: Task, lvl: GroupLevel, now: int) -> None:
        shares = self.policy.shares
        if shares is not None:
            shares.leave(rq, task, now)
            self.sync_weight(rq, lvl)

    def refresh(self, rq: RunQueue) -> None:
        """After the shares' periodic update: every group entity of the CPU takes its weight."""
        for lvl in self.by_cpu.get(rq.cpu, ()):
            self.sync_weight(rq, lvl)

    def sync_weight(self, rq: RunQueue, lvl: GroupLevel) -> None:
        """reweight_entity() of the group entity to the shares model's weight for it (6.6:
        vruntime kept and the remaining deadline rescaled on the queue; the lag rescaled off
        it).  The running entity's time was committed by the shares model first."""
        shares = self.policy.shares
        if shares is None:
            return
        grq = shares.rqs.get((lvl.group, lvl.cpu))
        if grq is None:
            return
        se = lvl.se
        old = se.weight
        new = grq.se_weight
        if new == old:
            return
        policy = self.policy
        if not lvl.on_rq:
            se.vruntime = _rescale(se.vruntime, old, new)
            se.weight = new
            return
        queued = rq.curr is not se
        if queued:
            policy._take(rq, se)
        se.deadline = se.vruntime + _rescale(se.deadline - se.vruntime, old, new)
        se.weight = new
        if queued:
            policy._add(rq, se)

    def reweight_task(self, rq: RunQueue, task: Task, weight: int) -> None:
        """The shares model's new flattened weight for a group task: only what the balancer
        sees changes (rq.load, Task.weight); inside its cfs_rq the task keeps its own."""
        rq.load += weight - task.weight
        task.weight = weight

    def put_prev(self, rq: RunQueue, task: Task) -> None:
        """The running group task stays runnable: it stays its cfs_rq's curr (and its entity
        the root's) until the pick, which puts back only the levels whose entity changes."""
        if task.yield_pending:  # yield_task_fair(): the task's own level only
            task.yield_pending = False
            task.vruntime = task.deadline
            task.deadline = task.vruntime + self._vslice(task)

    def pick_next(self, rq: RunQueue) -> Task | None:
        """pick_next_task_fair(): pick_eevdf() at the root with its curr, then down the chosen
        group entity's cfs_rq with its curr; again from the root when a group's cfs_rq held
        only delayed tasks (pick_task_fair()'s `goto again`)."""
        while True:
            task = self._pick_from_root(rq)
            if task is not None or rq.nr_queued == 0 and rq.curr is None:
                return task

    def _pick_from_root(self, rq: RunQueue) -> Task | None:
        policy = self.policy
        prev = rq.curr  # a group entity (a plain task's put_prev() cleared it)
        if prev is not None:
            if rq.nr_queued == 0 or policy._protected(rq, prev):
                return self._pick_in_group(rq, prev.data)
            rq.curr = None
            policy._add(rq, prev)  # put_prev_entity() at the root
            self._put_back_curr(prev.data)
        if rq.nr_queued == 0:
            return None
        chosen = policy._pick_queued(rq)
        if chosen is None or not is_group_se(chosen):
            return chosen  # a task of no group: on_pick() makes it the root's curr
        rq.curr = chosen
        if chosen is not prev:
            rq.seq = chosen.deadline  # set_next_entity()'s stash
        return self._pick_in_group(rq, chosen.data)

    def _put_back_curr(self, lvl: GroupLevel) -> None:
        cfs = lvl.cfs
        curr = cfs.curr
        if curr is not None:
            cfs.curr = None
            self._add(cfs, curr)

    def _pick_in_group(self, rq: RunQueue, lvl: GroupLevel) -> Task | None:
        cfs = lvl.cfs
        prev = cfs.curr
        if prev is not None:
            if cfs.nr_queued == 0 or self._protected(cfs, prev):
                return prev
            cfs.curr = None
            self._add(cfs, prev)
        chosen = self._pick_queued(cfs)
        if chosen is None:
            # only delayed tasks were queued: the last one's dequeue walks up to the group
            # entity (the root's curr here), which leaves the root or is delayed there
            self._leave_root_if_empty(rq, lvl)
            return None
        cfs.curr = chosen
        if chosen is not prev:
            cfs.seq = chosen.deadline
        return chosen

    def on_pick(self, task: Task, now: int) -> None:
        task.exec_start = now
        task.prev_sum_exec = task.sum_exec

    def account(self, rq: RunQueue, task: Task, elapsed: int) -> None:
        """update_curr() at each level: the task at its own weight in its cfs_rq, its group's
        entity at the entity's weight at the root; update_deadline() renews a level's
        deadline where no other entity waits (elsewhere tick_preempt() does, with a resched)."""
        lvl = self.level(task, rq.cpu)
        task.vruntime += elapsed * NICE_0 // own_weight(task)
        cfs = lvl.cfs
        if task.vruntime >= task.deadline and cfs.nr_queued == cfs.nr_delayed:
            task.deadline = task.vruntime + self._vslice(task)
        se = lvl.se
        se.vruntime += elapsed * NICE_0 // se.weight
        if se.vruntime >= se.deadline and rq.nr_queued == rq.nr_delayed:
            se.deadline = se.vruntime + self.policy._vslice(se)

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int:
        """The first instant a level with others queued sees its curr pass its deadline."""
        lvl = self.level(task, rq.cpu)
        at = NO_SLICE_END
        cfs = lvl.cfs
        if cfs.nr_queued > cfs.nr_delayed:
            at = start + max(0, (task.deadline - task.vruntime) * own_weight(task) // NICE_0)
        se = lvl.se
        if rq.nr_queued > rq.nr_delayed:
            root_at = start + max(0, (se.deadline - se.vruntime) * se.weight // NICE_0)
            if at == NO_SLICE_END or root_at < at:
                at = root_at
        return at

    def tick_preempt(self, rq: RunQueue, task: Task) -> bool:
        """update_deadline() at each level whose curr passed its deadline: a resched."""
        lvl = self.level(task, rq.cpu)
        resched = False
        if task.vruntime >= task.deadline:
            task.deadline = task.vruntime + self._vslice(task)
            resched = True
        se = lvl.se
        if se.vruntime >= se.deadline:
            se.deadline = se.vruntime + self.policy._vslice(se)
            resched = True
        return resched

    def wakeup_preempts(self, rq: RunQueue, curr: Task, task: Task) -> bool:
        """check_preempt_wakeup(): find_matching_se() -- the two tasks' entities where they
        share a cfs_rq -- then pick_eevdf() there must return the wakee's."""
        if curr.group_shares and task.group_shares and curr.group == task.group:
            cfs = self.level(task, rq.cpu).cfs
            if cfs.curr is curr:
                return self._would_pick(cfs, curr, task)
        root_curr = rq.curr if rq.curr is not None else curr
        wakee = self.level(task, rq.cpu).se if task.group_shares else task
        return self.policy._would_preempt(rq, root_curr, wakee)

    def _would_pick(self, cfs: RunQueue, curr: Task, task: Task) -> bool:
        """EevdfPolicy._would_preempt() in a group cfs_rq."""
        if self._protected(cfs, curr):
            return False
        avg = self._avg(cfs)
        if task.vruntime > avg:
            return False
        if curr.vruntime <= avg and curr.deadline < task.deadline:
            return False
        best = self.policy._earliest_eligible(cfs, avg)
        return best is not None and best.task is task

    def yield_hands_over(self, rq: RunQueue, task: Task) -> bool:
        cfs = self.level(task, rq.cpu).cfs
        return cfs.nr_queued > cfs.nr_delayed or rq.nr_queued > rq.nr_delayed

    def queued_tasks(self, rq: RunQueue) -> list[Task]:
        """The queued tasks of the root (not the group entities) and of every group cfs_rq
        of the CPU, the most recently queued first."""
        nodes: list[Node] = [n for n in rq.data.live() + rq.extra.live() if not is_group_se(n.task)]
        for lvl in self.by_cpu.get(rq.cpu, ()):
            nodes.extend(lvl.cfs.data.live())
            nodes.extend(lvl.cfs.extra.live())
        nodes = [n for n in nodes if not n.task.sched_delayed]  # blocked: not movable
        nodes.sort(key=lambda n: -n.order)
        return [n.task for n in nodes]

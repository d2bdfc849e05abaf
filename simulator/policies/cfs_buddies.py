"""3.x's CFS buddies: the skip, last and next entities pick_next_entity() may prefer.

With the tunable ``cfs_buddies`` every cfs_rq (the root queue of each CPU and, with
``group_hierarchy``, each group's queue on it) keeps three entity pointers, as 3.0's
kernel/sched_fair.c (CyanogenMod/android_kernel_samsung_smdk4412 @4b55028b) has them:
- pick_next_entity(): from the leftmost entity, the second least one replaces it when the
  leftmost is the skip buddy, then the last buddy, then the next buddy (the later one wins),
  each only while wakeup_preempt_entity(buddy, leftmost) is below 1: the buddy is at most one
  wakeup granularity, converted to the leftmost's virtual time (wakeup_gran()), right of it;
  clear_buddies() then forgets whichever pointers named the picked entity (a skip buddy passed
  over stays marked);
- check_preempt_wakeup(): with NEXT_BUDDY (tunable ``next_buddy``) and at least
  sched_nr_latency entities on the running task's cfs_rq, any wakee but a new task becomes the
  next buddy; a wakee that preempts becomes it in any case (set_next_buddy(), from the level
  find_matching_se() stopped at upwards); with LAST_BUDDY (tunable ``last_buddy``), the same
  sched_nr_latency test and a preempted entity that is a task, the preempted task becomes the
  last buddy at its level and its group's entity at the root (set_last_buddy());
- dequeue_entity() and yield_task_fair() clear_buddies() of the entity leaving or yielding
  (the walk up __clear_buddies_*() takes: a parent's pointer goes when it named the parent);
  check_preempt_tick() clears those of a running entity past its slice;
- dequeue_task_fair(): a task that sleeps while its group's cfs_rq keeps runnable entities
  makes its parent, the group's entity, the next buddy at the root (unconditionally).
The later 3.x kernel/sched/fair.c stored in the corpus (find_string id 24097644459, a 3.1x
tree: the same functions) and a kernel/sched/features.h (NEXT_BUDDY false, LAST_BUDDY true)
were read against it.  Not modelled: CACHE_HOT_BUDDY (task_hot() calls a buddy cache hot for
the balancer), yield_to(), SCHED_IDLE tasks (never buddies), and check_preempt_wakeup()'s early
return while the running task already has need_resched set.
"""

from typing import TYPE_CHECKING, Any

from ..program import Task, nice_to_weight
from .base import NICE_0, RunQueue
from .taskheap import Heap, Node

if TYPE_CHECKING:  # annotations only
    from .cfs import CfsPolicy
    from .cfs_group import GroupRq


class Buddies:
    """One cfs_rq's cfs_rq->skip, ->last and ->next (None: not set)."""

    __slots__ = ("skip", "last", "next")

    def __init__(self) -> None:
        self.skip: Task | None = None
        self.last: Task | None = None
        self.next: Task | None = None

    def clear(self, entity: Task) -> bool:
        """clear_buddies() at this level: True when a pointer named ``entity``."""
        named = False
        if self.skip is entity:
            self.skip = None
            named = True
        if self.last is entity:
            self.last = None
            named = True
        if self.next is entity:
            self.next = None
            named = True
        return named


class CfsBuddies:
    """The buddies of a CfsPolicy run with ``cfs_buddies``."""

    def __init__(self, policy: "CfsPolicy", tun: dict[str, Any]):
        self.pol = policy
        self.last_buddy = bool(tun.get("last_buddy"))
        self.next_buddy = bool(tun.get("next_buddy"))
        self.roots: dict[int, Buddies] = {}

    # ------------------------------------------------------------------ lookups
    def root(self, rq: RunQueue) -> Buddies:
        bud = self.roots.get(rq.cpu)
        if bud is None:
            bud = self.roots[rq.cpu] = Buddies()
        return bud

    def _chain(self, rq: RunQueue, task: Task) -> list[tuple[Buddies, Task]]:
        """(cfs_rq buddies, entity) from ``task``'s own level up to the root:
        for_each_sched_entity()."""
        hier = self.pol.hier
        if hier is None or not task.group_shares:
            return [(self.root(rq), task)]
        gq = hier.queues[(task.group, rq.cpu)]
        return [(gq.bud, task), (self.root(rq), gq.entity)]

    def _weight(self, entity: Task) -> int:
        """The load weight wakeup_gran() converts by: a group entity's shares weight, a
        group task's own weight in its group's queue, a root task's weight."""
        hier = self.pol.hier
        if hier is not None:
            if entity.tid < 0:
                gq = hier.by_entity[entity.tid]
                return hier.entity_weight(gq, entity)
            if entity.group_shares:
                return nice_to_weight(entity.nice)
        return entity.entity_weight or entity.weight

    def _too_far(self, buddy_vruntime: int, left: Task, left_vruntime: int) -> bool:
        """wakeup_preempt_entity(buddy, left) == 1: the buddy lies more than the wakeup
        granularity, in ``left``'s virtual time, right of the leftmost."""
        vdiff = buddy_vruntime - left_vruntime
        if vdiff <= 0:
            return False
        pol = self.pol
        gran = pol.wakeup_gran
        weight = self._weight(left)
        if pol.gran_by_wakee and weight != NICE_0:
            gran = gran * NICE_0 // weight
        return vdiff > gran

    # ------------------------------------------------------------------ pick
    def pick(self, data: Heap, bud: Buddies) -> Task:
        """pick_next_entity() on one cfs_rq (``data`` is not empty); the pick's pointers are
        cleared (the levels above picked first, so no walk up is needed)."""
        left_node = data.nodes[0]
        left = left_node.task
        left_vruntime = left_node.key
        pick = left
        if bud.skip is left:
            second = _second_least(data)
            if second is not None and not self._too_far(second.key, left, left_vruntime):
                pick = second.task
        last = bud.last
        if last is not None and not self._too_far(last.vruntime, left, left_vruntime):
            pick = last
        nxt = bud.next
        if nxt is not None and not self._too_far(nxt.vruntime, left, left_vruntime):
            pick = nxt
        bud.clear(pick)
        return pick

    # ------------------------------------------------------------------ setting and clearing
    def clear_up(self, rq: RunQueue, task: Task) -> None:
        """clear_buddies(cfs_rq_of(task), task): each pointer naming the entity goes, and
        the walk up continues while the parent level's named the parent."""
        skip = last = nxt = True  # __clear_buddies_skip/last/next() walk separately
        for bud, entity in self._chain(rq, task):
            skip = skip and bud.skip is entity
            if skip:
                bud.skip = None
            last = last and bud.last is entity
            if last:
                bud.last = None
            nxt = nxt and bud.next is entity
            if nxt:
                bud.next = None

    def clear_group_entity(self, rq: RunQueue, gq: "GroupRq") -> None:
        """A group's entity leaves the root queue: dequeue_entity()'s clear_buddies()."""
        self.root(rq).clear(gq.entity)

    def set_skip(self, rq: RunQueue, task: Task) -> None:
        """yield_task_fair(): clear_buddies() of the yielder, then set_skip_buddy() up."""
        self.clear_up(rq, task)
        for bud, entity in self._chain(rq, task):
            bud.skip = entity

    def sleeps(self, rq: RunQueue, task: Task, group_keeps_entities: bool) -> None:
        """dequeue_task_fair() of a sleeping task: its pointers go; a group that keeps
        runnable entities gets its entity made the root's next buddy."""
        self.clear_up(rq, task)
        if group_keeps_entities:
            self.root(rq).next = self.pol.hier.queues[(task.group, rq.cpu)].entity

    def slice_used(self, rq: RunQueue, task: Task, levels: tuple[bool, bool]) -> None:
        """check_preempt_tick() past the slice at the task's level and/or the root: that
        level's running entity loses its buddy favours (clear_buddies())."""
        chain = self._chain(rq, task)
        if levels[0]:
            self.clear_up(rq, task)
        if levels[1] and len(chain) > 1:
            bud, entity = chain[1]
            bud.clear(entity)

    def wakeup(self, rq: RunQueue, curr: Task, task: Task, preempts: bool) -> None:
        """check_preempt_wakeup()'s buddies for ``task`` woken on ``rq`` where ``curr`` runs
        (``preempts``: wakeup_preempt_entity() said 1)."""
        curr_chain = self._chain(rq, curr)
        scale = self._curr_nr_running(rq, curr) >= self.pol.nr_latency
        marked = False
        if self.next_buddy and scale and not task.never_ran:  # not a WF_FORK wake-up
            for bud, entity in self._chain(rq, task):
                bud.next = entity
            marked = True
        if not preempts:
            return
        task_chain = self._chain(rq, task)
        # find_matching_se(): the level both share (the root, unless both are in one group)
        same_group = len(curr_chain) == 2 and len(task_chain) == 2 and (
            curr_chain[0][0] is task_chain[0][0])
        first = 0 if same_group or (len(curr_chain) == 1 and len(task_chain) == 1) else None
        if not marked:
            for bud, entity in task_chain[(0 if first == 0 else len(task_chain) - 1):]:
                bud.next = entity
        # set_last_buddy() only for a preempted entity that is a task (matched at its level)
        if self.last_buddy and scale and first == 0:
            for bud, entity in curr_chain:
                bud.last = entity

    def _curr_nr_running(self, rq: RunQueue, curr: Task) -> int:
        """task_cfs_rq(curr)->nr_running: the running entity and the queued ones of the
        running task's own cfs_rq (the wakee already queued)."""
        hier = self.pol.hier
        if hier is None:
            return rq.nr_running
        if curr.group_shares:
            return len(hier.queues[(curr.group, rq.cpu)].data) + 1
        return rq.nr_queued + 1


def _second_least(data: Heap) -> Node | None:
    """__pick_next_entity(left): the second least node, one of the heap top's children."""
    size = data.size
    if size < 2:
        return None
    nodes = data.nodes
    second = nodes[1]
    if size > 2:
        other = nodes[2]
        if other.key < second.key or (other.key == second.key and other.order < second.order):
            second = other
    return second

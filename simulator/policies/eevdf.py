"""EEVDF (6.6): earliest eligible virtual deadline first."""

from typing import TYPE_CHECKING, Any, ClassVar, Final

from ..errors import SimulatorError
from ..program import BLOCKED, Task
from .base import NICE_0, NICE_0_SHIFT, NO_SLICE_END, Policy, RunQueue, ilog2
from .taskheap import NOT_QUEUED, Heap, Node, push, remove

if TYPE_CHECKING:  # annotations only (the engine imports the policies)
    from ..engine import Engine

# Node.home: which of a runqueue's two heaps a queued task's node is in
WAITING: Final = 0
ELIGIBLE: Final = 1
GROUP_SE_TID: Final = -1  # a group entity's tid (eevdf_group.py): never one of the engine's


def _rescale(value: int, old: int, new: int) -> int:
    """div_s64(value * old, new): virtual time in one weight's units in another's (truncated
    toward zero, as the kernel's signed division)."""
    scaled = abs(value) * old // new
    return scaled if value >= 0 else -scaled


def tick_nsec(hz: int) -> int:
    """TICK_NSEC, include/linux/jiffies.h: a tick in ns, NSEC_PER_SEC / HZ rounded."""
    return (1_000_000_000 + hz // 2) // hz


def place_lag(lag: int, load: int, weight: int) -> int:
    """place_entity()'s PLACE_LAG (6.6 kernel/sched/fair.c): the lag an entity kept when it left
    (here vruntime - average, the opposite sign of se->vlag) inflated by (W + w) / W, W the
    weight already on the queue (avg_load and curr's), w the entity's, so that the lag it has
    once its own weight has moved the average is the lag it left with; div_s64() truncates
    toward zero.  An empty queue (nr_running 0) keeps no lag: the entity starts at the
    average."""
    if load == 0:
        return 0
    return _rescale(lag, load + weight, load)


def new_task_deadline(vslice: int) -> int:
    """A new task's virtual deadline past its vruntime in 6.6: a full slice.  task_fork_fair()
    places the child with ENQUEUE_INITIAL (PLACE_DEADLINE_INITIAL: half a slice), but
    wake_up_new_task() then enqueues it with ENQUEUE_NOCLOCK alone and enqueue_entity() calls
    place_entity() again, with the vlag __sched_fork() zeroed: at the average, a full slice.
    (Passing ENQUEUE_INITIAL there came in 2024, "sched: Initialize the vruntime of a new task
    when it is first enqueued", after 6.6.)"""
    return vslice


def _weighted(task: Task) -> int:
    """vruntime x weight, as a shift for nice 0: the compiled build multiplies inline only
    ints below 2**30, and vruntimes pass that (1.07 s) early in a run, where the shift's
    limit is 2**52."""
    weight = task.weight
    return task.vruntime << NICE_0_SHIFT if weight == NICE_0 else task.vruntime * weight


class EevdfPolicy(Policy):
    """EEVDF (6.6): pick the eligible task (vruntime <= weighted average) with the earliest
    virtual deadline; a task's deadline is its vruntime plus one base slice of virtual time."""

    family: ClassVar[str] = "eevdf"
    idlest_by_spare_capacity = True  # find_idlest_group() as reworked in v5.5 (balance.py)
    wake_affine_66 = True
    update_curr_on_enqueue = True

    def __init__(self, kernel, tun, ncpus):
        super().__init__(kernel, tun, ncpus)
        self.slice: int = tun["base_slice_ns"] * (1 + ilog2(min(ncpus, 8)))
        # entity_lag()'s clamp before calc_delta_fair(): max(2 x slice, TICK_NSEC) of real time
        self.lag_span: int = max(2 * self.slice, tick_nsec(tun["HZ"]))
        self.log_cost: int = tun["sched_cost_log_ns"]
        self.order: int = 0  # the last order number given to a queued task
        self.run_to_parity: bool = bool(tun["run_to_parity"])
        # 6.6's PELT group shares for tasks of a cgroup with cpu.shares (eevdf_shares.py);
        # None: such a task keeps the shares split evenly over its group (the flattening)
        self.group_pelt: bool = bool(tun.get("group_shares_pelt"))
        self.shares: Any = None
        # set when the shares model makes its first group runqueue (PeltShares._grq()): until
        # then its cpu_load() is the root's plain load and its refresh() has nothing to do
        self.shares_active: bool = False
        # the shortcuts taken while no group task exists (wake_load(), rebalance_tick(),
        # queued_tasks()); off in the engine's reference mode, which the tests compare with
        self.flat_shortcuts: bool = True
        # CONFIG_FAIR_GROUP_SCHED's hierarchy for those tasks (eevdf_group.py): each group's
        # own cfs_rq per CPU under a group entity in the root queue; None: the flattening
        self.hier_on: bool = bool(tun.get("group_hierarchy"))
        self.groups: Any = None
        # set by the first group task's enqueue: until then every queue is flat, and the pick
        # and the wakeup check take the flat paths (the group ones give the same results there,
        # at a Python call per pick)
        self.hier_active: bool = False
        # 6.12's DELAY_DEQUEUE / DELAY_ZERO (sched_feat, both on by default there; 6.6 has
        # neither): a task that blocks while not eligible stays queued, "delayed", until the
        # pick reaches it or it is woken (docs/simulator.md, "Delayed dequeue")
        self.delay_dequeue: bool = bool(tun.get("delay_dequeue"))
        self.delay_zero: bool = bool(tun.get("delay_zero", True))
        if self.delay_dequeue and self.group_pelt and not self.hier_on:
            raise SimulatorError(
                "delay_dequeue is modelled for tasks of no cgroup and for the group hierarchy "
                "(group_hierarchy 1), not with group_shares_pelt over the flattening: set "
                "group_hierarchy 1 or group_shares_pelt 0")

    def attach(self, eng: "Engine"):
        super().attach(eng)
        self.flat_shortcuts = not eng.reference
        if self.group_pelt:
            from .eevdf_shares import PeltShares
            self.shares = PeltShares(eng, self)
        if self.hier_on:
            from .eevdf_group import EevdfGroups
            self.groups = EevdfGroups(self)

    def new_rq(self, cpu_id):
        rq = RunQueue(cpu_id)
        # The pick in O(log n), as 6.6's augmented rbtree gives it, with two indexed heaps of
        # nodes (policies/taskheap.py; a task's own node is task.key, reused): rq.data holds
        # the tasks last seen eligible ordered by (deadline, order), rq.extra the others by
        # (vruntime, order).  A queued task's vruntime and deadline do not change, so only the
        # average moves eligibility: the pick first moves the tasks the average has passed into
        # rq.data, then moves from its top those it has fallen below.  A task leaving the
        # queue leaves its heap at once (each node knows its position).  rq.nr_queued counts
        # the queued tasks; rq.vsum and rq.wsum are the kernel's avg_vruntime/avg_load sums
        # (weight x vruntime, weights), kept as tasks come and go so the average needs no
        # rescan.
        rq.data = Heap()
        rq.extra = Heap()
        return rq

    def _add(self, rq: RunQueue, task: Task) -> None:
        node: Node | None = task.key
        if node is None:
            node = task.key = Node(task)
        self.order += 1
        node.key = task.vruntime
        node.order = self.order
        node.home = WAITING
        push(rq.extra, node)  # the next pick sorts out whether it is eligible
        rq.nr_queued += 1
        rq.vsum += _weighted(task)
        rq.wsum += task.weight

    def _take(self, rq: RunQueue, task: Task) -> None:
        node: Node = task.key
        remove(rq.data if node.home == ELIGIBLE else rq.extra, node)
        rq.nr_queued -= 1
        rq.vsum -= _weighted(task)
        rq.wsum -= task.weight

    def _vslice(self, task: Task) -> int:
        return self.slice * NICE_0 // task.weight

    def _avg(self, rq: RunQueue) -> int:
        """The weighted average vruntime of the queued tasks and the running one."""
        total = rq.vsum
        weight = rq.wsum
        curr = rq.curr
        if curr is not None:
            total += _weighted(curr)
            weight += curr.weight
        return total // weight if weight else rq.min_vruntime

    def enqueue(self, rq: RunQueue, task: Task, how, now: int):
        if task.group_shares and self.hier_on:
            self.groups.enqueue(rq, task, how, now)
            return
        if task.group_shares and self.shares is not None:
            # update_cfs_group() before place_entity(): the entity is placed at its new
            # weight, its stored lag rescaled as reweight_entity() does for an off-queue one
            old = task.weight
            self.shares.join(rq, task, now)
            if how != "fork" and task.weight != old:
                task.vruntime = _rescale(task.vruntime, old, task.weight)
        if task.sched_delayed:  # woken while DELAY_DEQUEUE kept it queued: no placement
            requeue_delayed(self, rq, task, self.delay_zero)
            rq.load += task.weight
            return
        if how == "fork":
            if task.deadline == 0:  # 6.6's wake_up_new_task(): see new_task_deadline()
                task.vruntime = self._avg(rq)
                task.deadline = task.vruntime + new_task_deadline(self._vslice(task))
        else:  # wakeup/migrate: the lag stored relative on leaving, PLACE_LAG's inflation
            curr = rq.curr
            load = rq.wsum + (curr.weight if curr is not None else 0)
            lag = place_lag(task.vruntime, load, task.weight)
            task.vruntime = self._avg(rq) + lag
            task.deadline = task.vruntime + self._vslice(task)
        rq.load += task.weight
        self._add(rq, task)

    def _lag_limit(self, weight: int) -> int:
        """entity_lag()'s clamp: calc_delta_fair(max(2 x slice, TICK_NSEC)) at ``weight``."""
        return self.lag_span * NICE_0 // weight

    def _store_lag(self, rq: RunQueue, task: Task):
        """update_entity_lag(): the lag against the average (curr counted), clamped."""
        limit = self._lag_limit(task.weight)
        task.vruntime = max(-limit, min(limit, task.vruntime - self._avg(rq)))

    def dequeue(self, rq: RunQueue, task: Task, now: int):
        if task.group_shares and self.hier_on:
            self.groups.dequeue(rq, task, now)
            return
        self._take(rq, task)
        rq.load -= task.weight
        self._store_lag(rq, task)
        if task.group_shares and self.shares is not None:
            self.shares.leave(rq, task, now)

    def curr_leaves(self, rq: RunQueue, task: Task, now: int):
        if task.group_shares and self.hier_on:
            self.groups.curr_leaves(rq, task, now)
            return
        if self.delay_dequeue and task.state == BLOCKED and task.vruntime > self._avg(rq):
            # dequeue_entity() with DEQUEUE_SLEEP of an entity entity_eligible() refuses
            super().curr_leaves(rq, task, now)
            delay(self, rq, task)
            return
        self._store_lag(rq, task)
        super().curr_leaves(rq, task, now)
        if task.group_shares and self.shares is not None:
            self.shares.leave(rq, task, now)

    def rebalance_tick(self, rq: RunQueue, now: int) -> bool:
        """The tick's update_cfs_group() of the group entities on ``rq`` (done at the
        periodic balance pass: the model skips ticks): True when weights may have changed."""
        if self.shares is None:
            return False
        if self.flat_shortcuts and not self.shares_active:
            return True  # no group runqueue anywhere: refresh() would find nothing to fold
        self.shares.refresh(rq, now)
        if self.hier_on:
            self.groups.refresh(rq)
        return True

    def reweight(self, rq: RunQueue, task: Task, weight: int) -> None:
        """6.6's reweight_entity() for a task on ``rq`` (queued, or running with its time
        already committed): its remaining virtual deadline is rescaled to the new weight
        (deadline - vruntime, times old / new), its vruntime kept; a queued task leaves and
        re-enters the average's sums at the new weight.  In the hierarchy a group task's
        weight here is only what the balancer sees (eevdf_group.py)."""
        if task.group_shares and self.hier_on:
            self.groups.reweight_task(rq, task, weight)
            return
        old = task.weight
        node: Node | None = task.key
        queued = node is not None and node.pos != NOT_QUEUED and rq.curr is not task
        if queued:
            self._take(rq, task)
        task.deadline = task.vruntime + _rescale(task.deadline - task.vruntime, old, weight)
        rq.load += weight - old
        task.weight = weight
        if queued:
            self._add(rq, task)

    def put_prev(self, rq: RunQueue, task: Task, now: int):
        if task.group_shares and self.hier_on:
            self.groups.put_prev(rq, task)
            return
        if task.yield_pending:
            task.yield_pending = False
            task.vruntime = task.deadline
            task.deadline = task.vruntime + self._vslice(task)
        rq.curr = None
        self._add(rq, task)

    def pick_next(self, rq: RunQueue, cpu, now: int) -> Task | None:
        """The eligible task (vruntime <= average) with the earliest deadline, the earliest
        queued first among equals; with none eligible, the least vruntime."""
        if self.hier_active:
            return self.groups.pick_next(rq)
        if rq.nr_queued == 0:
            return None
        return self._pick_queued(rq)

    def _pick_queued(self, rq: RunQueue) -> Task | None:
        """pick_eevdf() among the queued entities of the root queue (at least one)."""
        avg = self._avg(rq)
        best = self._earliest_eligible(rq, avg)
        if best is None:
            waiting: Heap = rq.extra
            best = waiting.nodes[0]
            remove(waiting, best)
        else:
            remove(rq.data, best)
        task: Task = best.task
        rq.nr_queued -= 1
        rq.vsum -= _weighted(task)
        rq.wsum -= task.weight
        rq.min_vruntime = avg
        if task.sched_delayed:
            return self._pick_past_delayed(rq, task, avg)
        return task

    def _pick_past_delayed(self, rq: RunQueue, task: Task, avg: int) -> Task | None:
        """pick_next_entity() met a delayed entity: its dequeue completes (a group entity
        leaves the root) and the pick starts again, until it finds a runnable one or the
        queue holds nothing."""
        while True:
            finish_delayed(rq, task, avg, self._lag_limit(task.weight), self.delay_zero)
            if task.tid == GROUP_SE_TID:
                task.data.on_rq = False  # its cfs_rq is empty: requeue_delayed() else
            if rq.nr_queued == 0:
                return None
            avg = self._avg(rq)
            best = self._earliest_eligible(rq, avg)
            if best is None:
                waiting: Heap = rq.extra
                best = waiting.nodes[0]
                remove(waiting, best)
            else:
                remove(rq.data, best)
            task = best.task
            rq.nr_queued -= 1
            rq.vsum -= _weighted(task)
            rq.wsum -= task.weight
            rq.min_vruntime = avg
            if not task.sched_delayed:
                return task

    def _earliest_eligible(self, rq: RunQueue, avg: int) -> Node | None:
        """The queued eligible task with the earliest deadline (left queued), or None: the
        tasks the average has passed move into rq.data, those it has fallen below out."""
        eligible: Heap = rq.data
        waiting: Heap = rq.extra
        while waiting.size and waiting.nodes[0].key <= avg:  # the average passed its vruntime
            node = waiting.nodes[0]
            remove(waiting, node)
            node.key = node.task.deadline
            node.home = ELIGIBLE
            push(eligible, node)
        while eligible.size:
            node = eligible.nodes[0]
            if node.task.vruntime <= avg:
                return node
            remove(eligible, node)  # the average fell below it
            node.key = node.task.vruntime
            node.home = WAITING
            push(waiting, node)
        return None

    def on_pick(self, rq: RunQueue, task: Task, now: int):
        if task.group_shares and self.hier_on:
            self.groups.on_pick(task, now)  # the root's curr is its group's entity
            return
        super().on_pick(rq, task, now)
        rq.seq = task.deadline  # the deadline it was picked with (RUN_TO_PARITY's stash)

    def _protected(self, rq: RunQueue, curr: Task) -> bool:
        """RUN_TO_PARITY (sched_feat, on by default, 63304558ba5d "sched/eevdf: Curb
        wakeup-preemption", 6.6): the running task keeps the CPU until it has used the slice
        it was picked with -- pick_eevdf() returns it while its deadline is still the one
        set_next_entity() stashed (in se->vlag; here rq.seq) and it is eligible."""
        return (self.run_to_parity and curr.deadline == rq.seq and curr.vruntime < curr.deadline
                and curr.vruntime <= self._avg(rq))

    def account(self, rq: RunQueue, task: Task, elapsed: int, now: int):
        if task.group_shares and self.hier_on:
            self.groups.account(rq, task, elapsed)
            return
        task.vruntime += elapsed * NICE_0 // task.weight
        if task.vruntime >= task.deadline and rq.nr_queued == rq.nr_delayed:
            task.deadline = task.vruntime + self._vslice(task)

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int:
        if task.group_shares and self.hier_on:
            return self.groups.preempt_time(rq, task, start)
        if rq.nr_queued == rq.nr_delayed:
            return NO_SLICE_END
        return start + max(0, (task.deadline - task.vruntime) * task.weight // NICE_0)

    def tick_preempt(self, rq: RunQueue, task: Task, now: int) -> bool:
        if task.group_shares and self.hier_on:
            return self.groups.tick_preempt(rq, task)
        if task.vruntime < task.deadline:
            return False
        task.deadline = task.vruntime + self._vslice(task)
        return True

    def wakeup_preempts(self, rq: RunQueue, curr: Task, task: Task, now: int) -> bool:
        """6.6's check_preempt_wakeup() preempts when pick_eevdf() would now return the woken
        task: RUN_TO_PARITY keeps a protected running task; otherwise the woken task must be
        eligible, have the earliest deadline of the queued eligible tasks (the queue's order
        breaks ties) and, when the running task is eligible, no later deadline than it
        (pick_eevdf() keeps curr only when the best queued deadline is later).  In the
        hierarchy, at the level find_matching_se() finds (eevdf_group.py)."""
        if self.hier_active:
            return self.groups.wakeup_preempts(rq, curr, task)
        return self._would_preempt(rq, curr, task)

    def _would_preempt(self, rq: RunQueue, curr: Task, task: Task) -> bool:
        """Would pick_eevdf() on the root queue now return ``task`` (queued) over ``curr``?"""
        if self._protected(rq, curr):
            return False
        avg = self._avg(rq)
        if task.vruntime > avg:
            return False
        if curr.vruntime <= avg and curr.deadline < task.deadline:
            return False
        best = self._earliest_eligible(rq, avg)
        return best is not None and best.task is task

    def task_fork(self, rq: RunQueue, parent: Task, child: Task, now: int, same_cpu):
        child.deadline = 0

    def yield_hands_over(self, rq: RunQueue, task: Task, now: int) -> bool:
        if task.group_shares and self.hier_on:
            return bool(self.groups.yield_hands_over(rq, task))
        return rq.nr_queued > rq.nr_delayed

    def decision_cost(self, rq: RunQueue) -> int:
        nr = rq.nr_running  # ilog2(max(1, nr)), inlined: this runs at every decision
        return self.sched_cost + self.log_cost * (nr.bit_length() - 1 if nr > 1 else 0)

    def wake_load(self, rq: RunQueue, now: int, without: Task | None) -> int:
        """6.6's cpu_load_without() / cpu_load(): the PELT load with the group shares'
        averages (eevdf_shares.py); the instantaneous load without them."""
        if self.shares is None:
            return self.load_of(rq)
        if self.flat_shortcuts and not self.shares_active:
            # no group runqueue anywhere: what cpu_load() returns then (max(0, root load)),
            # without a call into the interpreted shares model at every wakeup and balance
            load = rq.load
            return load if load > 0 else 0
        return self.shares.cpu_load(rq, now, without)

    def task_load(self, task: Task, now: int) -> int:
        if self.shares is None or not task.group_shares:
            return task.weight
        return self.shares.task_h_load(task, now)

    def queued_tasks(self, rq: RunQueue):
        """The queued tasks, the most recently queued first (an O(n) walk, as the balancer's
        own is)."""
        # before the first group task every queue is flat: the flat walk gives the same list
        if self.hier_active or (self.hier_on and not self.flat_shortcuts):
            return self.groups.queued_tasks(rq)
        data: Heap = rq.data
        extra: Heap = rq.extra
        # a delayed task is blocked: not movable
        nodes = [n for n in data.live() + extra.live() if not n.task.sched_delayed]
        nodes.sort(key=lambda n: -n.order)
        return [n.task for n in nodes]

    def hot(self, task: Task, now: int, level):
        return self.task_hot(task, now, self.tun["sched_migration_cost_ns"])


# ---------------------------------------------------------------- 6.12's delayed dequeue
# Shared by the root queue (EevdfPolicy: weights are Task.weight) and a group cfs_rq
# (eevdf_group.EevdfGroups: a task's own nice weight); ``ops`` is the one whose _avg(), _add(),
# _take() and _vslice() fit the queue.


def delay(ops: Any, q: RunQueue, entity: Task) -> None:
    """set_delayed(): the entity that stopped running (q's curr, already cleared) stays
    queued at its vruntime and deadline, counted in the average, marked delayed."""
    entity.sched_delayed = True
    q.nr_delayed += 1
    ops._add(q, entity)


def finish_delayed(q: RunQueue, entity: Task, avg: int, limit: int, delay_zero: bool) -> None:
    """The pick reached a delayed entity, already out of q's heaps and sums: dequeue_entity()
    with DEQUEUE_DELAYED stores its lag against ``avg`` (the average it was picked from, itself
    counted), clamped as update_entity_lag() does, and DELAY_ZERO drops a positive lag (the
    kernel's vlag > 0: vruntime before the average) to 0.  Here the stored value is
    vruntime - average, so the one kept is >= 0."""
    lag = max(-limit, min(limit, entity.vruntime - avg))
    if delay_zero and lag < 0:
        lag = 0
    entity.vruntime = lag
    entity.sched_delayed = False
    q.nr_delayed -= 1


def requeue_delayed(ops: Any, q: RunQueue, entity: Task, delay_zero: bool) -> None:
    """requeue_delayed_entity(): a delayed entity woken (or a group entity whose cfs_rq gets a
    task) stays where it is, old vruntime and deadline; with DELAY_ZERO one that became
    eligible meanwhile (positive lag) is placed again with lag 0: at the average, a full
    slice."""
    entity.sched_delayed = False
    q.nr_delayed -= 1
    if delay_zero and entity.vruntime < ops._avg(q):
        ops._take(q, entity)
        entity.vruntime = ops._avg(q)
        entity.deadline = entity.vruntime + ops._vslice(entity)
        ops._add(q, entity)

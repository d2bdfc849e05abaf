"""CFS (2.6.23 - 3.x): a vruntime-ordered queue, slices from the latency target."""

from typing import TYPE_CHECKING, Any, ClassVar

from ..program import Task
from .base import NICE_0, NO_SLICE_END, Policy, RunQueue, ilog2
from .taskheap import Heap, Node, push, remove

if TYPE_CHECKING:  # annotations only (the engine imports the policies)
    from ..engine import Engine


def advanced_min_vruntime(current: int, data: Heap, curr: Task | None) -> int:
    """update_min_vruntime() of one cfs_rq (the root here, a group's in cfs_group.py): the
    least of the running entity's vruntime and the leftmost queued key, never moving back."""
    if data.size:
        v = data.nodes[0].key
        if curr is not None and curr.vruntime < v:
            v = curr.vruntime
    elif curr is not None:
        v = curr.vruntime
    else:
        return current
    return v if v > current else current


def lead_preempt_at(start: int, ran: int, ideal: int, lead: int, weight: int,
                    min_gran: int) -> int:
    """When check_preempt_tick()'s second test first holds for the running entity (2.6.32 -
    6.5; stored 3.0 kernel/sched_fair.c and 3.4-based kernel/sched/fair.c): it has run
    sched_min_granularity since it was picked and its vruntime leads the leftmost queued
    entity's by more than its slice (``ideal``, real ns compared with virtual ns as the kernel
    does).  ``lead`` is that lead at ``start``; it grows by NICE_0 / ``weight`` per ns run.
    The engine rounds the result up to the CPU's tick, where the kernel makes the test."""
    need_min = min_gran - ran if ran < min_gran else 0
    short = ideal - lead  # the lead must pass ideal: grow by short + 1 virtual ns
    need_lead = 0 if short < 0 else -(-(short + 1) * weight // NICE_0)
    return start + (need_min if need_min > need_lead else need_lead)


def lead_preempts(ran: int, ideal: int, lead: int, min_gran: int) -> bool:
    """check_preempt_tick()'s second test at a tick (lead_preempt_at())."""
    return ran >= min_gran and lead > ideal


class CfsPolicy(Policy):
    """CFS (2.6.23 - 3.x): a vruntime-ordered queue, slices from the latency target."""

    family: ClassVar[str] = "cfs"

    account_is_vruntime = True
    update_curr_on_enqueue = True
    idle_sibling_needs_affine = True

    def __init__(self, kernel, tun, ncpus):
        super().__init__(kernel, tun, ncpus)
        cap = tun["latency_cap_cpus"]
        factor = 1 + ilog2(min(ncpus, cap) if cap else ncpus)
        self.latency: int = tun["sched_latency_ns"] * factor
        self.min_gran: int = tun["sched_min_granularity_ns"] * factor
        self.wakeup_gran: int = tun["sched_wakeup_granularity_ns"] * factor
        self.gran_by_wakee: bool = bool(tun.get("wakeup_gran_by_wakee"))
        # 2.6.23's entity_tick() / __check_preempt_curr_fair() (CFS as first merged)
        self.v1_preemption: bool = bool(tun.get("cfs_v1_preemption"))
        # check_preempt_tick()'s second test (2.6.32 - 6.5): lead_preempt_at()
        self.lead_preempt: bool = bool(tun.get("tick_lead_preempt")) and not self.v1_preemption
        self.nr_latency: int = max(1, tun["sched_latency_ns"]
                                   // max(1, tun["sched_min_granularity_ns"]))
        self.yield_mode: str = "compat" if tun.get("sched_compat_yield") else tun["yield_semantics"]
        self.migration_cost: int = tun["sched_migration_cost_ns"]
        self.log_cost: int = tun["sched_cost_log_ns"]
        # GENTLE_FAIR_SLEEPERS (2.6.32 on) halves the vruntime credit a waking sleeper gets
        gentle = tun["gentle_fair_sleepers"]
        self.sleeper_credit: int = self.latency // 2 if gentle else self.latency
        self.order: int = 0  # the last order number given to a queued task
        # compat_yield needs the rightmost task: a second heap, ordered right to left, is kept
        # only when this run can ask for it
        self.track_rightmost: bool = self.yield_mode == "compat"
        self.inherit_thread_vruntime: bool = bool(tun.get("thread_fork_inherits_vruntime"))
        # 3.x's windowed group shares for tasks of a cgroup with cpu.shares (cfs_shares.py);
        # None: such a task keeps the shares split evenly over its group (the flattening)
        self.window_ns: int = int(tun.get("shares_window_ms", 0)) * 1_000_000
        self.shares: Any = None
        # CONFIG_FAIR_GROUP_SCHED's hierarchy over those shares (cfs_group.py): such a task is
        # queued in its group's cfs_rq on the CPU, the root queue holds the group's entity
        self.group_hierarchy: bool = bool(tun.get("group_hierarchy"))
        self.hier: Any = None
        # 3.x's skip / last / next buddies per cfs_rq (cfs_buddies.py); None: the skip flag
        # on the task that the model had before (the leftmost skipped task always yields)
        self.buddies: Any = None
        if tun.get("cfs_buddies") and not self.v1_preemption:
            from .cfs_buddies import CfsBuddies
            self.buddies = CfsBuddies(self, tun)

    def attach(self, eng: "Engine"):
        super().attach(eng)
        if self.window_ns > 0:
            from .cfs_shares import GroupShares
            self.shares = GroupShares(eng, self.window_ns)
            if self.group_hierarchy and not self.v1_preemption:
                from .cfs_group import GroupHierarchy
                self.hier = GroupHierarchy(self, eng)

    def new_rq(self, cpu_id):
        # The kernel's rbtree gives the leftmost task in O(1) and an insert or removal in
        # O(log n); an indexed heap of nodes does the same here (policies/taskheap.py; a task's
        # own node is task.key, reused).  rq.data orders the queued tasks by (vruntime, order),
        # the order number breaking ties (first queued first); rq.extra, with compat_yield only,
        # holds each task's twin node keyed (-vruntime, -order), whose top is the rightmost.
        # A task leaving the queue leaves both heaps at once (each node knows its position), so
        # rq.nr_queued always equals len(rq.data).
        rq = RunQueue(cpu_id)
        rq.data = Heap()
        rq.extra = Heap()
        return rq

    def _insert(self, rq: RunQueue, task: Task) -> None:
        node: Node | None = task.key
        if node is None:
            node = task.key = Node(task)
        self.order += 1
        order = self.order
        node.key = task.vruntime
        node.order = order
        push(rq.data, node)
        if self.track_rightmost:
            twin = node.twin
            if twin is None:
                twin = node.twin = Node(task)
            twin.key = -task.vruntime
            twin.order = -order
            push(rq.extra, twin)
        rq.nr_queued += 1

    def _remove(self, rq: RunQueue, task: Task) -> None:
        """``task`` leaves the queue (its node leaves each heap it is in)."""
        node: Node = task.key
        remove(rq.data, node)
        if self.track_rightmost:
            twin = node.twin
            assert twin is not None
            remove(rq.extra, twin)
        rq.nr_queued -= 1

    def _leftmost(self, rq: RunQueue) -> Node | None:
        """The node with the least (vruntime, order), or None for an empty queue."""
        data: Heap = rq.data
        return data.nodes[0] if data.size else None

    def _rightmost_vruntime(self, rq: RunQueue) -> int:
        """The greatest vruntime queued (compat_yield only; the queue is not empty)."""
        extra: Heap = rq.extra
        return -extra.nodes[0].key

    def _update_min(self, rq: RunQueue) -> None:
        """min_vruntime = max(itself, min(running task's vruntime, leftmost queued))."""
        curr = rq.curr
        if curr is not None and curr.group_shares and self.hier is not None:
            curr = self.hier.root_curr(rq, curr)  # the root runs the task's group entity
        rq.min_vruntime = advanced_min_vruntime(rq.min_vruntime, rq.data, curr)

    def enqueue(self, rq: RunQueue, task: Task, how, now: int):
        if task.group_shares and self.hier is not None:
            self.hier.enqueue(rq, task, how, now)
            return
        self._update_min(rq)
        if how == "fork":
            pass  # placed by task_fork
        elif how == "migrate":
            task.vruntime += rq.min_vruntime
        else:  # wakeup: made relative to the queue it slept on by task_waking()
            task.vruntime = max(task.vruntime + rq.min_vruntime,
                                rq.min_vruntime - self.sleeper_credit)
        if task.group_shares and self.shares is not None:
            self.shares.join(rq, task, now)  # adds the task's reweighted share to rq.load
        else:
            rq.load += task.weight
        self._insert(rq, task)

    def dequeue(self, rq: RunQueue, task: Task, now: int):
        if task.group_shares and self.hier is not None:
            self.hier.dequeue(rq, task, now)
            return
        self._update_min(rq)
        self._remove(rq, task)
        if self.buddies is not None:
            self.buddies.clear_up(rq, task)  # dequeue_entity()'s clear_buddies()
        rq.load -= task.weight
        task.vruntime -= rq.min_vruntime
        if task.group_shares and self.shares is not None:
            self.shares.leave(rq, task, now)

    def curr_leaves(self, rq: RunQueue, task: Task, now: int):
        if task.group_shares and self.hier is not None:
            self.hier.curr_leaves(rq, task, now)
            return
        self._update_min(rq)
        super().curr_leaves(rq, task, now)
        if self.buddies is not None:
            self.buddies.sleeps(rq, task, False)
        if self.v1_preemption:  # 2.6.23: see task_waking()
            task.vruntime -= rq.min_vruntime
        if task.group_shares and self.shares is not None:
            self.shares.leave(rq, task, now)

    def task_waking(self, rq: RunQueue, task: Task, now: int) -> None:
        """A sleeper keeps its absolute vruntime (dequeue_entity() normalises only
        ``if (!(flags & DEQUEUE_SLEEP))``, 2.6.33 - 3.x; 2.6.24's dequeue_entity() never); it
        is made relative to the queue it slept on when it is woken, against that queue's
        min_vruntime of the moment: 3.x's task_waking_fair() (``se->vruntime -=
        cfs_rq->min_vruntime``, before select_task_rq()), 2.6.24's set_task_cpu() (``vruntime
        -= old_cfsrq->min_vruntime - new_cfsrq->min_vruntime`` when the CPU changes; on the
        same CPU nothing).  enqueue() then adds the new queue's min_vruntime and place_entity()
        clamps it.  So the time the old queue's min_vruntime advanced while the task slept is
        not added to it (the model before normalised at the sleep).  2.6.23 (CFS v1, keys from
        wait_runtime and the sleep's length) keeps the model's normalisation at the sleep.
        Stored text read: 3.x fair.c task_waking_fair() and dequeue_entity() (find_string ids
        6254856844, 9743805909), 2.6.24's sched.c set_task_cpu() (id 10925742229)."""
        if self.v1_preemption:
            return
        if task.group_shares and self.hier is not None:
            self.hier.task_waking(rq, task)
            return
        self._update_min(rq)
        task.vruntime -= rq.min_vruntime

    def rebalance_tick(self, rq: RunQueue, now: int) -> bool:
        """update_shares(cpu), run by rebalance_domains() and idle_balance() before they
        balance: True when weights on ``rq`` may have changed."""
        if self.shares is None:
            return False
        self.shares.global_update(rq, now)
        return True

    def put_prev(self, rq: RunQueue, task: Task, now: int):
        if task.group_shares and self.hier is not None:
            self.hier.put_prev(rq, task, now)
            return
        self._update_min(rq)
        rq.curr = None
        if task.yield_pending:
            task.yield_pending = False
            if self.yield_mode == "compat" and rq.nr_queued:
                rightmost = self._rightmost_vruntime(rq)
                if rightmost >= task.vruntime:
                    task.vruntime = rightmost + 1  # right of the rightmost task
            elif self.yield_mode == "skip":
                if self.buddies is not None:
                    self.buddies.set_skip(rq, task)
                else:
                    task.skip = True
        self._insert(rq, task)

    def pick_next(self, rq: RunQueue, cpu, now: int) -> Task | None:
        data: Heap = rq.data
        if not data.size:
            return None
        if self.buddies is not None:
            task = self.buddies.pick(data, self.buddies.root(rq))
            self._remove(rq, task)
            self._update_min(rq)
            if task.tid < 0 and self.hier is not None:
                return self.hier.descend(rq, task)
            return task
        nodes = data.nodes
        task = nodes[0].task
        if task.skip:  # the skip buddy: the next task runs, if there is one
            task.skip = False
            size = data.size
            if size > 1:
                # the second least node is one of the top's children; the skipped task stays
                # queued with its node and order
                second = nodes[1]
                if size > 2:
                    other = nodes[2]
                    if other.key < second.key or (
                            other.key == second.key and other.order < second.order):
                        second = other
                task = second.task
        self._remove(rq, task)
        self._update_min(rq)
        if task.tid < 0 and self.hier is not None:  # a group entity: its group's pick
            return self.hier.descend(rq, task)
        return task

    def account(self, rq: RunQueue, task: Task, elapsed: int, now: int):
        # min_vruntime is brought up to date lazily where it is used: between those points only
        # the running task's vruntime grows, so the lazy value equals the eager one.  Engine.run
        # has a copy of this line (account_is_vruntime).
        if task.group_shares and self.hier is not None:
            self.hier.account(rq, task, elapsed)
            return
        task.vruntime += elapsed * NICE_0 // task.weight if task.weight != NICE_0 else elapsed

    def ideal_slice(self, rq: RunQueue, task: Task) -> int:
        nr = rq.nr_running
        period = self.latency if nr <= self.nr_latency else self.min_gran * nr
        return period * task.weight // max(rq.load, task.weight)

    def preempt_time(self, rq: RunQueue, task: Task, start: int) -> int:
        if task.group_shares and self.hier is not None:
            return self.hier.preempt_time(rq, task, start)
        if rq.nr_queued == 0:
            return NO_SLICE_END
        if self.v1_preemption:
            return self._v1_preempt_time(rq, task, start)
        # ideal_slice(), inlined (this runs at every re-plan of a busy CPU); with the group
        # hierarchy the root's period counts its entities (a group's tasks count once)
        nr = rq.nr_running if self.hier is None else rq.nr_queued + 1
        period = self.latency if nr <= self.nr_latency else self.min_gran * nr
        weight = task.weight
        load = rq.load
        ideal = period * weight // (load if load > weight else weight)
        ran = task.sum_exec - task.prev_sum_exec
        left = ideal - ran
        if left <= 0:
            return start
        if self.lead_preempt:
            node = self._leftmost(rq)
            assert node is not None  # nr_queued > 0
            at = lead_preempt_at(start, ran, ideal, task.vruntime - node.key, weight,
                                 self.min_gran)
            if at < start + left:
                return at
        return start + left

    def tick_preempt(self, rq: RunQueue, task: Task, now: int) -> bool:
        if self.v1_preemption:
            return self._v1_tick_preempt(rq, task)
        if task.group_shares and self.hier is not None:
            return self.hier.tick_preempt(rq, task)
        if rq.nr_queued == 0:
            return False
        if self.hier is None:
            ideal = self.ideal_slice(rq, task)
        else:  # the root's period counts its entities (a group's tasks once), as preempt_time()
            nr = rq.nr_queued + 1
            period = self.latency if nr <= self.nr_latency else self.min_gran * nr
            ideal = period * task.weight // max(rq.load, task.weight)
        ran = task.sum_exec - task.prev_sum_exec
        used = ran >= ideal
        if used and self.buddies is not None:
            self.buddies.slice_used(rq, task, (True, False))
        if used or not self.lead_preempt:
            return used
        node = self._leftmost(rq)  # the second test clears no buddies
        return node is not None and lead_preempts(ran, ideal, task.vruntime - node.key,
                                                  self.min_gran)

    # 2.6.23's preemption (kernel/sched_fair.c of 2.6.23.17, read for this): entity_tick()
    # requeues the running task at its updated key and, unless it is still the leftmost, calls
    # __check_preempt_curr_fair(cfs_rq, leftmost, curr, sched_granularity(cfs_rq)), which
    # preempts when curr's key leads the leftmost's by more than niced_granularity(curr, gran);
    # gran is 0 once curr ran more than ideal_runtime = max(sched_latency / nr_running,
    # sched_min_granularity) since it was picked.  sched_granularity() is latency/nr -
    # latency/nr/nr, at least min_granularity (10 ms for two tasks on 2 CPUs, where 2.6.24's
    # check_preempt_tick() waits for the 20 ms slice).  Keys are taken as vruntime: a nice-0
    # task's fair_key grows by its run time, as its vruntime does.
    def _v1_grans(self, rq: RunQueue, task: Task) -> tuple[int, int]:
        """(niced sched_granularity, ideal_runtime) for ``task`` running on ``rq``."""
        nr = rq.nr_running
        lat = self.latency
        gran = max(lat // nr - lat // nr // nr, self.min_gran) if nr > 1 else lat
        weight = task.weight
        if weight < NICE_0:  # niced_granularity(): linear in the weight, finer either way
            gran = gran * weight // NICE_0
        elif weight > NICE_0:
            gran = gran * NICE_0 // weight
        return gran, max(lat // max(1, nr), self.min_gran)

    def _v1_preempt_time(self, rq: RunQueue, task: Task, start: int) -> int:
        left = self._leftmost(rq)
        assert left is not None  # nr_queued > 0
        gran, ideal = self._v1_grans(rq, task)
        weight = task.weight
        lead = task.vruntime - left.key
        # the lead exceeds gran after (gran - lead) virtual ns, weight / NICE_0 real ns each
        at = start + (max(0, gran - lead) * weight // NICE_0) + 1
        ran = task.sum_exec - task.prev_sum_exec
        past_ideal = start + max(0, ideal - ran) + 1
        ahead = start + max(0, -lead) * weight // NICE_0 + 1  # the lead is above 0
        late = past_ideal if past_ideal > ahead else ahead
        return late if late < at else at

    def _v1_tick_preempt(self, rq: RunQueue, task: Task) -> bool:
        left = self._leftmost(rq)
        if left is None:
            return False
        lead = task.vruntime - left.key
        if lead <= 0:  # requeued right of equal keys, curr is the leftmost: no preemption
            return False
        gran, ideal = self._v1_grans(rq, task)
        return task.sum_exec - task.prev_sum_exec > ideal or lead > gran

    def wakeup_preempts(self, rq: RunQueue, curr: Task, task: Task, now: int) -> bool:
        """wakeup_preempt_entity(): the woken task leads the running one by more than the
        wakeup granularity.  With wakeup_gran_by_wakee (3.3's wakeup_gran(curr, se) returns
        calc_delta_fair(sysctl_sched_wakeup_granularity, se)) the granularity is virtual
        time in the woken task's units: a light wakee needs a larger lead.  The units are
        those of the entity the kernel compares: a task of a flattened cgroup is seen through
        its group's entity (Task.entity_weight: the group's shares, the weight that entity has
        while the group's runnable load is on this CPU), not through its own split weight."""
        if self.hier is not None and (curr.group_shares or task.group_shares):
            preempts: bool = self.hier.wakeup_preempts(rq, curr, task)
        else:
            preempts = self._flat_wakeup_preempts(rq, curr, task)
        if self.buddies is not None:
            self.buddies.wakeup(rq, curr, task, preempts)
        return preempts

    def _flat_wakeup_preempts(self, rq: RunQueue, curr: Task, task: Task) -> bool:
        """wakeup_preempt_entity() between two entities of the root queue."""
        gran = self.wakeup_gran
        if self.v1_preemption:  # 2.6.23: in curr's units, 0 once curr ran past ideal_runtime
            ideal = max(self.latency // max(1, rq.nr_running), self.min_gran)
            if curr.sum_exec - curr.prev_sum_exec > ideal:
                gran = 0
            elif curr.weight < NICE_0:
                gran = gran * curr.weight // NICE_0
            elif curr.weight > NICE_0:
                gran = gran * NICE_0 // curr.weight
            return curr.vruntime - task.vruntime > gran
        weight = task.entity_weight or task.weight
        if self.gran_by_wakee and weight != NICE_0:
            gran = gran * NICE_0 // weight
        return curr.vruntime - task.vruntime > gran

    def task_fork(self, rq: RunQueue, parent: Task, child: Task, now: int, same_cpu):
        if child.group_shares and self.hier is not None and not self.inherit_thread_vruntime:
            self.hier.task_fork(rq, parent, child, same_cpu)
            return
        self._update_min(rq)
        if self.inherit_thread_vruntime:
            self._activate_new_thread(rq, parent, child, now, same_cpu)
            return
        vslice = self.ideal_slice(rq, child)
        base = parent.vruntime if same_cpu else rq.min_vruntime
        child.vruntime = max(base, rq.min_vruntime + vslice)  # START_DEBIT
        if same_cpu and self.child_runs_first(parent, child) and parent.vruntime < child.vruntime:
            parent.vruntime, child.vruntime = child.vruntime, parent.vruntime

    def _activate_new_thread(self, rq: RunQueue, parent: Task, child: Task, now: int, same_cpu):
        """2.6.23's wake_up_new_task() queues a CLONE_VM child with activate_task(), not
        task_new_fair(): no START_DEBIT, no key swap.  CFS v1 kept a fair_key per task;
        __sched_fork() zeroed the child's wait_runtime, so enqueue_entity() keys it at the
        runqueue's fair_clock, which is the parent's up-to-date vruntime here (the parent runs
        alone in its slice).  check_preempt_curr_fair() compares that fresh key with the
        parent's fair_key as of its last requeue, which is never larger: the new thread waits
        (wakeup_preempts() sees a zero lead).  set_task_cpu() rebases the key when sched_fork()
        chose another CPU."""
        child.vruntime = parent.vruntime
        if not same_cpu and self.eng is not None and parent.cpu is not None:
            home = self.eng.cpus[parent.cpu].rq
            self._update_min(home)
            child.vruntime += rq.min_vruntime - home.min_vruntime

    def child_runs_first(self, parent: Task, child: Task):
        if not self.tun["sched_child_runs_first"] or self.inherit_thread_vruntime:
            return False
        return self.tun["child_runs_first_threads"]


    def yield_hands_over(self, rq: RunQueue, task: Task, now: int) -> bool:
        """After sched_yield() schedule() runs and picks the leftmost task.  compat_yield=1 first
        moves the yielder right of the rightmost task (unless it is already rightmost); the
        "requeue" code of 2.6.23/2.6.24 only brings its vruntime up to date, so put_prev puts it
        back at its own key, right of equal keys: it hands over only when a queued task's
        vruntime is at most its own (nearly a no-op right after it was picked)."""
        if task.group_shares and self.hier is not None:
            return self.hier.yield_hands_over(rq, task)
        left = self._leftmost(rq)
        if left is None:
            return False
        if self.yield_mode in ("compat", "skip"):
            return True
        return left.key <= task.vruntime

    def yield_handover_delay(self, rq: RunQueue, task: Task, now: int) -> int | None:
        """Spinning on sched_yield() with requeue semantics: the yield that hands over comes
        when the spinner's vruntime has caught up with the leftmost queued task."""
        if self.yield_mode != "requeue" or (task.group_shares and self.hier is not None):
            return None  # not modelled for a group task (no such profile): its slice ends it
        left = self._leftmost(rq)
        if left is None:
            return None
        gap = left.key - task.vruntime
        return max(1, -(-gap * task.weight // NICE_0))

    def decision_cost(self, rq: RunQueue) -> int:
        nr = rq.nr_running  # ilog2(max(1, nr)), inlined: this runs at every decision
        return self.sched_cost + self.log_cost * (nr.bit_length() - 1 if nr > 1 else 0)

    def queued_tasks(self, rq: RunQueue):
        """Right to left, as the 2.6 balancer's iterator (sorting the queued nodes: a balance
        pass looks at every queued task anyway)."""
        if self.hier is not None and self.hier.queues:  # group queues exist
            return self.hier.queued_tasks(rq)
        data: Heap = rq.data
        queued = [(node.key, node.order, node.task) for node in data.live()]
        queued.sort(reverse=True)  # (vruntime, order) is unique: tasks are never compared
        return [entry[2] for entry in queued]

    def hot(self, task: Task, now: int, level):
        return self.task_hot(task, now, self.migration_cost)

    def hot_cost(self):
        return self.migration_cost

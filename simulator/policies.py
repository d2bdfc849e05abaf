"""Scheduler classes: how each kernel family queues, picks, preempts, yields and forks.

The engine owns time and CPUs; a policy owns the runqueue data structure of its family and answers
the engine's questions (who runs next, when does the tick preempt, does this wakeup preempt, does
sched_yield() give the CPU away).  The running task is never in the queue: pick_next removes it and
put_prev puts it back, as in the kernel's put_prev_task/pick_next_task pair.
"""

import bisect
from collections import deque

MS = 1_000_000
NICE_0 = 1024


def ilog2(n):
    return max(0, int(n).bit_length() - 1)


class RunQueue:
    __slots__ = ("cpu", "nr_running", "curr", "load", "data", "min_vruntime", "seq", "nr_queued",
                 "active", "expired")

    def __init__(self, cpu):
        self.cpu = cpu
        self.nr_running = 0
        self.curr = None
        self.load = 0
        self.data = None
        self.min_vruntime = 0
        self.seq = 0
        self.nr_queued = 0
        self.active = None
        self.expired = None


class Policy:
    """Defaults shared by the per-CPU families; each subclass overrides what its kernel does."""

    global_queue = False
    hrtick = False
    tick_preempts = True  # False for classes no tick ever preempts (SCHED_DEADLINE)
    # True when account() does nothing but CFS's weighted vruntime advance, which the engine's
    # event loop then does inline (it runs once per event)
    account_is_vruntime = False
    # True when account() only charges the task's slice_left while it stays positive (O(1)):
    # the event loop then does that inline and calls account() only when the slice runs out
    account_is_slice = False

    def __init__(self, kernel, tun, ncpus):
        self.kernel = kernel
        self.tun = tun
        self.ncpus = ncpus
        self.eng = None
        self.sched_cost = tun["sched_cost_ns"]

    def attach(self, eng):
        self.eng = eng

    def new_rq(self, cpu_id):
        return RunQueue(cpu_id)

    # bookkeeping common to all: load is the sum of weights of queued + running tasks
    def on_pick(self, rq, task, now):
        rq.curr = task
        task.exec_start = now
        task.prev_sum_exec = task.sum_exec

    def curr_leaves(self, rq, task, now):
        rq.curr = None
        rq.load -= task.weight

    def account(self, rq, task, elapsed, now):
        pass

    def child_runs_first(self, parent, child):
        return False

    def yield_handover_delay(self, rq, task, now):
        return None

    def decision_cost(self, rq):
        return self.sched_cost

    def load_of(self, rq):
        return rq.load

    def cold_at(self, task, level):
        """When a refused cache-hot task stops being hot (for the faster idle balancing)."""
        return task.last_ran + self.hot_cost()

    def hot_cost(self):
        return self.tun.get("cache_hot_time_ns", self.tun.get("sched_migration_cost_ns", 0))

    def task_hot(self, task, now, cost_ns):
        if cost_ns <= 0 or task.never_ran:
            return False
        return now - task.last_ran < cost_ns


# ---------------------------------------------------------------------------------------- CFS
class CfsPolicy(Policy):
    """CFS (2.6.23 - 3.x): a vruntime-ordered queue, slices from the latency target."""

    account_is_vruntime = True

    def __init__(self, kernel, tun, ncpus, yield_mode):
        super().__init__(kernel, tun, ncpus)
        cap = tun["latency_cap_cpus"]
        factor = 1 + ilog2(min(ncpus, cap) if cap else ncpus)
        self.latency = tun["sched_latency_ns"] * factor
        self.min_gran = tun["sched_min_granularity_ns"] * factor
        self.wakeup_gran = tun["sched_wakeup_granularity_ns"] * factor
        self.nr_latency = max(1, tun["sched_latency_ns"] // max(1, tun["sched_min_granularity_ns"]))
        self.yield_mode = "compat" if tun.get("sched_compat_yield") else yield_mode
        self.migration_cost = tun["sched_migration_cost_ns"]
        self.log_cost = tun["sched_cost_log_ns"]
        self.sleeper_credit = self.latency // 2 if kernel == "3.3" else self.latency

    def new_rq(self, cpu_id):
        rq = RunQueue(cpu_id)
        rq.data = []  # sorted (vruntime, seq, task)
        return rq

    def _insert(self, rq, task):
        rq.seq += 1
        task.key = (task.vruntime, rq.seq, task)
        bisect.insort(rq.data, task.key)

    def _remove(self, rq, task):
        i = bisect.bisect_left(rq.data, task.key[:2])
        del rq.data[i]

    def _update_min(self, rq):
        """min_vruntime = max(itself, min(running task's vruntime, leftmost queued))."""
        curr = rq.curr
        data = rq.data
        if data:
            v = data[0][0]
            if curr is not None and curr.vruntime < v:
                v = curr.vruntime
        elif curr is not None:
            v = curr.vruntime
        else:
            return
        if v > rq.min_vruntime:
            rq.min_vruntime = v

    def enqueue(self, rq, task, how, now):
        self._update_min(rq)
        if how == "fork":
            pass  # placed by task_fork
        elif how == "migrate":
            task.vruntime += rq.min_vruntime
        else:  # wakeup: vruntime was stored relative to the old queue when it slept
            task.vruntime = max(task.vruntime + rq.min_vruntime,
                                rq.min_vruntime - self.sleeper_credit)
        rq.load += task.weight
        self._insert(rq, task)

    def dequeue(self, rq, task, now):
        self._update_min(rq)
        self._remove(rq, task)
        rq.load -= task.weight
        task.vruntime -= rq.min_vruntime

    def curr_leaves(self, rq, task, now):
        self._update_min(rq)
        super().curr_leaves(rq, task, now)
        task.vruntime -= rq.min_vruntime

    def put_prev(self, rq, task, now):
        self._update_min(rq)
        rq.curr = None
        if task.yield_pending:
            task.yield_pending = False
            if self.yield_mode == "compat" and rq.data:
                task.vruntime = max(task.vruntime, rq.data[-1][0] + 1)
            elif self.yield_mode == "skip":
                task.skip = True
        self._insert(rq, task)

    def pick_next(self, rq, cpu, now):
        data = rq.data
        if not data:
            return None
        idx = 0
        if data[0][2].skip:
            data[0][2].skip = False
            if len(data) > 1:
                idx = 1
        task = data.pop(idx)[2]
        self._update_min(rq)
        return task

    def account(self, rq, task, elapsed, now):
        # min_vruntime is brought up to date lazily where it is used: between those points only
        # the running task's vruntime grows, so the lazy value equals the eager one.  Engine.run
        # has a copy of this line (account_is_vruntime).
        task.vruntime += elapsed * NICE_0 // task.weight if task.weight != NICE_0 else elapsed

    def ideal_slice(self, rq, task):
        nr = rq.nr_running
        period = self.latency if nr <= self.nr_latency else self.min_gran * nr
        return period * task.weight // max(rq.load, task.weight)

    def preempt_time(self, rq, task, start):
        if not rq.data:
            return None
        # ideal_slice(), inlined (this runs at every re-plan of a busy CPU)
        nr = rq.nr_running
        period = self.latency if nr <= self.nr_latency else self.min_gran * nr
        weight = task.weight
        load = rq.load
        left = period * weight // (load if load > weight else weight) - (
            task.sum_exec - task.prev_sum_exec)
        return start + left if left > 0 else start

    def tick_preempt(self, rq, task, now):
        return bool(rq.data) and task.sum_exec - task.prev_sum_exec >= self.ideal_slice(rq, task)

    def wakeup_preempts(self, rq, curr, task, now):
        return curr.vruntime - task.vruntime > self.wakeup_gran

    def task_fork(self, rq, parent, child, now, same_cpu):
        self._update_min(rq)
        vslice = self.ideal_slice(rq, child)
        base = parent.vruntime if same_cpu else rq.min_vruntime
        child.vruntime = max(base, rq.min_vruntime + vslice)  # START_DEBIT
        if same_cpu and self.child_runs_first(parent, child) and parent.vruntime < child.vruntime:
            parent.vruntime, child.vruntime = child.vruntime, parent.vruntime

    def child_runs_first(self, parent, child):
        if not self.tun["sched_child_runs_first"]:
            return False
        return self.tun["child_runs_first_threads"]

    def yield_task(self, rq, task, now):
        task.yield_pending = True

    def yield_hands_over(self, rq, task, now):
        if not rq.data:
            return False
        if self.yield_mode in ("compat", "skip"):
            return True
        if self.yield_mode == "requeue":
            return rq.data[0][0] < task.vruntime
        return False  # 2.6.24 compat_yield=0: sched_yield() returns without switching

    def yield_handover_delay(self, rq, task, now):
        if self.yield_mode != "requeue" or not rq.data:
            return None
        gap = rq.data[0][0] - task.vruntime
        return max(1, gap * task.weight // NICE_0 + 1)

    def decision_cost(self, rq):
        nr = rq.nr_running  # ilog2(max(1, nr)), inlined: this runs at every decision
        return self.sched_cost + self.log_cost * (nr.bit_length() - 1 if nr > 1 else 0)

    def queued_tasks(self, rq):
        return [k[2] for k in reversed(rq.data)]

    def hot(self, task, now, level):
        return self.task_hot(task, now, self.migration_cost)

    def hot_cost(self):
        return self.migration_cost


# ---------------------------------------------------------------------------------------- O(1)
def o1_timeslice(prio, base_ms):
    base = base_ms * MS
    scaled = (base * 4 if prio < 120 else base) * (140 - prio) // 20
    return max(5 * MS, scaled)


class O1Policy(Policy):
    """2.6.22 O(1): priority arrays, per-task timeslices, arrays swap when active runs dry."""

    account_is_slice = True

    def new_rq(self, cpu_id):
        rq = RunQueue(cpu_id)
        rq.active = {}
        rq.expired = {}
        return rq

    def _queue(self, arr, task, front=False):
        q = arr.get(task.prio)
        if q is None:
            q = arr[task.prio] = deque()
        if front:
            q.appendleft(task)
        else:
            q.append(task)

    def enqueue(self, rq, task, how, now):
        if task.slice_left <= 0:
            task.slice_left = o1_timeslice(task.prio, self.tun["timeslice_ms"])
        rq.load += task.weight
        rq.nr_queued += 1
        self._queue(rq.expired if task.expired else rq.active, task)

    def dequeue(self, rq, task, now):
        arr = rq.expired if task.expired else rq.active
        arr[task.prio].remove(task)
        if not arr[task.prio]:
            del arr[task.prio]
        rq.load -= task.weight
        rq.nr_queued -= 1
        task.expired = False

    def put_prev(self, rq, task, now):
        rq.curr = None
        rq.nr_queued += 1
        if task.yield_pending:
            task.yield_pending = False
            task.expired = True  # hard yield: to the expired array, slice kept
            self._queue(rq.expired, task)
        elif task.slice_left <= 0:
            task.slice_left = o1_timeslice(task.prio, self.tun["timeslice_ms"])
            task.expired = True
            self._queue(rq.expired, task)
        else:  # preempted by a better task: stays at the head of its list
            self._queue(rq.active, task, front=True)

    def pick_next(self, rq, cpu, now):
        if not rq.active:
            if not rq.expired:
                return None
            rq.active, rq.expired = rq.expired, rq.active
            for q in rq.active.values():
                for t in q:
                    t.expired = False
        prio = min(rq.active)
        q = rq.active[prio]
        task = q.popleft()
        if not q:
            del rq.active[prio]
        rq.nr_queued -= 1
        return task

    def account(self, rq, task, elapsed, now):
        task.slice_left -= elapsed  # Engine.run() does this itself while the slice lasts
        if task.slice_left <= 0 and rq.nr_queued == 0:
            # alone on the CPU: expiry would requeue it and pick it again; refill lazily
            ts = o1_timeslice(task.prio, self.tun["timeslice_ms"])
            task.slice_left += ts * (1 + (-task.slice_left) // ts)

    def preempt_time(self, rq, task, start):
        return start + max(0, task.slice_left) if rq.nr_queued else None

    def tick_preempt(self, rq, task, now):
        return task.slice_left <= 0

    def wakeup_preempts(self, rq, curr, task, now):
        return task.prio < curr.prio

    def task_fork(self, rq, parent, child, now, same_cpu):
        half = max(1, parent.slice_left) // 2
        child.slice_left = max(1, half)
        parent.slice_left = max(1, parent.slice_left - half)
        child.prio = parent.prio

    def child_runs_first(self, parent, child):
        return False  # only for fork() without CLONE_VM; every forking workload makes threads

    def yield_task(self, rq, task, now):
        task.yield_pending = True

    def yield_hands_over(self, rq, task, now):
        return rq.nr_queued > 0

    def queued_tasks(self, rq):
        # the balancer prefers the expired array first (cache-cold), tail first
        tasks = []
        for arr in (rq.expired, rq.active):
            for prio in sorted(arr):
                tasks.extend(reversed(arr[prio]))
        return tasks

    def hot(self, task, now, level):
        return self.task_hot(task, now, self.tun["cache_hot_time_ns"])

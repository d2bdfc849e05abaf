"""Issue 24's mechanisms: each at the time the kernel acts, each checked against a direction.

Trend tests, not exact values (the golden outputs pin exact values)."""

import io
import random
import statistics
from collections import deque

import pytest

import simulator
from simulator.api import make_policy, validate
from simulator.balance import _wake_affine, select_wake_cpu
from simulator.cli import main as cli_main
from simulator.engine import Engine
from simulator.policies.base import RunQueue
from simulator.policies.cfs import CfsPolicy
from simulator.policies.cfs_shares import GroupShares
from simulator.policies.eevdf import EevdfPolicy
from simulator.policies.eevdf_shares import PeltShares
from simulator.policies.rsdl import LEVELS, RsdlPolicy
from simulator.program import DONE, EXIT, LOCK, MARK, RUN, RUNNING, SLEEP, UNLOCK, Mutex, Task
from simulator.topology import parse_topology
from simulator.wl_common import MS, Build
from tests.simulator.test_fidelity import chatroom


def burn(kernel, iterations, burn_us, **spec):
    return simulator.run({"workload": "threadtest-burn", "kernel": kernel,
                          "params": {"iterations": iterations, "burn_us": burn_us},
                          **({"cpus": 2} if "topology" not in spec else {}), **spec})["metrics"]


def test_fork_returns_in_the_parent_only_when_the_parent_runs_again():
    """2.6.24's child runs first: the parent waits queued until a balance pass moves it. Its
    gettimeofday() after pthread_create() runs then, so each burn's wall time is one burn
    (both burns run unpreempted once started), not the wait before it as well."""
    metrics = burn("2.6.24", 20, 300, tunables={"noise_pct": 0})
    assert metrics["work_us"][0] == pytest.approx(2 * 20 * 300, rel=0.01), metrics
    assert metrics["idx"][0] < 0.5, metrics  # the two burns overlap nowhere near


def test_2625_idle_kick_halves_2624_at_100_us_bursts_on_two_cpus():
    """2.6.25's kicked idle balance runs between ticks; counted from the jiffy it fell in
    (sd->last_balance is in jiffies), the retry comes one tick later, not two."""
    old = burn("2.6.24", 200, 100)["time_us"][0]
    new = burn("2.6.25", 200, 100)["time_us"][0]
    assert new * 2 <= old * 1.01, (old, new)


def _task(tid, weight=1024):
    task = Task(tid, f"t{tid}", [], "default")
    task.weight = weight
    return task


def test_eevdf_heap_pick_is_the_full_scan_pick():
    """The two-heap pick against the definition, over random queue histories: the eligible
    task (vruntime <= weighted average) with the earliest deadline, the earliest queued among
    equals; with none eligible, the least vruntime."""
    rng = random.Random(7)
    tun = {"sched_cost_ns": 0, "base_slice_ns": 750_000, "sched_cost_log_ns": 0, "HZ": 250,
           "run_to_parity": True}
    policy = EevdfPolicy("6.6-eevdf", tun, 4)
    rq = policy.new_rq(0)
    assert isinstance(rq, RunQueue)
    queued: list[Task] = []
    tid = 0
    for _ in range(3000):
        op = rng.random()
        if op < 0.45 or not queued:
            tid += 1
            task = _task(tid, rng.choice((1024, 1024, 335, 3121)))
            task.vruntime = rng.randrange(-3_000_000, 3_000_000)
            policy.enqueue(rq, task, "wakeup", 0)
            queued.append(task)
        elif op < 0.6:
            task = queued.pop(rng.randrange(len(queued)))
            policy.dequeue(rq, task, 0)
        else:
            avg = policy._avg(rq)
            eligible = [t for t in queued if t.vruntime <= avg]
            want = (min(eligible, key=lambda t: (t.deadline, t.key.order)) if eligible
                    else min(queued, key=lambda t: (t.vruntime, t.key.order)))
            got = policy.pick_next(rq, None, 0)
            assert got is want
            queued.remove(got)
            if rng.random() < 0.7:  # it ran a little and goes back (a yield, a preemption)
                got.vruntime += rng.randrange(0, 2_000_000)
                got.yield_pending = rng.random() < 0.3
                policy.put_prev(rq, got, 0)
                queued.append(got)
        assert rq.nr_queued == len(queued)
        assert sorted(map(id, policy.queued_tasks(rq))) == sorted(map(id, queued))


class PlainRsdl:
    """RSDL by its plain definition (the model before the lazy queues): a deque of tasks per
    level and the expired array, a leaving task removed where it stands (deque.remove, O(n)),
    the best level found by a scan.  Standalone: compiled classes cannot be subclassed."""

    def __init__(self, tun):
        self.rr = tun["rr_interval"] * 1_000_000
        self.last_level = min(LEVELS - 1, 20 + tun["priority_levels"] - 1)
        self.yield_expire = tun["yield_expire"]
        self.summed = tun.get("level_quota_sum", False)

    def new_rq(self, cpu_id):
        rq = RunQueue(cpu_id)
        rq.active = [deque() for _ in range(LEVELS)]
        rq.expired = deque()
        rq.extra = [0 if self.summed else self.rr] * LEVELS
        return rq

    def _count(self, rq, task):  # summed level quotas: a task new at a level adds its quota
        if self.summed and not task.expired:
            rq.extra[task.level] += task.quota

    def _start_level(self, task):
        return min(self.last_level, 20 + task.nice)

    def _expire(self, task):
        task.expired, task.level, task.quota = True, self._start_level(task), self.rr

    def _queue(self, rq, task, front=False):
        moved = not task.expired and task.level < rq.min_vruntime
        if moved:  # its level finished this epoch
            task.level, task.quota = rq.min_vruntime, self.rr
            if task.level > self.last_level:
                self._expire(task)
        if task.expired:
            rq.expired.append(task)
        elif front:
            rq.active[task.level].appendleft(task)
        else:
            rq.active[task.level].append(task)
        return moved

    def enqueue(self, rq, task, how, now):
        if task.rotation != rq.vsum and how != "fork":  # it last ran in an earlier epoch
            task.rotation, task.level, task.quota = rq.vsum, self._start_level(task), self.rr
            task.expired = False
        if task.quota <= 0 and not task.expired:
            if task.never_ran and task.level == 0:
                task.level = self._start_level(task)
            task.quota = self.rr
        rq.nr_queued += 1
        self._queue(rq, task)
        self._count(rq, task)

    def dequeue(self, rq, task, now):
        (rq.expired if task.expired else rq.active[task.level]).remove(task)
        rq.nr_queued -= 1

    def _descend(self, task):
        if task.level >= self.last_level:
            self._expire(task)
        else:
            task.level, task.quota = task.level + 1, self.rr

    def _minor_rotation(self, rq, level):
        rq.min_vruntime = max(rq.min_vruntime, level + 1)
        moving, rq.active[level] = rq.active[level], deque()
        for t in reversed(moving):
            t.level, t.quota = level + 1, self.rr
            if t.level > self.last_level:
                self._expire(t)
                rq.expired.append(t)
            else:
                rq.active[t.level].appendleft(t)
                self._count(rq, t)

    def put_prev(self, rq, task, now):
        rq.curr = None
        rq.nr_queued += 1
        if not task.expired and rq.extra[task.level] <= 0 and task.level >= rq.min_vruntime:
            self._minor_rotation(rq, task.level)
        if task.yield_pending:
            task.yield_pending = False
            if self.yield_expire:
                self._expire(task)
            if self._queue(rq, task, front=not self.yield_expire):
                self._count(rq, task)
        elif task.quota <= 0:
            self._descend(task)
            self._queue(rq, task)
            self._count(rq, task)
        elif self._queue(rq, task, front=True):
            self._count(rq, task)

    def _major_rotation(self, rq):
        rq.vsum += 1  # the epoch count
        rq.min_vruntime = 0
        rq.extra = [0 if self.summed else self.rr] * LEVELS
        while rq.expired:
            t = rq.expired.popleft()
            t.expired = False
            rq.active[t.level].append(t)
            self._count(rq, t)

    def pick_next(self, rq, cpu, now):
        for _ in range(2):
            for q in rq.active:
                if q:
                    rq.nr_queued -= 1
                    task = q.popleft()
                    task.rotation = rq.vsum
                    return task
            if not rq.expired:
                return None
            self._major_rotation(rq)
        return None

    def on_pick(self, rq, task, now):
        rq.curr = task

    def curr_leaves(self, rq, task, now):
        rq.curr = None

    def account(self, rq, task, elapsed, now):
        task.quota -= elapsed
        rq.extra[task.level] -= elapsed
        if rq.nr_queued == 0:  # alone: rotations applied lazily
            while task.quota <= 0:
                self._descend(task)
                task.expired = False
                self._count(rq, task)
            if rq.extra[task.level] <= 0:
                self._major_rotation(rq)
                self._count(rq, task)

    def queued_tasks(self, rq):
        tasks = list(reversed(rq.expired))
        for q in reversed(rq.active):
            tasks.extend(reversed(q))
        return tasks

    def yield_hands_over(self, rq, task, now):
        if rq.nr_queued == 0:
            return False
        return self.yield_expire or any(rq.active[:task.level])


def test_rsdl_task_waking_in_a_later_major_epoch_restarts_at_its_static_level():
    """RSDL's recalc_task_prio() (the patch's design notes): a task queued in the major epoch it
    last ran in keeps its level and quota; one that last ran in an earlier epoch starts at its
    static level with a full quota, as the tasks the major rotation restarted."""
    tun = {"sched_cost_ns": 0, "rr_interval": 8, "priority_levels": 20, "yield_expire": False,
           "cache_hot_time_ns": 0, "level_quota_sum": False}
    policy = RsdlPolicy("rsdl", tun, 1)
    rq = policy.new_rq(0)
    stays, sleeps_across = Task(1, "stays", []), Task(2, "sleeps", [])
    for task in (stays, sleeps_across):
        policy.enqueue(rq, task, "fork", 0)
        assert policy.pick_next(rq, None, 0) is task and task.level == 20
        policy.account(rq, task, 3_000_000, 0)  # alone: no rotation yet
        task.level, task.quota = 27, 2_000_000  # as if it had descended this epoch
        policy.curr_leaves(rq, task, 0)  # and blocked
    policy.enqueue(rq, stays, "wakeup", 0)  # same epoch: its level and quota kept
    assert (stays.level, stays.quota) == (27, 2_000_000)
    assert policy.pick_next(rq, None, 0) is stays
    stays.level, stays.quota = 39, 0  # its last level's quota spent: it expires at put_prev
    policy.put_prev(rq, stays, 0)
    assert stays.expired and policy.pick_next(rq, None, 0) is stays  # after a major rotation
    policy.curr_leaves(rq, stays, 0)
    policy.enqueue(rq, sleeps_across, "wakeup", 0)
    assert (sleeps_across.level, sleeps_across.quota, sleeps_across.expired) == (20, 8_000_000,
                                                                                False)


@pytest.mark.parametrize("summed", [False, True])
@pytest.mark.parametrize("yield_expire", [False, True])
@pytest.mark.parametrize("nices", [(0,), (-2, -1, 0, 0, 1, 3)])
def test_rsdl_lazy_queues_pick_as_the_plain_deques(yield_expire, nices, summed):
    """RSDL's queues drop a migrating task's entry lazily (O(1)) and move a whole level at a
    minor rotation (its tasks' levels and quotas settled when next looked at, two non-empty
    levels merged smaller into larger) and make the expired array a level's queue whole at a
    major rotation when its tasks all restart at that level; against the plain deques, over
    random histories of wakeups, migrations, runs (quota spent, minor and major rotations),
    yields and blocks, with tasks starting at one level or several: the same picks (with the
    same level, quota and expiry), the same yield answers, the balancer's same order, at every
    step; with one rr_interval per level or the sum of its tasks' quotas (``level_quota_sum``),
    whose level quotas must agree too."""
    rng = random.Random(5 + yield_expire + len(nices))
    tun = {"sched_cost_ns": 0, "rr_interval": 1, "priority_levels": 3 + len(nices),
           "yield_expire": yield_expire, "cache_hot_time_ns": 0, "level_quota_sum": summed}
    nice_of = [rng.choice(nices) for _ in range(60)]
    sides = []
    for policy in (RsdlPolicy("rsdl", tun, 1), PlainRsdl(tun)):
        sides.append((policy, policy.new_rq(0),
                      {tid: Task(tid, f"t{tid}", [], nice=nice_of[tid]) for tid in range(60)}))
    off = set(range(60))  # tids on neither queue nor CPU (blocked, or migrated away)
    curr = None
    handovers = 0
    for _ in range(4000):
        op = rng.random()
        if op < 0.3 and off:
            tid = rng.choice(sorted(off))
            off.discard(tid)
            for policy, rq, tasks in sides:
                policy.enqueue(rq, tasks[tid], "wakeup", 0)
        elif op < 0.45:
            queued = [t.tid for t in sides[1][0].queued_tasks(sides[1][1])]
            if queued:
                tid = rng.choice(queued)
                off.add(tid)
                for policy, rq, tasks in sides:
                    policy.dequeue(rq, tasks[tid], 0)
        else:
            elapsed = rng.randrange(0, 1_500_000)
            how = rng.random()
            for policy, rq, tasks in sides:
                if curr is not None:
                    task = tasks[curr]
                    policy.account(rq, task, elapsed, 0)
                    if how < 0.2:
                        policy.curr_leaves(rq, task, 0)
                    else:
                        task.yield_pending = how < 0.5
                        policy.put_prev(rq, task, 0)
            if curr is not None and how < 0.2:
                off.add(curr)
            expired_array = sides[0][1].expired
            picks = [policy.pick_next(rq, None, 0) for policy, rq, _ in sides]
            assert [None if t is None else t.tid for t in picks] == [
                None if picks[1] is None else picks[1].tid] * 2
            assert [None if t is None else (t.level, t.quota, t.expired) for t in picks] == [
                None if picks[1] is None else (picks[1].level, picks[1].quota, False)] * 2
            # a major rotation that made the expired array a level's queue whole
            handovers += any(bucket is expired_array for bucket in sides[0][1].active)
            curr = None if picks[0] is None else picks[0].tid
            for (policy, rq, _), task in zip(sides, picks, strict=True):
                if task is not None:
                    policy.on_pick(rq, task, 0)
        orders = [[t.tid for t in policy.queued_tasks(rq)] for policy, rq, _ in sides]
        assert orders[0] == orders[1]
        assert sides[0][1].nr_queued == sides[1][1].nr_queued == len(orders[0])
        assert [q.left for q in sides[0][1].extra] == sides[1][1].extra
        if curr is not None:
            answers = {policy.yield_hands_over(rq, tasks[curr], 0) for policy, rq, tasks in sides}
            assert len(answers) == 1
    # with one nice level every major rotation hands the expired array over whole (O(1));
    # with several it is mostly visited task by task (the handover only when the tasks that
    # expired share their level); summed level quotas finish levels, and so epochs, less often
    if len(nices) == 1:
        assert handovers >= (1 if summed else 100), handovers


@pytest.mark.parametrize("compat", [0, 1])
def test_cfs_heap_pick_is_the_sorted_queue_pick(compat):
    """CFS's heap against the definition (the leftmost by vruntime, first queued among equals;
    a skip-buddy leftmost passes its turn to the next; compat_yield puts the yielder right of
    the rightmost) over random queue histories, with the balancer's right-to-left order."""
    rng = random.Random(11 + compat)
    tun = {"sched_cost_ns": 0, "sched_cost_log_ns": 0, "latency_cap_cpus": 0,
           "sched_latency_ns": 20_000_000, "sched_min_granularity_ns": 4_000_000,
           "sched_wakeup_granularity_ns": 10_000_000, "sched_compat_yield": compat,
           "yield_semantics": "requeue", "sched_migration_cost_ns": 0,
           "gentle_fair_sleepers": False}
    policy = CfsPolicy("2.6.24", tun, 2)
    rq = policy.new_rq(0)
    queued: list[tuple[int, int, Task]] = []  # (vruntime, insertion number, task), sorted
    number = tid = 0

    def put(task):
        nonlocal number
        number += 1
        queued.append((task.vruntime, number, task))
        queued.sort(key=lambda e: e[:2])

    for _ in range(3000):
        op = rng.random()
        if op < 0.4 or not queued:
            tid += 1
            task = _task(tid)
            task.vruntime = rng.randrange(0, 50) * 100_000  # many equal keys
            policy.enqueue(rq, task, "fork", 0)
            put(task)
        elif op < 0.55:
            entry = queued.pop(rng.randrange(len(queued)))
            vruntime = entry[2].vruntime
            policy.dequeue(rq, entry[2], 0)
            entry[2].vruntime = vruntime  # back to absolute for the next enqueue
        else:
            first = queued[0][2]
            want = queued[1][2] if first.skip and len(queued) > 1 else first
            got = policy.pick_next(rq, None, 0)
            assert got is want
            queued[:] = [e for e in queued if e[2] is not got]
            rq.curr = got
            if rng.random() < 0.7:  # it ran a little and goes back, perhaps by a yield
                got.vruntime += rng.randrange(0, 3) * 100_000
                got.yield_pending = rng.random() < 0.4
                if got.yield_pending and compat and queued and queued[-1][0] >= got.vruntime:
                    expect = queued[-1][0] + 1
                else:
                    expect = got.vruntime
                got.skip = rng.random() < 0.1
                policy.put_prev(rq, got, 0)
                assert got.vruntime == expect
                put(got)
            else:
                rq.curr = None
        assert rq.nr_queued == len(queued) == len(rq.data)
        # the right-to-left heap holds exactly the queued tasks' twins (none without compat)
        assert len(rq.extra) == (len(queued) if compat else 0)
        assert policy.queued_tasks(rq) == [e[2] for e in reversed(queued)]


def test_cpu_time_budget_stops_a_run_cleanly():
    spec = {"workload": "yield-loop", "kernel": "6.6-eevdf", "cpus": 8,
            "params": {"tasks": 2000, "duration_ms": 10**6}, "max_cpu_seconds": 0.3}
    with pytest.raises(simulator.CpuBudgetExceeded, match="CPU-time budget exceeded"):
        simulator.run(spec)
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(["run", "--workload", "yield-loop", "--kernel", "3.3", "--cpus", "8",
                     "--param", "tasks=2000", "--param", "duration_ms=1000000",
                     "--max-cpu-seconds", "0.3"], out=out, err=err)
    assert code == 2 and "CPU-time budget exceeded" in err.getvalue(), err.getvalue()
    with pytest.raises(simulator.InvalidValueError):
        simulator.validate({**spec, "max_cpu_seconds": 0})


def chat_msgs_per_s(kernel, spin_yields, **tunables):
    params = {"rooms": 4, "clients": 20, "messages": 150, "think_us": 50, "cs_us": 10,
              "lock": "yield", "spin_yields": spin_yields, "succession": "handoff"}
    return simulator.run({"workload": "chatroom", "kernel": kernel, "cpus": 2,
                          "params": params, "tunables": tunables}
                         )["metrics"]["throughput_msgs_per_s"][0]


@pytest.mark.xfail(strict=True, reason="rr_interval 100 recovers all of 0.31's loss in this "
                   "150-message run, 1.006x of mainline against 0.33's 0.995x at 3000 yields "
                   "(0.31 0.97 / 0.94 / 0.55 / 0.31x at 10 / 100 / 1000 / 3000), because each "
                   "client runs 9 ms in it, a tenth of a 100 ms quota: nothing descends, nothing "
                   "preempts a holder (0 preemptions, 0 yields). At 7500 messages, where the "
                   "quotas are spent, it recovers part (0.42x, 0.31 0.05x, 0.33 1.00x): "
                   "test_rsdl_031_rr_interval_100_recovers_part_once_its_quotas_are_spent")
def test_rsdl_031_loss_grows_with_the_jvm_spin_count_and_033_recovers_at_every_count():
    """The spin count is swept, not taken from a default: RSDL 0.31's near no-op yield costs
    more the longer a waiter spins on sched_yield() before it blocks; 0.33 expires the yielder
    and stays near mainline whatever the count; rr_interval 100 recovers part of the loss.
    (Hand-off succession: unlock passes the lock to a blocked waiter; the JVM's competitive
    succession is checked below.)"""
    counts = (10, 100, 1000, 3000)
    mainline = chat_msgs_per_s("2.6.22", counts[0])
    soft = [chat_msgs_per_s("rsdl-0.31", n) / mainline for n in counts]
    expire = [chat_msgs_per_s("rsdl-0.33", n) / mainline for n in counts]
    longer = chat_msgs_per_s("rsdl-0.31", 3000, rr_interval=100) / mainline
    assert all(a > b for a, b in zip(soft, soft[1:], strict=False)), soft
    assert soft[-1] < 0.85 and min(expire) >= 0.9, (soft, expire)
    assert soft[-1] < longer < expire[-1], (soft[-1], longer, expire[-1])


def test_rsdl_031_loses_half_at_3000_yields_under_handoff():
    """0.31 at 3000 yields under hand-off succession: 0.31x of mainline (10.1k of 32.4k
    msgs/s).  Holds since the balancer reads cpu_load[type-1] (0.74x before; strict xfail
    since RSDL's major-epoch rule)."""
    mainline = chat_msgs_per_s("2.6.22", 10)
    assert chat_msgs_per_s("rsdl-0.31", 3000) / mainline <= 0.5


@pytest.mark.slow
def test_rsdl_031_rr_interval_100_recovers_part_once_its_quotas_are_spent():
    """rr_interval 100 measured where its quotas are spent: at 150 messages each client runs
    9 ms (150 x 60 us), about one 8 ms quota but a tenth of a 100 ms one, so at rr_interval 100
    no task descends, nothing preempts a lock holder (0 preemptions, 0 yields) and the loss
    cannot appear.  At 7500 messages each client runs 450 ms, 4.5 quotas of 100 ms: seed 1
    0.31 0.05x of mainline (1,661 msgs/s), rr_interval 100 0.42x (3,706 preemptions), 0.33
    1.00x (seed 2: 0.06x, 0.63x, 0.99x)."""
    params = {"rooms": 4, "clients": 20, "messages": 7500, "think_us": 50, "cs_us": 10,
              "lock": "yield", "spin_yields": 3000, "succession": "handoff"}

    def msgs(kernel, **tunables):
        return simulator.run({"workload": "chatroom", "kernel": kernel, "cpus": 2, "seed": 1,
                              "params": params, "tunables": tunables}
                             )["metrics"]["throughput_msgs_per_s"][0]

    mainline = msgs("2.6.22")
    soft, longer = msgs("rsdl-0.31") / mainline, msgs("rsdl-0.31", rr_interval=100) / mainline
    expire = msgs("rsdl-0.33") / mainline
    assert soft <= 0.5 and soft < longer < expire and longer < 0.9 <= expire, (soft, longer,
                                                                              expire)


def test_vmstat_sampling_only_observes():
    """A vmstat sample reads each CPU's busy time without accounting the running task: an
    accounting split the segment of a yield-spinner (which dropped its part-done yield) and of
    an RSDL task alone on its runqueue (whose lazy rotation then differed), so RSDL 0.31's
    hand-off ring gave 17,840 msgs/s at 100 ms, 18,039 at 1 ms and 17,418 at 0.1 ms."""
    runs = [chatroom("rsdl-0.31", 1, vmstat_interval_ms=ms) for ms in (100, 1, 0.1)]
    for run in runs:  # the sample events themselves are all that may differ
        run[2].pop("events")
    assert all(run[0] == runs[0][0] and run[2] == runs[0][2] for run in runs), [
        run[0] for run in runs]


def j9_chat(kernel, seed=1, **tunables):
    """The chat server with IBM J9's documented monitor spinning (``jvm=j9``) and the JVM's
    competitive succession (the default)."""
    return chatroom(kernel, seed, jvm_lock={"jvm": "j9"}, **tunables)


def test_the_j9_preset_is_its_documented_counts():
    """``jvm=j9`` is nothing but J9's -Xthr defaults: 45 yields, each after 32 x 256 loops.
    The run must spin and block for the comparison to mean anything: 4 rooms x 20 clients
    (810 yields, 18 spinners blocked on 0.31).  A smaller run (2 rooms x 8 clients) no longer
    spins since the balancer reads cpu_load[type-1]: the idle CPU pulls at its first idle tick
    and each room's ring settles on a CPU of its own, where a waiter seldom finds the holder
    preempted (0 yields; 360 before)."""
    spec = {"workload": "chatroom", "kernel": "rsdl-0.31", "cpus": 2,
            "params": {"rooms": 4, "clients": 20, "messages": 40, "lock": "yield"}}
    preset = simulator.run({**spec, "params": {**spec["params"], "jvm": "j9"}})
    spelled = simulator.run({**spec, "params": {**spec["params"], "spin_yields": 45,
                                                "spin_loops": 32 * 256}})
    assert preset["metrics"] == spelled["metrics"] and preset["counters"] == spelled["counters"]
    assert preset["counters"]["yields"] > 0 and preset["counters"]["spin_blocks"] > 0


def test_j9_busy_wait_costs_as_the_calibrated_loop():
    """The busy wait between two yields is 8,192 loop iterations at ``loop_ns``: a faster loop
    gives up sooner, so RSDL 0.31 (whose yields keep the spinner on the CPU) loses less."""
    mainline = j9_chat("2.6.22")[0]
    soft = [j9_chat("rsdl-0.31", loop_ns=ns)[0] / mainline for ns in (0.5, 1.0, 3.0)]
    assert soft[0] > soft[1] > soft[2], soft


def _blocked_after_unlock(wake_all):
    """Three tasks blocked on a lock whose holder sleeps holding it; how many are still blocked
    right after the holder's unlock (competitive succession)."""
    norm = validate({"workload": "chatroom", "kernel": "2.6.22", "cpus": 1})
    eng = Engine(parse_topology(norm["topology"]), make_policy(norm, 1), norm["tunables"], 1,
                 10**6)
    b = Build(eng, norm["params"])
    room = Mutex("room", handoff=False, wake_all=wake_all)
    seen: list[int] = []
    b.start(b.task("holder", [(LOCK, room, "futex"), (SLEEP, 5 * MS), (UNLOCK, room),
                              (MARK, lambda eng, task: seen.append(len(room.waiters))), (EXIT,)]))
    for i in range(3):
        b.start(b.task(f"w{i}", [(LOCK, room, "futex"), (RUN, MS), (UNLOCK, room), (EXIT,)]))
    eng.run()
    return seen[0]


def test_j9_monitor_exit_wakes_every_blocked_waiter():
    """`succession=wakeall`: J9's three-tier monitor exit (Apache Harmony's hythread,
    monitor_exit() -> unblock_spinlock_threads()) notifies every thread blocked on the monitor,
    each to spin again; the JVM's competitive succession as modelled before wakes the first."""
    assert _blocked_after_unlock(wake_all=False) == 2
    assert _blocked_after_unlock(wake_all=True) == 0


@pytest.mark.parametrize("seed", [1, 2])
def test_rsdl_033_with_j9_monitors_keeps_mainline_throughput(seed):
    """J9's documented spin counts, competitive succession, the model's loop_ns (3 ns): 0.33
    expires a yielder, so a preempted lock holder runs at once and 0.33 keeps at least 0.9x of
    mainline's throughput; so does 0.31 with rr_interval 100 (rotations rarer)."""
    mainline = j9_chat("2.6.22", seed)[0]
    longer = j9_chat("rsdl-0.31", seed, rr_interval=100)[0] / mainline
    expire = j9_chat("rsdl-0.33", seed)[0] / mainline
    assert expire >= 0.9 and longer >= 0.9, (longer, expire)


@pytest.mark.xfail(strict=True, reason="issue 24's target (0.31 at most 0.5x, rr_interval 100 "
                   "between, 0.33 at least 0.9x) does not hold since RSDL's major-epoch rule: "
                   "0.31 gives 0.90x / 0.99x on seeds 1 / 2 (0.51x / 0.55x before the rule, "
                   "when a task that slept across a major rotation woke at its old, worse level)"
                   "; J9's wake-all monitor exit (succession=wakeall) 0.90x / 0.99x; summed "
                   "level quotas (level_quota_sum) 0.89x / 0.92x with rr_interval 100 at 1.02x, "
                   "not between. Since the balancer reads cpu_load[type-1] 0.31 gives 0.98x / "
                   "0.98x, rr_interval 100 1.04x / 1.03x, 0.33 1.02x / 1.03x")
@pytest.mark.parametrize("seed", [1, 2])
def test_rsdl_031_with_j9_monitors_loses_033_recovers(seed):
    mainline = j9_chat("2.6.22", seed)[0]
    soft = j9_chat("rsdl-0.31", seed)[0] / mainline
    longer = j9_chat("rsdl-0.31", seed, rr_interval=100)[0] / mainline
    expire = j9_chat("rsdl-0.33", seed)[0] / mainline
    assert soft <= 0.5 and soft < longer < expire and expire >= 0.9, (soft, longer, expire)


@pytest.mark.xfail(strict=True, reason="under the JVM's competitive succession 0.31 shows as "
                   "many runnable tasks as 2.6.22 and less idle time (r 6.5 vs 6.3, id 3.3 vs "
                   "4.2 %; 0.33 r 6.8, id 3.1 %): the ring keeps 6-7 tasks runnable, and what "
                   "emptied the runqueues in the thread (53 % idle) is not modelled "
                   "(docs/simulator.md, issue 24: RSDL); with summed level quotas "
                   "(level_quota_sum) r 6.9 and id 2.3 %, with J9's wake-all exit as before. "
                   "Since the balancer reads cpu_load[type-1]: 0.31 r 7.5, id 2.9 %; 2.6.22 r "
                   "6.5, id 5.1 %; 0.33 r 7.3, id 2.9 %")
def test_rsdl_031_vmstat_signature_with_j9_monitors():
    soft_vm = j9_chat("rsdl-0.31")[1]
    for other in ("rsdl-0.33", "2.6.22"):
        other_vm = j9_chat(other)[1]
        assert soft_vm["r"] < other_vm["r"] and soft_vm["id"] > other_vm["id"], (other, soft_vm,
                                                                                  other_vm)


@pytest.mark.parametrize("succession", ["competitive", "handoff"])
def test_yields_that_keep_the_cpu_switch_nothing(succession):
    """Every switch puts on a CPU a task that was woken, preempted, started, or that another
    task's yield let in.  0.31's yields keep the spinner on the CPU: its switches are exactly
    wakeups + preemptions + first starts, however many yields; 0.33's hand over.  Under the
    JVM's competitive succession 0.31 yields 1,485 times against 2,748 switches (since the
    balancer reads cpu_load[type-1]; 3,419 against 3,280 before), so the hand-off run, with
    53,100 yields against 4,597 switches, is the one that shows yields adding no switch."""
    for kernel in ("rsdl-0.31", "rsdl-0.33"):
        counters = chatroom(kernel, jvm_lock={"jvm": "j9", "succession": succession})[2]
        base = counters["wakeups"] + counters["preemptions"] + 80  # 4 rooms x 20 clients
        if kernel == "rsdl-0.31":
            assert counters["context_switches"] == base, counters
            if succession == "handoff":
                assert base < counters["yields"], counters
        else:
            assert base < counters["context_switches"] <= base + counters["yields"], counters


def threadtest_ms(kernel, loops, iterations=50, **tunables):
    """threadtest on 2 CPUs as the thread ran it: the spin loop yields from 1M loops on."""
    params = {"iterations": iterations, "loops": loops, "yield_in_spin": loops >= 1_000_000}
    return simulator.run({"workload": "threadtest", "kernel": kernel, "cpus": 2,
                          "params": params, "tunables": tunables})["metrics"]["time_ms"][0]


def _balance_times(tmp_path, *tunables):
    trace = tmp_path / "trace.txt"
    args = ["run", "--workload", "threadtest", "--kernel", "2.6.22", "--param", "iterations=6",
            "--param", "loops=10000", "--trace", str(trace)]
    for setting in tunables:
        args += ["--set", setting]
    assert cli_main(args, out=io.StringIO(), err=io.StringIO()) == 0
    lines = [line.split() for line in trace.read_text().splitlines()]
    return [int(f[0]) for f in lines if len(f) > 2 and f[1] == "cpu1" and f[2] == "loads"]


def test_each_cpu_ticks_at_its_own_phase(tmp_path):
    """2.6.22's tick_setup_sched_timer() starts CPU 1's tick (4 ms / 2) / 2 CPUs = 1 ms after
    CPU 0's, so the idle CPU's balance passes (run from its tick) fall 1 ms past a jiffy;
    with tick_skew=0 every CPU ticks on the jiffy."""
    tick = 4_000_000
    skewed = _balance_times(tmp_path)
    aligned = _balance_times(tmp_path, "tick_skew=0")
    assert skewed and {t % tick for t in skewed} == {1_000_000}, skewed
    assert aligned and {t % tick for t in aligned} == {0}, aligned


def test_threadtest_iterations_are_no_longer_whole_ticks():
    """Aligned ticks made every 10k-loop iteration cost exactly one 4 ms tick (the idle CPU's
    pull); with CPU 0's slice expiry and CPU 1's balance at different instants an iteration
    ends at whichever comes first."""
    iterations = 50
    aligned = threadtest_ms("2.6.22", 10_000, iterations, tick_skew=0) / iterations
    skewed = threadtest_ms("2.6.22", 10_000, iterations) / iterations
    assert aligned == pytest.approx(4.0, abs=0.1), aligned
    assert 3.0 < skewed < 3.9, skewed


@pytest.mark.parametrize("loops", [
    10_000,
    pytest.param(1_000_000, marks=pytest.mark.xfail(
        strict=True, reason="2.6.23 is not slower than 2.6.22 at 1M loops (2.6.22 300 ms, "
        "2.6.23 297, 2.6.24 1075): at the default 3 ns per loop 2.6.23 runs its two 3 ms loops "
        "one after the other, as its source does (checked event by event), and 2.6.22's "
        "forks lock to alternating phases against the tick so its iteration is 1.5 ticks, "
        "also 6.0 ms; its few early pulls at the kept deadline make 2.6.23 1 % faster "
        "(test_1m_tie_is_2622_locked_to_the_tick_while_2623_runs_serially; holds at the "
        "thread's 4.72 ns and with +-3 % work jitter; docs/simulator.md, issue 24)")),
])
def test_2623_lands_between_2622_and_2624(loops):
    """The thread's order at 10k (busy spin) and 1M loops (yield in the spin): 2.6.23 slower
    than 2.6.22, faster than 2.6.24.  (1M does not hold: docs/simulator.md.)"""
    times = [threadtest_ms(kernel, loops) for kernel in ("2.6.22", "2.6.23", "2.6.24")]
    assert times[0] < times[1] < times[2], times


def _cfs_policy(kernel):
    tun = simulator.validate({"workload": "threadtest", "kernel": kernel, "cpus": 2})["tunables"]
    policy = CfsPolicy(kernel, tun, 2)
    rq = policy.new_rq(0)
    parent = _task(1)
    parent.vruntime = 50_000_000
    rq.min_vruntime = parent.vruntime
    rq.curr, rq.nr_running, rq.load = parent, 1, parent.weight
    return policy, rq, parent


def _two_on_a_cpu(kernel):
    """A nice-0 task running beside one queued at the key it had when it was picked."""
    policy, rq, curr = _cfs_policy(kernel)
    other = _task(2)
    other.vruntime = curr.vruntime
    policy._insert(rq, other)
    rq.nr_running, rq.load = 2, curr.weight + other.weight
    curr.sum_exec = curr.prev_sum_exec = 0
    return policy, rq, curr


def test_2623_tick_preempts_on_a_lead_of_sched_granularity():
    """2.6.23's entity_tick() (2.6.23.17's sched_fair.c): two nice-0 tasks on a CPU of a
    2-CPU machine (latency 40 ms, min granularity 4 ms): the running one loses the CPU at the
    tick once its key leads the waiting one's by more than sched_granularity() = 40/2 - 40/4
    = 10 ms; 2.6.24's check_preempt_tick() waits for its 20 ms slice."""
    ms = 1_000_000
    policy, rq, curr = _two_on_a_cpu("2.6.23")
    assert policy.preempt_time(rq, curr, 0) == 10 * ms + 1
    curr.vruntime += 10 * ms
    curr.sum_exec = 10 * ms
    assert not policy.tick_preempt(rq, curr, curr.sum_exec)  # a lead of exactly 10 ms
    curr.vruntime += 1
    curr.sum_exec += 1
    assert policy.tick_preempt(rq, curr, curr.sum_exec)
    policy, rq, curr = _two_on_a_cpu("2.6.24")
    assert policy.preempt_time(rq, curr, 0) == 20 * ms
    curr.vruntime += 10 * ms + 1
    curr.sum_exec = 10 * ms + 1
    assert not policy.tick_preempt(rq, curr, curr.sum_exec)


def test_2623_preemption_needs_any_lead_once_curr_ran_past_ideal_runtime():
    """__check_preempt_curr_fair() zeroes the granularity once curr ran more than
    max(latency / nr_running, min granularity) = 20 ms since it was picked, at the tick and at
    a wakeup; before that a wakee needs a lead above the 2 ms wakeup granularity."""
    ms = 1_000_000
    policy, rq, curr = _two_on_a_cpu("2.6.23")
    wakee = _task(3)
    wakee.vruntime = curr.vruntime - 2 * ms
    assert not policy.wakeup_preempts(rq, curr, wakee, 0)
    wakee.vruntime -= 1
    assert policy.wakeup_preempts(rq, curr, wakee, 0)
    wakee.vruntime = curr.vruntime - 1
    curr.sum_exec = 20 * ms + 1
    assert policy.wakeup_preempts(rq, curr, wakee, 0)
    curr.vruntime += 1  # a lead of one ns over the queued task
    assert policy.tick_preempt(rq, curr, curr.sum_exec)
    curr.vruntime -= 1  # level with it: requeued right of the equal key, curr stays leftmost
    assert not policy.tick_preempt(rq, curr, curr.sum_exec)


@pytest.mark.parametrize("kernel, scaled", [("3.3", True), ("2.6.24", False)])
def test_wakeup_granularity_is_in_the_wakees_virtual_time_on_33(kernel, scaled):
    """3.3's wakeup_gran(curr, se) is calc_delta_fair(gran, se): a wakee of weight 256 needs
    four times the nice-0 lead to preempt; the 2.6.24 profile compares with the plain one."""
    policy, rq, curr = _cfs_policy(kernel)
    gran = policy.wakeup_gran
    for weight, lead in ((1024, gran), (256, 4 * gran), (2048, gran // 2)):
        wakee = _task(2, weight)
        wakee.vruntime = curr.vruntime - (lead if scaled else gran) - 1
        assert policy.wakeup_preempts(rq, curr, wakee, 0), (weight, lead)
        wakee.vruntime += 2
        assert not policy.wakeup_preempts(rq, curr, wakee, 0), (weight, lead)


def test_a_flattened_cgroups_task_scales_the_granularity_by_its_group_entity():
    """A vCPU runs at its group's shares split over the group's tasks (256 of 1024 here), but
    3.3 compares the group's entity at wakeup (find_matching_se()): the granularity is scaled
    by the entity's weight, the shares, so the nice-0 lead suffices, where its own weight
    would need four times that."""
    policy, rq, curr = _cfs_policy("3.3")
    gran = policy.wakeup_gran
    vcpu = _task(2, 256)
    vcpu.vruntime = curr.vruntime - gran - 1
    assert not policy.wakeup_preempts(rq, curr, vcpu, 0)
    vcpu.entity_weight = 1024
    assert policy.wakeup_preempts(rq, curr, vcpu, 0)
    vcpu.vruntime += 2
    assert not policy.wakeup_preempts(rq, curr, vcpu, 0)


def test_overcommit_gives_its_tasks_their_groups_shares_as_entity_weight():
    from simulator.api import make_policy
    from simulator.engine import Engine
    from simulator.topology import parse_topology
    from simulator.wl_common import Build
    from simulator.workloads import WORKLOADS

    norm = simulator.validate({"workload": "overcommit", "kernel": "3.3", "topology": "1x4x2",
                               "params": {"vcpus": 8, "vm_shares": 2048, "hog_shares": 512},
                               "tunables": {"shares_window_ms": 0}})  # the flattening
    topo = parse_topology("1x4x2")
    eng = Engine(topo, make_policy(norm, topo.ncpus), norm["tunables"], 1, 10_000, None)
    WORKLOADS["overcommit"].build(Build(eng, norm["params"]))
    weights = {t.name: (t.weight, t.entity_weight) for t in eng.tasks.values()}
    assert weights["vcpu0"] == (256, 2048), weights
    assert all(entity == 512 for name, (_w, entity) in weights.items()
               if name.startswith("hog")), weights


class _ShareCpus:
    """The engine as GroupShares sees it: CPUs with nothing running."""

    def __init__(self, ncpus):
        self.cpus = [type("Cpu", (), {"curr": None})() for _ in range(ncpus)]


def _group_task(tid, shares=1024):
    task = Task(tid, f"vcpu{tid}", [], "vm")
    task.group_shares = shares
    return task


def test_windowed_shares_weigh_a_groups_entity_by_its_load_here_against_its_load_elsewhere():
    """3.x's calc_cfs_shares(): alone, a group's entity weighs its full shares; once another
    CPU's averaged load of that group is folded into tg->load_weight (update_shares()), an
    entity here weighs shares x its load here / (the others' averages + its load here); four
    idle windows later the other CPU's history is truncated and the full shares come back."""
    window = 10_000_000
    shares = GroupShares(_ShareCpus(2), window)
    rq0, rq1 = RunQueue(0), RunQueue(1)
    first, second = _group_task(1), _group_task(2)
    shares.join(rq0, first, 0)
    assert (first.weight, first.entity_weight, rq0.load) == (1024, 1024, 1024)
    shares.global_update(rq0, 3 * window)  # three windows with one task runnable on CPU 0
    assert shares.tg_load["vm"] == pytest.approx(1024, rel=0.01)
    shares.join(rq1, second, 3 * window)
    assert second.weight == pytest.approx(512, rel=0.01) and rq1.load == second.weight
    rq0.load -= first.weight
    shares.leave(rq0, first, 3 * window)
    shares.global_update(rq0, 5 * window)  # an idle update: the average decays
    assert 0 < shares.tg_load["vm"] < 1024
    shares.global_update(rq0, 8 * window)  # over four windows since it had load: dropped
    assert shares.tg_load["vm"] == 0
    shares.leave(rq1, second, 8 * window)
    shares.join(rq1, second, 8 * window)
    assert second.weight == 1024


class _RunningCpus:
    """The engine as GroupShares sees it: each CPU's running task, its time already charged."""

    def __init__(self, running):
        self.cpus = [type("Cpu", (), {"curr": task})() for task in running]

    def account(self, cpu):
        pass


def test_the_tick_refreshes_a_group_that_ran_a_window_without_an_update():
    """3.x's update_entity_shares_tick(): a hog that runs on without sleeping gets no
    enqueue or dequeue, so its cfs_rq's average is folded into tg->load_weight only when its
    unaccounted run time passes a window (at the tick; here at the next enqueue or dequeue on
    that CPU).  Two hogs of one group on two CPUs both weigh the full shares until CPU 0's and
    then CPU 1's run time is folded: CPU 1's entity then weighs half.  Less than a window of
    run time changes nothing."""
    window = 10_000_000
    first, second = _group_task(1), _group_task(2)
    first.group = second.group = "hogs"
    first.state = second.state = RUNNING
    shares = GroupShares(_RunningCpus([first, second]), window)
    rq0, rq1 = RunQueue(0), RunQueue(1)
    shares.join(rq0, first, 0)
    shares.join(rq1, second, 0)
    assert first.weight == second.weight == 1024
    first.sum_exec = second.sum_exec = window // 2  # half a window: no tick refresh
    shares.join(rq0, _group_task(3), window // 2)
    shares.join(rq1, _group_task(4), window // 2)
    assert shares.tg_load["hogs"] == 0 and second.weight == 1024
    first.sum_exec = second.sum_exec = 3 * window // 2
    shares.join(rq0, _group_task(5), 3 * window // 2)  # the vCPUs' group, not the hogs'
    shares.join(rq1, _group_task(6), 3 * window // 2)
    assert shares.tg_load["hogs"] == pytest.approx(2048, rel=0.01)
    assert second.weight == pytest.approx(512, rel=0.01)


def test_the_shares_window_is_on_for_33_only_and_changes_a_waiting_vm():
    """`shares_window_ms` switches the windowed shares: 3.3 has it (10 ms), 2.6.24 not; where
    the vCPUs wait behind hogs, the run with the window differs from the flattened one."""
    waiting = {"vcpus": 8, "hog_group_sizes": "6,6", "kick": "ipi"}
    default, windowed, flat = (_overcommit(waiting, "3.3", **t) for t in
                               ({}, {"shares_window_ms": 10}, {"shares_window_ms": 0}))
    assert default["metrics"] == windowed["metrics"] != flat["metrics"]
    old, old_windowed = (_overcommit(waiting, "2.6.24", **t) for t in
                         ({}, {"shares_window_ms": 10}))
    assert old["metrics"] != old_windowed["metrics"]


def _pelt_policy(ncpus):
    tun = {"sched_cost_ns": 0, "base_slice_ns": 750_000, "sched_cost_log_ns": 0, "HZ": 250,
           "run_to_parity": True, "group_shares_pelt": True}
    policy = EevdfPolicy("6.6-eevdf", tun, ncpus)
    policy.shares = PeltShares(_ShareCpus(ncpus), policy)  # what attach() sets up
    return policy


def test_pelt_shares_weigh_a_groups_entity_by_its_average_here_against_the_groups():
    """6.6's calc_group_shares(): a new task starts at full load (its average is its
    weight), so a second CPU's entity of the group weighs shares x 1024 / (1024 + 1024); the
    first task asleep, its average halves every 32 periods of 1024 us and the second's
    entity gains weight; the average is folded into tg->load_avg only when it moved by more
    than 1/64, and a queued task's remaining virtual deadline is rescaled at a reweight."""
    policy = _pelt_policy(2)
    rq0, rq1 = policy.new_rq(0), policy.new_rq(1)
    first, second = _group_task(1), _group_task(2)
    policy.enqueue(rq0, first, "fork", 0)
    assert (first.weight, first.entity_weight, rq0.load) == (1024, 1024, 1024)
    policy.enqueue(rq1, second, "fork", 0)
    assert second.weight == 512 and rq1.load == 512
    # fork: a full slice (6.6's wake_up_new_task() places the child without ENQUEUE_INITIAL)
    assert second.deadline - second.vruntime == policy.slice * 1024 // 512
    policy.dequeue(rq0, first, 0)  # asleep from now on, still attached to CPU 0
    half_life = 32 * 1_024_000
    policy.rebalance_tick(rq0, half_life)  # CPU 0 folds its halved average: 512
    assert policy.shares.tg_load["vm"] == pytest.approx(512 + 1024, abs=2)
    left = second.deadline - second.vruntime
    policy.rebalance_tick(rq1, half_life)
    assert second.weight == pytest.approx(1024 * 1024 // (512 + 1024), abs=2)
    assert second.deadline - second.vruntime == pytest.approx(left * 512 / second.weight, abs=2)
    folded = policy.shares.tg_load["vm"]
    policy.rebalance_tick(rq0, half_life + 100_000)  # a 0.2 % decay: not folded
    assert policy.shares.tg_load["vm"] == folded


def test_66s_wake_load_is_the_pelt_load_without_the_wakees_own():
    """6.6's update_sg_wakeup_stats() sums cpu_load_without(): the root runqueue's PELT load
    (a group entity's weight x its runnable fraction, here its attached tasks' fractions, at
    most 1), the wakee's task_h_load() taken off on the CPU it last ran on.  Two vCPUs asleep
    on CPU 0 for a half-life: its instantaneous load is 0, its PELT load the entity's weight x
    (1/2 + 1/2); without one of them, x 1/2; a task of no group counts at its weight."""
    policy = _pelt_policy(2)
    rq0 = policy.new_rq(0)
    first, other = _group_task(1), _group_task(2)
    for task in (first, other):
        policy.enqueue(rq0, task, "fork", 0)
    for task in (first, other):
        policy.dequeue(rq0, task, 0)
    half_life = 32 * 1_024_000
    entity = policy.shares.rqs[("vm", 0)].se_weight
    assert rq0.load == policy.load_of(rq0) == 0
    assert policy.wake_load(rq0, half_life, None) == pytest.approx(entity, abs=1)
    assert policy.wake_load(rq0, half_life, first) == pytest.approx(entity / 2, abs=1)
    plain = _task(3)
    policy.enqueue(rq0, plain, "fork", half_life)
    assert policy.wake_load(rq0, half_life, first) == pytest.approx(entity / 2 + 1024, abs=1)


def test_66s_exited_group_task_leaves_the_pelt_load():
    """task_dead_fair() -> remove_entity_load_avg(): a group task that exits takes its average
    off the group runqueue it sat on, so cpu_load() no longer counts it (a sleeping one stays
    attached, decaying: after a half-life each of two sleepers counts half the entity's
    weight).  Before, exited tasks stayed attached for the rest of the run."""
    policy = _pelt_policy(2)
    rq0 = policy.new_rq(0)
    leaving, sleeping = _group_task(1), _group_task(2)
    for task in (leaving, sleeping):
        policy.enqueue(rq0, task, "fork", 0)
    for task in (leaving, sleeping):
        policy.dequeue(rq0, task, 0)
    half_life = 32 * 1_024_000
    entity = policy.shares.rqs[("vm", 0)].se_weight
    assert policy.wake_load(rq0, half_life, None) == pytest.approx(entity, abs=1)
    leaving.state = DONE  # it wakes, runs for no time and exits
    policy.enqueue(rq0, leaving, "wakeup", half_life)
    policy.dequeue(rq0, leaving, half_life)
    grq = policy.shares.rqs[("vm", 0)]
    assert leaving not in grq.attached and sleeping in grq.attached
    assert leaving.tid not in policy.shares.avgs
    entity = grq.se_weight
    assert policy.wake_load(rq0, half_life, None) == pytest.approx(entity / 2, abs=1)


def test_pelt_shares_are_on_for_66_and_change_a_waiting_vm():
    """`group_shares_pelt` switches 6.6's group shares (on in the 6.6-eevdf profile); where
    the vCPUs wait behind hogs the run differs from the flattened one."""
    waiting = {"vcpus": 8, "hog_group_sizes": "6,6", "kick": "ipi"}
    default, pelt, flat = (_overcommit(waiting, "6.6-eevdf", **t) for t in
                           ({}, {"group_shares_pelt": True}, {"group_shares_pelt": False}))
    assert default["metrics"] == pelt["metrics"] != flat["metrics"]


def test_2623_new_thread_starts_neutral_where_2624_debits_it_and_swaps():
    """2.6.23 queues a new thread with activate_task(): it starts at its parent's vruntime
    (CFS v1's neutral start, no START_DEBIT), the parent keeps its key and is not preempted.
    2.6.24's task_new_fair() places the child a slice to the right (START_DEBIT) and, child
    runs first, swaps the two keys: the parent is pushed back by that slice."""
    policy, rq, parent = _cfs_policy("2.6.23")
    child = _task(2)
    policy.task_fork(rq, parent, child, 0, True)
    assert child.vruntime == parent.vruntime == 50_000_000
    assert not policy.child_runs_first(parent, child)
    assert not policy.wakeup_preempts(rq, parent, child, 0)

    policy, rq, parent = _cfs_policy("2.6.24")
    child = _task(2)
    policy.task_fork(rq, parent, child, 0, True)
    assert child.vruntime == 50_000_000
    assert parent.vruntime == 50_000_000 + policy.ideal_slice(rq, child) > child.vruntime
    assert policy.child_runs_first(parent, child)


def burn_ht(kernel, **tunables):
    return burn(kernel, 2000, 100, topology="1x1x2", tunables=tunables)["time_us"][0]


def test_2625_forks_onto_the_idle_hardware_thread_and_beats_2624_on_ht():
    """The burn machine's topology (one core, two hardware threads), 100 us bursts: 2.6.25's
    SMT domain balances on fork, so the child starts on the idle sibling and the two burns
    overlap at once; 2.6.24 queues the child on its parent's thread and the parent waits for
    the sibling's next balance tick.  The thread's direction: 2.6.25 at least 2x faster."""
    old, new = burn_ht("2.6.24"), burn_ht("2.6.25")
    assert new * 2 <= old, (old, new)
    # the fork balancing is what starts the overlap at once: without it the child waits for
    # the (kicked) idle balance and 2.6.25 is many times slower than with it
    assert burn_ht("2.6.25", balance_fork_smt=0) > 10 * new, new


def test_smt_fork_balancing_changes_nothing_without_an_smt_level():
    """Two cores without hardware threads have no SMT domain: the flag has nothing to do."""
    runs = [burn("2.6.25", 50, 100, tunables={"balance_fork_smt": flag}) for flag in (0, 1)]
    assert runs[0] == runs[1]


def test_compat_yield_makes_2624_three_times_faster_at_1m_loops():
    """1M loops, yield in the spin: the child runs first and, with compat 0, spins on a
    near no-op yield until its vruntime passes the parent's START_DEBIT key, because the idle
    CPU keeps the balance deadline it had while busy and does not pull the waiting parent
    sooner; compat 1 hands the CPU to the parent at the child's first yield."""
    plain = threadtest_ms("2.6.24", 1_000_000)
    compat = threadtest_ms("2.6.24", 1_000_000, sched_compat_yield=1)
    assert plain >= 3 * compat, (plain, compat)


# ------------------------------------------------------------------ wake placement (issue 24)
THREAD_PATCH = {"balance_wake": True, "wake_affine": False}


def _wake_placement(kernel, queued, prev, waker, sync=False, **tunables):
    """The CPU a nice-0 task last run on ``prev`` is woken onto by a task on ``waker``, with
    ``queued[i]`` nice-0 tasks runnable on CPU i of a 1xNx1 machine (none of them running)."""
    norm = validate({"workload": "wake-pingpong", "kernel": kernel, "cpus": len(queued),
                     "tunables": tunables})
    eng = Engine(parse_topology(norm["topology"]), make_policy(norm, norm["cpus"]),
                 norm["tunables"], 1, 10**6)
    tid = 0
    for cpu, count in enumerate(queued):
        for _ in range(count):
            tid += 1
            eng.spawn(_task(tid), cpu)
    sleeper = _task(tid + 1)
    sleeper.cpu = prev
    return select_wake_cpu(eng, sleeper, waker, sync)


def test_66s_wake_affine_pulls_a_sync_wakee_to_a_waker_alone_on_its_cpu():
    """6.6's wake_affine_idle(): a sync waker that is the only task on its CPU takes the
    wakee whatever the loads; 3.3's wake_affine() weighs them: here nothing runs on the
    waking CPU, so there is no waker's weight to take off, and 1024 + the wakee's 1024
    against 112 % of prev's 1024 keeps the wakee on prev (with the waker running alone its
    CPU's load falls to 0, which 3.x calls balanced:
    test_33_wake_affine_and_select_idle_sibling_as_3x_has_them)."""
    assert _wake_placement("6.6-eevdf", [1, 1, 1, 1], 1, 0, sync=True) == 0
    assert _wake_placement("3.3", [1, 1, 1, 1], 1, 0, sync=True) == 1
    # not sync: 6.6's wake_affine_weight(), strictly less, keeps it on prev as well
    assert _wake_placement("6.6-eevdf", [1, 1, 1, 1], 1, 0) == 1


@pytest.mark.parametrize("kernel", ["3.3", "6.6-eevdf"])
def test_balance_on_wake_is_consulted_only_without_an_affine_domain(kernel):
    """select_task_rq_fair(): a level with SD_WAKE_AFFINE spanning the previous CPU wins over
    SD_BALANCE_WAKE, so the flag alone moves nothing; with the thread's patch the wakee goes to
    the one CPU with nothing runnable, or the least loaded one.  The tasks here are just
    created: on 6.6 that case is taken at steady state (pelt_signals off), since with PELT a
    CPU of two fresh tasks carries 768 of util and group_classify() gives it spare capacity
    (the idlest by idle CPUs then, test_pelt.py)."""
    steady = {"pelt_signals": False} if kernel == "6.6-eevdf" else {}
    plain = _wake_placement(kernel, [1, 1, 1, 0], 1, 0)
    assert _wake_placement(kernel, [1, 1, 1, 0], 1, 0, balance_wake=True) == plain
    # the affine path's own choice: 3.3's select_idle_sibling() does not take prev, which has
    # a task queued (not idle_cpu()), and walks the cache domain's groups to the idle CPU 3
    # (idle_sibling_form 3.x); 6.6's model keeps prev
    assert plain == (3 if kernel == "3.3" else 1)
    assert _wake_placement(kernel, [1, 1, 1, 0], 1, 0, **THREAD_PATCH) == 3
    assert _wake_placement(kernel, [2, 2, 1, 2], 1, 0, **THREAD_PATCH, **steady) == 2
    # equally idle groups: the first in the kernel's walk, which starts at the waker's own
    # group and wraps (build_sched_groups()' circular list), not the lowest-numbered
    assert _wake_placement(kernel, [1, 0, 1, 0], 1, 2, **THREAD_PATCH) == 3


def test_balance_on_wake_with_nothing_better_keeps_prev_on_33_and_the_waker_cpu_on_66():
    """No group beats the waker's: 3.3 leaves new_cpu at the previous CPU; 6.6's
    find_idlest_cpu() starts from the waking CPU and keeps it."""
    assert _wake_placement("3.3", [1, 1, 1, 1], 1, 0, **THREAD_PATCH) == 1
    assert _wake_placement("6.6-eevdf", [1, 1, 1, 1], 1, 0, **THREAD_PATCH) == 0


def _33_sync_wake_from_a_lone_waker(**tunables):
    """3.3 on 1x3x2 (cores 0-1, 2-3, 4-5): the waker runs alone on CPU 0, CPU 1 (its
    sibling) and CPU 3 have a task each, the wakee last ran on the idle CPU 2 (whose sibling
    3 is busy), core 4-5 is wholly idle.  Returns (wake_affine()'s answer, the CPU chosen)."""
    norm = validate({"workload": "wake-pingpong", "kernel": "3.3", "topology": "1x3x2",
                     "tunables": tunables})
    eng = Engine(parse_topology(norm["topology"]), make_policy(norm, norm["cpus"]),
                 norm["tunables"], 1, 10**6)
    for tid, cpu in enumerate((0, 1, 3), start=1):
        eng.spawn(_task(tid), cpu)
    eng.cpus[0].curr = eng.tasks[1]  # the waker, running (its weight is in CPU 0's load)
    wakee = _task(9)
    wakee.cpu = 2
    affine = _wake_affine(eng, wakee, 0, 2, True, eng.cpus[0].domains[-1])
    return affine, select_wake_cpu(eng, wakee, 0, True)


def test_33_wake_affine_and_select_idle_sibling_as_3x_has_them():
    """3.x's wake_affine(): a sync waker alone on its CPU leaves this_load at 0, which is
    balanced ("if (this_load > 0) ... else balanced = true"), so the wakee is pulled towards
    the waker even though its previous CPU is idle (the imbalance test alone, 1024 against
    112 % of 0, kept it there); 3.3's select_idle_sibling() then takes neither the busy
    waker's CPU nor the idle previous CPU (it is not the target) but walks the cache domain's
    groups from the target's core and takes the first wholly idle core, 4-5.  Either form
    alone leaves the wakee on CPU 2."""
    assert _33_sync_wake_from_a_lone_waker() == (True, 4)
    assert _33_sync_wake_from_a_lone_waker(wake_affine_form="imbalance") == (False, 2)
    assert _33_sync_wake_from_a_lone_waker(idle_sibling_form="prev-first") == (True, 2)


def _overcommit(params, kernel="3.3", **tunables):
    return simulator.run({"workload": "overcommit", "kernel": kernel, "topology": "1x4x2",
                          "params": {"duration_ms": 60, **params}, "tunables": tunables})


def test_overcommit_hog_group_sizes_extend_hog_groups_times_hogs():
    """`hog_group_sizes` spelled as the old `hog_groups` x `hogs` is the same run; each group's
    shares are split over its own hogs; a malformed list is refused with the field named."""
    old = _overcommit({"hog_groups": 2, "hogs": 3})
    new = _overcommit({"hog_group_sizes": "3, 3", "hog_groups": 7})
    assert old["metrics"] == new["metrics"] and old["groups"] == new["groups"]
    uneven = _overcommit({"hog_group_sizes": "2,6"})
    assert {"hogs0", "hogs1"} <= set(uneven["groups"]) and "hogs2" not in uneven["groups"]
    for bad in ("3,,5", "0", "x", "3;5"):
        with pytest.raises(simulator.SpecError, match="hog_group_sizes"):
            _overcommit({"hog_group_sizes": bad})


def test_hogs_that_halt_run_their_duty_cycle_and_one_param_alone_changes_nothing():
    """`hog_run_us` with `hog_halt_us`: each hog runs, then sleeps, as another guest's vCPU
    that halts when idle; at 1 ms / 1 ms on 8 CPUs with room to spare the hog groups run about
    half of what CPU hogs run.  Either param alone keeps the CPU hog, the same run exactly."""
    params = {"hogs": 2, "duration_ms": 200}
    hog = _overcommit(params)
    halting = _overcommit({**params, "hog_run_us": 1000, "hog_halt_us": 1000})
    ran = [sum(r["groups"][g]["run_ms"] for g in ("hogs0", "hogs1")) for r in (hog, halting)]
    assert 0.4 * ran[0] < ran[1] < 0.6 * ran[0], ran
    for one in ({"hog_run_us": 1000}, {"hog_halt_us": 1000}):
        alone = _overcommit({**params, **one})
        assert alone["metrics"] == hog["metrics"] and alone["groups"] == hog["groups"]


def test_in_flight_sets_the_requests_the_ring_starts_with():
    """`in_flight` 0 is half the vCPUs (the run before the param, exactly); more than the
    vCPUs is every vCPU holding one; one request in flight serves fewer than four."""
    params = {"vcpus": 8, "hogs": 2, "duration_ms": 100}
    default, half = (_overcommit({**params, "in_flight": k}) for k in (0, 4))
    assert default["metrics"] == half["metrics"] and default["groups"] == half["groups"]
    every, beyond = (_overcommit({**params, "in_flight": k}) for k in (8, 100))
    assert every["metrics"] == beyond["metrics"] != half["metrics"]
    one = _overcommit({**params, "in_flight": 1})
    ops = "throughput_ops_per_s"
    assert one["metrics"][ops][0] < half["metrics"][ops][0], (one["metrics"], half["metrics"])


def test_a_kick_without_the_sync_hint_keeps_the_waker_counted():
    """With `kick=sync` wake_affine discounts the halting waker, with `kick=ipi` it does not:
    the two place the vCPUs differently, so the runs differ."""
    sync = _overcommit({"vcpus": 8, "hogs": 8, "hog_shares": 8192})
    ipi = _overcommit({"vcpus": 8, "hogs": 8, "hog_shares": 8192, "kick": "ipi"})
    assert sync["metrics"] != ipi["metrics"]


def test_2623_lands_between_at_the_threads_loop_speed_at_1m_loops():
    """Priced as on the thread's laptop (4.72 ns per loop, from its own 2.6.22 row at 40M
    loops) the 1M loop outlasts a 4 ms tick: the CPU running the pulled thread takes a tick
    busy and, on the CFS kernels, keeps that balance deadline once idle, so the next fork
    waits for it; 2.6.23's new thread runs as soon as its parent yields and lands between."""
    times = [threadtest_ms(kernel, 1_000_000, loop_memory_ns=4.72)
             for kernel in ("2.6.22", "2.6.23", "2.6.24")]
    assert times[0] < times[1] < times[2], times


def _ms_per_iteration_1m(kernel, seed, noise_pct):
    result = simulator.run({"workload": "threadtest", "kernel": kernel, "cpus": 2, "seed": seed,
                            "params": {"iterations": 50, "loops": 1_000_000,
                                       "yield_in_spin": True},
                            "tunables": {"noise_pct": noise_pct}})
    return result["metrics"]["time_ms"][0] / 50


def test_1m_tie_is_2622_locked_to_the_tick_while_2623_runs_serially():
    """Why 1M ties at the default 3 ns (docs/simulator.md, issue 24, "2.6.23 at 1M loops, the
    timeline against its source"): 2.6.23 runs parent and thread one after the other on one
    CPU, as its source does (the idle CPU keeps its busy balance deadline), so an iteration
    costs two 3 ms loops; 2.6.22's forks lock to alternating phases against CPU 0's tick, its
    idle CPU pulls the thread 2.9 ms in or not at all, and its iteration is 1.5 ticks, also
    6.0 ms.  With the work amounts jittered by +-3 % (default 1 %) the lock breaks and 2.6.22
    drops below 2.6.23, which stays serial: the tie is 2.6.22's, not a 2.6.23 mechanism."""
    loop_ms = 3.0  # 1M loops at the default loop_memory_ns
    t22, t23 = (_ms_per_iteration_1m(k, 1, 1.0) for k in ("2.6.22", "2.6.23"))
    assert t22 == pytest.approx(1.5 * 4.0, abs=0.02), t22
    assert 1.9 * loop_ms < t23 < 2.05 * loop_ms, t23
    for seed in (1, 2, 3):
        t22, t23 = (_ms_per_iteration_1m(k, seed, 3.0) for k in ("2.6.22", "2.6.23"))
        assert t22 < t23 and t23 > 1.9 * loop_ms, (seed, t22, t23)


def _pingpong_ratio(kernel, machine, pairs=4, **tunables):
    """Bare-metal wake-pingpong throughput with the thread's patch over without it."""
    def ops(patch):
        result = simulator.run({"workload": "wake-pingpong", "kernel": kernel, **machine,
                                "params": {"pairs": pairs, "roundtrips": 1000},
                                "tunables": {**tunables, **patch}})
        return result["metrics"]["throughput_ops_per_s"][0]

    return ops(THREAD_PATCH) / ops({})


@pytest.mark.parametrize("kernel, machine, pairs", [("3.3", {"topology": "1x4x2"}, 4),
                                                    ("6.6-eevdf", {"topology": "1x4x2"}, 4),
                                                    ("6.6-eevdf", {"topology": "1x4x2"}, 8),
                                                    ("6.6-eevdf", {"cpus": 4}, 4)])
def test_thread_patch_keeps_bare_metal_pingpong_within_10_percent(kernel, machine, pairs):
    """The thread's bare-metal direction where the model has it: with CPUs to spare (1x4x2)
    both versions place each wakee on an idle CPU or its own; on a full machine 6.6 keeps the
    wakee on the waker's CPU when no group beats it, so the pairs stay together.  6.6's 8
    pairs on 1x4x2 hold (1.00 with 6.6's own balancer, 320 migrations; 0.95 with the shared
    one, which migrated most wakeups) at the refill a pipe ping-pong's working set costs (65
    lines; nothing between SMT siblings)."""
    assert _pingpong_ratio(kernel, machine, pairs) >= 0.9


@pytest.mark.xfail(strict=True, reason="0.85 on 3.3 with 4 pairs on 4 CPUs at 1000 roundtrips "
                   "(0.85 at the bench's 2000; 0.34 at the old flat 30 us refill, 0.86 with "
                   "none): the slow path counts the running waker on its own CPU, so when every "
                   "CPU is busy no group wins and the wakee stays queued on its busy previous "
                   "CPU; the waker's CPU then goes idle and does not pull it: idle_balance() "
                   "returns at once, avg_idle (tens of us) being below sysctl_sched_migration_"
                   "cost (4,011 skips in 8,000 wakeups), and without that gate task_hot() "
                   "refuses the wakee (0.83, 4,279 refusals). 3.3's select_task_rq_fair(), "
                   "find_idlest_group(), idle_balance(), can_migrate_task(), "
                   "check_preempt_wakeup() and pick_next_entity() as written (the sleeper's "
                   "vruntime made relative at its wakeup, task_waking_fair(), since: 0.80 "
                   "before); at sched_migration_cost_ns=0 it holds (1.00, test below); "
                   "docs/simulator.md, issue 24 section")
def test_thread_patch_keeps_33_pingpong_within_10_percent_on_a_full_machine():
    assert _pingpong_ratio("3.3", {"cpus": 4}) >= 0.9


def _pingpong_33(machine, pairs, work_us, tunables):
    """3.3's wake-pingpong spec, 1000 roundtrips."""
    return {"workload": "wake-pingpong", "kernel": "3.3", **machine,
            "params": {"pairs": pairs, "roundtrips": 1000, "work_us": work_us},
            "tunables": tunables}


def _pingpong_patched(machine, pairs, work_us, **tunables):
    """3.3's patched run: its counters and the engine's trace."""
    trace = io.StringIO()
    result = simulator.run(_pingpong_33(machine, pairs, work_us, {**tunables, **THREAD_PATCH}),
                           trace=trace)
    return result["counters"], trace.getvalue()


@pytest.mark.parametrize("machine, pairs, work_us", [({"cpus": 4}, 4, 10),
                                                     ({"topology": "1x4x2"}, 8, 10),
                                                     ({"cpus": 4}, 4, 100)])
def test_33_pingpong_wakees_wait_because_the_wakers_idle_cpu_does_not_pull(machine, pairs,
                                                                            work_us):
    """Where 3.3's patched pingpong loses its time: a wakee the slow path leaves on its busy
    previous CPU (no group beats the waker's, whose running waker is counted) waits there
    while the waker's CPU goes idle, and that CPU does not pull it: idle_balance() returns at
    once because its avg_idle (spans of tens of microseconds) is below
    sysctl_sched_migration_cost (0.5 ms), and without that gate task_hot() refuses the wakee
    (it ran tens of microseconds ago; 3.3 does not count newly idle failures against
    cache_nice_tries).  With the cost at 0 neither applies and every row holds at 1.00."""
    def ratio(**tunables):
        def ops(patch):
            result = simulator.run(_pingpong_33(machine, pairs, work_us, {**tunables, **patch}))
            return result["metrics"]["throughput_ops_per_s"][0]
        return ops(THREAD_PATCH) / ops({})

    assert ratio() < 0.9
    assert ratio(newidle_avg_idle=False) < 0.9
    assert ratio(newidle_balance=False) < 0.9
    assert ratio(sched_migration_cost_ns=0) >= 0.99
    counters, trace = _pingpong_patched(machine, pairs, work_us)
    assert trace.count(" newidle-skip ") > counters["wakeups"] // 3, counters
    counters, trace = _pingpong_patched(machine, pairs, work_us, newidle_avg_idle=False)
    assert " newidle-skip " not in trace
    assert counters["cache_hot_refusals"] > counters["wakeups"] // 3, counters
    counters, trace = _pingpong_patched(machine, pairs, work_us, sched_migration_cost_ns=0)
    assert counters["cache_hot_refusals"] == 0 and " newidle-skip " not in trace


def test_newidle_avg_idle_gate_follows_ttwu_do_wakeup():
    """3.3's avg_idle: starts at 2 x sysctl_sched_migration_cost, a wakeup ending an idle
    span longer than that sets it there, a shorter one moves it an eighth of the way (an
    arithmetic shift, so it rounds down); idle_balance() skips while it is below the cost."""
    from simulator import balance

    norm = validate({"workload": "wake-pingpong", "kernel": "3.3", "cpus": 2})
    eng = Engine(parse_topology(norm["topology"]), make_policy(norm, norm["cpus"]),
                 norm["tunables"], 1, 10**6)
    cpu = eng.cpus[1]
    cost = eng.migration_cost_ns
    assert eng.newidle_gate and cost == 500_000 and cpu.avg_idle == 2 * cost
    eng.now = 10_000
    cpu.newidle_stamp = 0
    balance.end_idle_span(eng, cpu)
    assert cpu.avg_idle == 2 * cost + ((10_000 - 2 * cost) >> 3) and cpu.newidle_stamp == -1
    cpu.newidle_stamp = eng.now
    eng.now += 2 * cost + 1
    balance.end_idle_span(eng, cpu)
    assert cpu.avg_idle == 2 * cost
    cpu.avg_idle = cost - 1
    assert balance.newidle(eng, cpu) is False and cpu.newidle_stamp == eng.now



@pytest.mark.parametrize("kernel, pairs, machine, free, priced", [
    pytest.param("6.6-eevdf", 8, {"topology": "1x4x2"}, 0.9, 0.7, marks=pytest.mark.xfail(
        strict=True, reason="since 6.6's own load balancer (balance_66; docs/simulator.md, "
        "issue 24) the patch migrates 2,216 wakeups here, not 8,162, and loses 16 % at the "
        "flat 30 us (0.84; 1.00 at no refill), not 41 %. The shared balancer's passes "
        "moved 9 tasks in 7,210 (5,039 failed), 6.6's newly idle CPUs pull 317 waiting "
        "tasks in 1,244; why that leaves fewer wakeups to migrate was not analysed. Since "
        "6.6's place_entity() and lag (PLACE_LAG's inflation) 706 migrations and 0.95 at "
        "the flat 30 us (1.00 at no refill), not analysed either")),
    ("3.3", 4, {"cpus": 4}, 0.8, 0.5)])
def test_bare_metal_losses_are_the_price_of_the_migrations(kernel, pairs, machine, free, priced):
    """Where the patch loses most on bare metal, the slow path migrates most wakeups and the
    loss is the refill each migration pays: with no refill 6.6's 8 pairs hold (0.99) and 3.3's
    full machine loses 13 % (its pairs stay apart); at the old flat 30 us 0.59 and 0.35."""
    assert _pingpong_ratio(kernel, machine, pairs, cache_refill_us=0) >= free
    assert _pingpong_ratio(kernel, machine, pairs, cache_refill_us=30) < priced


def _refill_prices(workload, topology, params=None, **tunables):
    """The migration refill (ns) by topology distance (same CPU, SMT sibling, same socket,
    other socket) once ``workload`` has built its tasks."""
    from simulator.api import WORKLOADS
    from simulator.wl_common import Build

    norm = validate({"workload": workload, "kernel": "3.3", "topology": topology,
                     "params": params or {}, "tunables": tunables})
    eng = Engine(parse_topology(norm["topology"]), make_policy(norm, norm["cpus"]),
                 norm["tunables"], 1, 10**9)
    WORKLOADS[workload].build(Build(eng, norm["params"]))
    return eng.refill_by_distance


def test_a_migrations_refill_is_the_working_set_at_the_shared_levels_latency():
    """wake-pingpong's 4160 bytes are 65 lines: free to an SMT sibling (shared L1/L2), 65 LLC
    hits within a socket, 65 remote lines across sockets; an explicit cache_refill_us is the
    flat price as before, and a workload that gives no working set pays the old 30 us."""
    assert _refill_prices("wake-pingpong", "2x2x2") == [0, 0, int(65 * 15.75), 65 * 120]
    assert _refill_prices("wake-pingpong", "2x2x2", cache_refill_us=30) == [0, 3000, 30000,
                                                                            90000]
    assert _refill_prices("wake-pingpong", "2x2x2", cache_refill_us=0) == [0, 0, 0, 0]
    assert _refill_prices("pipeline", "2x2x2") == [0, 3000, 30000, 90000]
    with pytest.raises(simulator.SpecError, match="cache_refill_us"):
        validate({"workload": "chatroom", "kernel": "3.3", "tunables": {"cache_refill_us": -0.5}})
    measured = validate({"workload": "wake-pingpong", "kernel": "3.3",
                         "machine": {"llc_hit_ns": 40, "remote_line_ns": 200}})
    assert (measured["tunables"]["cache_llc_ns"], measured["tunables"]["cache_remote_ns"]) == (
        40, 200)


def test_a_migrated_chat_task_refetches_a_chat_messages_lines():
    """The chatroom prices a migration from what one message touches: 1536 bytes, 24 lines
    (the 100-byte message, the sent skb's fclone pair with its headers, shared info and
    payload, the received skb's, the room lock's word), free between SMT siblings, 24 LLC hits
    within a socket, 24 remote lines across sockets; the param moves it, an explicit
    cache_refill_us still overrides it, and the broadcast (four roles, one working set a run)
    keeps the flat price."""
    lines = 24
    assert simulator.catalog()["workloads"]["chatroom"]["params"]["working_set_bytes"][
        "default"] == lines * 64
    priced = [0, 0, int(lines * 15.75), lines * 120]
    assert _refill_prices("chatroom", "2x2x2") == priced
    assert _refill_prices("chatroom", "2x2x2", {"broadcast": 1}) == [0, 3000, 30000, 90000]
    assert _refill_prices("chatroom", "2x2x2", {"working_set_bytes": 65}) == [0, 0, 31, 240]
    assert _refill_prices("chatroom", "2x2x2", {"working_set_bytes": 0}) == [0, 0, 0, 0]
    assert _refill_prices("chatroom", "2x2x2", cache_refill_us=30) == [0, 3000, 30000, 90000]
    for bad in (-1, 2**30 + 1, 1.5, "a page"):
        with pytest.raises(simulator.SpecError, match="working_set_bytes"):
            validate({"workload": "chatroom", "kernel": "3.3",
                      "params": {"working_set_bytes": bad}})


def test_a_migrated_chat_task_pays_the_priced_refill_in_a_run():
    """The price reaches the run: the same chatroom on two sockets is slower with a larger
    working set, and the derived one costs less than the old flat 30 us."""
    def throughput(**change):
        params = {"rooms": 2, "clients": 10, "messages": 50, "lock": "futex"}
        spec = {"workload": "chatroom", "kernel": "3.3", "topology": "2x2x1", "seed": 1,
                "params": {**params, **change.pop("params", {})}, "tunables": change}
        return simulator.run(spec)["metrics"]["throughput_msgs_per_s"][0]

    derived, large = throughput(), throughput(params={"working_set_bytes": 65536})
    assert large < derived < throughput(params={"working_set_bytes": 0}) * 1.0001
    assert throughput(cache_refill_us=30) < derived


# The thread's overcommitted host as its description has it: a guest of 8 vCPUs kicked with
# plain wake-ups (kvm_vcpu_kick()), other guests of different sizes as the hogs (12 on 8 CPUs,
# so half the CPUs carry two and half one, an imbalance no balancing removes), and wait_sum
# summed over a guest benchmark that ends when its work is done (600 requests).
THREAD_VM = {"vcpus": 8, "hog_group_sizes": "6,6", "kick": "ipi", "requests": 600,
             "duration_ms": 5000}


# The direction is judged as a kernel developer would report it: the median over seeds 1-4
# of the cut, on the thread's case 16x longer (9600 requests), where the seeds agree (3.3
# 0.31-0.39x, 6.6 1.13-1.57x) as they do not at 600 (0.55-1.68x, 0.88-1.23x).
THREAD_VM_LONG = {**THREAD_VM, "requests": 9600, "duration_ms": 100_000}


def _vm_wait_ms(kernel, params, tunables, seed=1):
    result = simulator.run({"workload": "overcommit", "kernel": kernel, "topology": "1x4x2",
                            "params": params, "tunables": tunables, "seed": seed})
    return result["metrics"]["vm_wait_sum_ms"][0]


def _seed_cuts(kernel, params=THREAD_VM_LONG, seeds=(1, 2, 3, 4)):
    """wait_sum unpatched / patched for each seed: the xfails judge their median and print
    them all, so that --runxfail shows the figures their reasons give."""
    return [_vm_wait_ms(kernel, params, {}, seed) / _vm_wait_ms(kernel, params, THREAD_PATCH, seed)
            for seed in seeds]


@pytest.mark.xfail(strict=True, reason="median of seeds 1-4 at 9600 requests 0.34x on 3.3 "
                   "(0.33x / 0.36x / 0.31x / 0.39x; seed 1 1285 -> 3922 ms, the guest's "
                   "benchmark 2.7x longer; 0.48x before check_preempt_tick()'s second test, "
                   "tenth round). Behind a hog a woken vCPU waits 2.0-2.6x longer patched, "
                   "all of it from missed wakeup preemption (11-17 % of landings unpatched, "
                   "26-37 % patched; once missed the wait is sched_min_granularity to the "
                   "tick, ~4 ms, either way): a VM entity of weight <= 341 never beats the "
                   "12 ms sleeper credit against wakeup_gran()'s 4 ms x 1024 / weight, and "
                   "patched the VM's load sits on more CPUs (3-9 % of landings that light "
                   "unpatched, 19-31 % patched), calc_cfs_shares() as written. At 600 "
                   "requests 1.22x (seeds 0.55-1.68x), too short for the seeds to agree. "
                   "Earlier: 0.48x (ninth round), 1.18x with hierarchical group entities, "
                   "1.11x flattened; docs/simulator.md, issue 24 section, 'Tenth round'")
def test_thread_patch_cuts_the_overcommitted_vm_wait_sum_at_least_2x_on_33():
    """Unpatched, a woken vCPU goes back to its previous CPU (wake_affine sees its waker's CPU
    no lighter), half of them CPUs with two hogs; patched, find_idlest_cpu() sends it to a
    CPU with one, where it waits less and the guest's benchmark ends sooner."""
    cuts = _seed_cuts("3.3")
    assert statistics.median(cuts) >= 2, [f"{cut:.2f}x" for cut in cuts]


def test_the_patch_has_nothing_to_win_when_every_cpu_carries_the_same_hogs():
    """2 x 8 hogs on 8 CPUs: every CPU the same, so no placement is better than another and
    the patch moves wait_sum by less than 1.5x either way (1141 -> 1287 ms).  With the vCPUs'
    entities weighed by the flattening: 3.3's windowed shares make the VM's weight depend on
    where its load was over the last windows, which placement does change (680 -> 318 ms)."""
    even = {**THREAD_VM, "hog_group_sizes": "8,8"}
    flat = {"shares_window_ms": 0}
    unpatched, patched = (_vm_wait_ms("3.3", even, {**flat, **t}) for t in ({}, THREAD_PATCH))
    assert patched / 1.5 < unpatched < 1.5 * patched, (unpatched, patched)


@pytest.mark.xfail(strict=True, reason="median of seeds 1-4 at 9600 requests 1.44x on "
                   "6.6-eevdf (1.57x / 1.44x / 1.13x / 1.44x; seed 1 859 -> 549 ms over runs "
                   "of 782 / 734 ms: the patch cuts the vCPUs waiting at any time, 1.33x per ms "
                   "of run); at 600 requests, the earlier case, 1.03x (seed 1 1.23x, 124 -> "
                   "101 ms, since the balancer reads PELT utilisation and runnable; seeds 2-4 "
                   "1.11x / 0.96x / 0.88x), too short for the seeds to agree. Other guests as "
                   "halting vCPUs (hog_run_us / hog_halt_us, swept, no source) 0.91x-1.06x. "
                   "Earlier: 1.74x with PELT's steady-state stand-ins, 1.08x before 6.6's "
                   "place_entity(); docs/simulator.md, issue 24, 'Ninth round', '6.6's PELT "
                   "signals in the balancer', eighth round")
def test_thread_patch_cuts_the_overcommitted_vm_wait_sum_at_least_2x_on_66():
    cuts = _seed_cuts("6.6-eevdf")
    assert statistics.median(cuts) >= 2, [f"{cut:.2f}x" for cut in cuts]


def test_a_fixed_work_run_ends_when_the_guest_is_done():
    """`requests`: the run stops at the request that completes the guest's work, and the
    throughput is taken over that time; without it the run lasts `duration_ms`."""
    done = _overcommit({"requests": 300, "duration_ms": 1000})
    timed = _overcommit({"duration_ms": 1000})
    ops_per_s = done["metrics"]["throughput_ops_per_s"][0]
    assert ops_per_s > 300  # 300 requests took less than the second
    # vmstat samples every 100 ms: the fixed-work run stopped before the second sample
    assert len(done["vmstat"]["rows"]) < 300 / ops_per_s * 10 + 2 < len(timed["vmstat"]["rows"])

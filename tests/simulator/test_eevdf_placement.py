"""6.6's place_entity() and lag (simulator/policies/eevdf.py, eevdf_group.py), rule by rule, as
6.6's kernel/sched/fair.c has them: PLACE_LAG's inflation of the kept lag by (W + w) / W,
entity_lag()'s clamp at calc_delta_fair(max(2 x slice, TICK_NSEC)), a new task's full slice
(PLACE_DEADLINE_INITIAL's half slice overwritten by wake_up_new_task()'s enqueue),
avg_vruntime()'s floor for a negative sum, vruntime_eligible()."""

import random

from simulator.policies.eevdf import EevdfPolicy, place_lag, tick_nsec
from simulator.policies.eevdf_group import EevdfGroups
from simulator.policies.eevdf_shares import PeltShares
from simulator.program import Task, nice_to_weight

TUN = {"sched_cost_ns": 0, "base_slice_ns": 750_000, "sched_cost_log_ns": 0, "HZ": 250,
       "run_to_parity": True}


def _policy(ncpus=1, **tun):
    policy = EevdfPolicy("6.6-eevdf", {**TUN, **tun}, ncpus)
    return policy, policy.new_rq(0)


def _task(tid, nice=0):
    task = Task(tid, f"t{tid}", [], nice=nice)
    task.weight = nice_to_weight(nice)
    return task


def _running(policy, rq, *tasks):
    """Fork ``tasks`` onto ``rq`` and start the first one picked; returns it."""
    for task in tasks:
        policy.enqueue(rq, task, "fork", 0)
    curr = policy.pick_next(rq, None, 0)
    policy.on_pick(rq, curr, 0)
    return curr


def test_a_woken_task_is_placed_with_its_lag_inflated_by_the_queues_weight():
    """place_entity() with PLACE_LAG and others on the queue: a task that left 300 us of
    virtual time behind the average (lag +300 us, stored here as -300 us) comes back at
    average - 300 us x (W + w) / W: with one task running and one queued (W 2048) and its own
    weight 1024, 450 us behind; once its weight has pulled the average back, its lag is the
    300 us it left with (without the inflation it would be 200 us)."""
    policy, rq = _policy()
    _running(policy, rq, _task(1), _task(2))
    average = policy._avg(rq)
    sleeper = _task(3)
    sleeper.vruntime = -300_000  # the lag update_entity_lag() stored when it slept
    policy.enqueue(rq, sleeper, "wakeup", 0)
    assert sleeper.vruntime == average - 450_000
    assert policy._avg(rq) - sleeper.vruntime == 300_000
    assert sleeper.deadline - sleeper.vruntime == policy._vslice(sleeper)


def test_the_inflation_uses_both_weights_and_truncates_toward_zero():
    """lag x (load + w) then div_s64() by load: a nice 5 task (335) on a queue of 3072 keeps
    its lag's sign and rounds toward zero either way; a running task counts in W."""
    assert place_lag(1000, 3072, 1024) == 1333 and place_lag(-1000, 3072, 1024) == -1333
    assert place_lag(3072, 3072, 335) == 3072 + 335
    assert place_lag(-7, 1024, 1) == -7  # 7 x 1025 / 1024 = 7.006: truncated, not floored
    policy, rq = _policy()
    _running(policy, rq, _task(1))  # W is the running task's weight alone
    sleeper = _task(2, nice=5)
    sleeper.vruntime = 1024 * 10
    average = policy._avg(rq)
    policy.enqueue(rq, sleeper, "wakeup", 0)
    assert sleeper.vruntime == average + (1024 + 335) * 10


def test_a_task_woken_on_an_empty_queue_keeps_no_lag():
    """cfs_rq->nr_running is 0: place_entity() skips PLACE_LAG and the task starts at the
    average (the queue's min_vruntime), whatever lag it left with."""
    policy, rq = _policy()
    rq.min_vruntime = 5_000_000
    sleeper = _task(1)
    sleeper.vruntime = -2_000_000
    policy.enqueue(rq, sleeper, "wakeup", 0)
    assert sleeper.vruntime == 5_000_000
    assert sleeper.deadline == 5_000_000 + policy._vslice(sleeper)


def test_no_sleeper_credit_a_task_that_slept_with_no_lag_starts_at_the_average():
    """6.6 has no sleeper credit (no GENTLE_FAIR_SLEEPERS): however long it slept, a task
    that left at the average comes back at the average."""
    policy, rq = _policy()
    _running(policy, rq, _task(1), _task(2))
    policy.account(rq, rq.curr, 5_000_000, 5_000_000)
    average = policy._avg(rq)
    sleeper = _task(3)
    sleeper.vruntime = 0
    policy.enqueue(rq, sleeper, "wakeup", 10_000_000_000)
    assert sleeper.vruntime == average


def _lag_left_after_running_ahead(ncpus, hz, nice=0, ahead_ns=40_000_000):
    """A task runs ``ahead_ns`` of real time beside a queued one and blocks: its stored lag."""
    policy, rq = _policy(ncpus, HZ=hz)
    runner = _task(1, nice)
    _running(policy, rq, runner, _task(2, nice))
    assert rq.curr is runner
    policy.account(rq, runner, ahead_ns, ahead_ns)
    policy.curr_leaves(rq, runner, ahead_ns)
    return policy, runner.vruntime


def test_the_lag_is_clamped_at_two_slices_or_a_tick_whichever_is_longer():
    """entity_lag(): limit = calc_delta_fair(max(2 x se->slice, TICK_NSEC), se).  On 1 CPU
    (slice 0.75 ms) a 4 ms tick at HZ 250 is the longer, at HZ 1000 two slices (1.5 ms); on
    8 CPUs (slice 3 ms) two slices, 6 ms; at nice 5 the limit is in its virtual time (x
    1024 / 335).  The one-slice clamp before gave 0.75 ms on 1 CPU."""
    assert tick_nsec(250) == 4_000_000 and tick_nsec(1000) == 1_000_000
    assert tick_nsec(300) == 3_333_333  # NSEC_PER_SEC / HZ rounded to nearest
    policy, lag = _lag_left_after_running_ahead(1, 250)
    assert policy.slice == 750_000 and lag == 4_000_000
    assert _lag_left_after_running_ahead(1, 1000)[1] == 1_500_000
    policy, lag = _lag_left_after_running_ahead(8, 250)
    assert policy.slice == 3_000_000 and lag == 6_000_000
    assert _lag_left_after_running_ahead(1, 250, nice=5)[1] == 4_000_000 * 1024 // 335
    policy, lag = _lag_left_after_running_ahead(1, 250, ahead_ns=2_000_000)
    assert lag == 1_000_000  # within the limit: half the 2 ms it ran ahead of the two


def test_a_new_task_gets_a_full_slice_in_66_as_a_woken_one_does():
    """PLACE_DEADLINE_INITIAL halves the slice of task_fork_fair()'s placement (ENQUEUE_INITIAL),
    but 6.6's wake_up_new_task() enqueues the child with ENQUEUE_NOCLOCK alone and
    enqueue_entity() places it again (its vlag zeroed by __sched_fork()): it starts at the
    average with its deadline a full (weighted) slice ahead, as a wakeup does."""
    policy, rq = _policy()
    _running(policy, rq, _task(1))
    child = _task(2, nice=5)
    average = policy._avg(rq)
    policy.enqueue(rq, child, "fork", 0)
    vslice = policy.slice * 1024 // 335
    assert child.vruntime == average
    assert child.deadline - child.vruntime == vslice
    woken = _task(3, nice=5)
    policy.enqueue(rq, woken, "wakeup", 0)
    assert woken.deadline - woken.vruntime == vslice


def _kernel_avg_vruntime(rq, tasks, curr):
    """avg_vruntime() as 6.6 computes it: keys relative to min_vruntime, a negative sum moved
    down by load - 1 before div_s64()'s truncation (a floor), then min_vruntime added."""
    entities = list(tasks) + ([curr] if curr is not None else [])
    total = sum((t.vruntime - rq.min_vruntime) * t.weight for t in entities)
    load = sum(t.weight for t in entities)
    if total < 0:
        total -= load - 1
    quotient = abs(total) // load
    return rq.min_vruntime + (quotient if total >= 0 else -quotient)


def test_the_average_floors_a_negative_sum_as_avg_vruntime_does():
    """Entities just behind min_vruntime: the sum of keys x weights is -1024 over a load of
    1359, which 6.6 floors to -1 (truncation would give 0); the model's average is the
    kernel's, and vruntime_eligible() (sum >= key x load, exact) agrees with v <= average."""
    policy, rq = _policy()
    rq.min_vruntime = 1_000_000
    behind, at = _task(1), _task(2, nice=5)
    behind.vruntime, at.vruntime = 999_999, 1_000_000
    for task in (behind, at):
        policy._add(rq, task)
    assert _kernel_avg_vruntime(rq, (behind, at), None) == 999_999
    assert policy._avg(rq) == 999_999
    rng = random.Random(66)
    for _ in range(200):
        policy, rq = _policy()
        rq.min_vruntime = rng.randrange(0, 10**9)
        tasks = [_task(i, nice=rng.choice((-5, 0, 3, 19))) for i in range(rng.randrange(1, 6))]
        for task in tasks:
            task.vruntime = rq.min_vruntime + rng.randrange(-50_000, 50_000)
            policy._add(rq, task)
        curr = _task(99, nice=rng.choice((0, 7)))
        curr.vruntime = rq.min_vruntime + rng.randrange(-50_000, 50_000)
        rq.curr = curr
        average = policy._avg(rq)
        assert average == _kernel_avg_vruntime(rq, tasks, curr)
        entities = tasks + [curr]
        total = sum((t.vruntime - rq.min_vruntime) * t.weight for t in entities)
        load = sum(t.weight for t in entities)
        for v in range(average - 2, average + 3):
            assert (total >= (v - rq.min_vruntime) * load) == (v <= average)


def test_a_task_woken_into_a_group_cfs_rq_is_placed_by_that_levels_weights():
    """The rule is per cfs_rq: vm2 wakes into the VM's cfs_rq where vm1 runs (W 1024 at the
    tasks' own weights) with a lag of 100 us ahead: it is placed 200 us ahead of that level's
    average and keeps its 100 us once counted."""
    tun = {**TUN, "group_shares_pelt": True, "group_hierarchy": True}
    policy = EevdfPolicy("6.6-eevdf", tun, 1)
    engine = type("Engine", (), {"cpus": [type("Cpu", (), {"curr": None})()]})()
    policy.shares = PeltShares(engine, policy)
    policy.groups = EevdfGroups(policy)
    rq = policy.new_rq(0)
    vm1, vm2 = (Task(tid, f"vm{tid}", [], "vm") for tid in (1, 2))
    for task in (vm1, vm2):
        task.group_shares = 1024
    policy.enqueue(rq, vm1, "fork", 0)
    first = policy.pick_next(rq, None, 0)
    policy.on_pick(rq, first, 0)
    cfs = policy.groups.levels[("vm", 0)].cfs
    average = policy.groups._avg(cfs)
    vm2.vruntime = 100_000
    policy.enqueue(rq, vm2, "wakeup", 0)
    assert vm2.vruntime == average + 200_000
    assert vm2.vruntime - policy.groups._avg(cfs) == 100_000


def test_a_forked_child_does_not_preempt_its_eligible_parent_even_without_run_to_parity():
    """With its full slice a nice 0 child at the average has its deadline after the parent's
    (picked with its own slice at or before the average): pick_eevdf() keeps the parent, so
    wakeup preemption does not happen at fork, RUN_TO_PARITY or not."""
    policy, rq = _policy(run_to_parity=False)
    parent = _running(policy, rq, _task(1))
    policy.account(rq, parent, 100_000, 100_000)
    child = _task(2)
    policy.task_fork(rq, parent, child, 100_000, True)
    policy.enqueue(rq, child, "fork", 100_000)
    assert parent.vruntime <= policy._avg(rq) and parent.deadline < child.deadline
    assert not policy.wakeup_preempts(rq, parent, child, 100_000)

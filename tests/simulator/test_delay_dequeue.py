"""6.12's delayed dequeue for EEVDF (`delay_dequeue`, `delay_zero`; simulator/policies/eevdf.py,
eevdf_group.py), as 6.12's kernel/sched/fair.c has it: dequeue_entity() with DEQUEUE_SLEEP
keeps an entity entity_eligible() refuses queued and marks it delayed; pick_next_entity()
completes the dequeue of a delayed entity pick_eevdf() returns and picks again; DELAY_ZERO
drops the positive lag it then has (vlag > 0) to 0; requeue_delayed_entity() leaves a woken
delayed entity where it is, or with DELAY_ZERO places one that became eligible at the average
with lag 0.  Off (6.6, the profile's default), every result is what it was."""

import json

import pytest

import simulator
from simulator.errors import SimulatorError
from simulator.policies.eevdf import EevdfPolicy
from simulator.policies.eevdf_group import EevdfGroups
from simulator.policies.eevdf_shares import PeltShares
from simulator.program import BLOCKED, Task
from tests.simulator.test_reference_mode import SMALL

TUN = {
    "sched_cost_ns": 0,
    "base_slice_ns": 750_000,
    "sched_cost_log_ns": 0,
    "HZ": 250,
    "run_to_parity": True,
}
SLICE = 750_000  # one CPU: base_slice_ns x (1 + ilog2(1)); nice 0's virtual slice too


def _policy(**tun):
    policy = EevdfPolicy("6.6-eevdf", {**TUN, "delay_dequeue": True, **tun}, 1)
    return policy, policy.new_rq(0)


def _run(policy, rq):
    task = policy.pick_next(rq, None, 0)
    if task is not None:
        policy.on_pick(rq, task, 0)
    return task


def _block(policy, rq, task):
    """The running task blocks (the engine sets the state first)."""
    task.state = BLOCKED
    policy.curr_leaves(rq, task, 0)


def _two_tasks_one_past_the_average(policy, rq):
    """a and b forked at 0; a runs a full slice (vruntime 750 us, deadline 750 us: b waits, so
    the deadline is not renewed) and blocks, the average (a counted as curr) at 375 us."""
    a, b = Task(1, "a", []), Task(2, "b", [])
    policy.enqueue(rq, a, "fork", 0)
    policy.enqueue(rq, b, "fork", 0)
    assert _run(policy, rq) is a
    policy.account(rq, a, SLICE, SLICE)
    assert a.vruntime == SLICE and a.deadline == SLICE and policy._avg(rq) == SLICE // 2
    _block(policy, rq, a)
    return a, b


def test_a_sleeper_past_the_average_stays_queued_and_counts_in_it():
    """Not eligible (vruntime 750 us > average 375 us): a stays queued, delayed, at its own
    vruntime (not a stored lag), its weight still in the average; the engine's view of the
    load no longer has it; the pick passes it over for b, the eligible one."""
    policy, rq = _policy()
    a, b = _two_tasks_one_past_the_average(policy, rq)
    assert a.sched_delayed and rq.nr_queued == 2 and rq.nr_delayed == 1
    assert a.vruntime == SLICE and a.deadline == SLICE
    assert rq.wsum == 2048 and policy._avg(rq) == SLICE // 2
    assert rq.load == 1024
    assert policy.queued_tasks(rq) == [b]  # the balancer does not move a blocked task
    assert _run(policy, rq) is b
    assert a.sched_delayed


def test_without_the_feature_the_same_sleeper_leaves_with_its_lag():
    """6.6 (delay_dequeue off): a leaves at once, its lag (vruntime - average) stored."""
    policy, rq = _policy(delay_dequeue=False)
    a, _b = _two_tasks_one_past_the_average(policy, rq)
    assert not a.sched_delayed and rq.nr_queued == 1 and rq.nr_delayed == 0
    assert a.vruntime == SLICE - SLICE // 2


def test_an_eligible_sleeper_is_dequeued_at_once():
    """b, picked after a's slice, runs 300 us: vruntime 300 us <= average 525 us, eligible, so
    it leaves at once with its lag (300 - 525 us) as in 6.6."""
    policy, rq = _policy()
    a, b = Task(1, "a", []), Task(2, "b", [])
    policy.enqueue(rq, a, "fork", 0)
    policy.enqueue(rq, b, "fork", 0)
    assert _run(policy, rq) is a
    policy.account(rq, a, SLICE, SLICE)
    assert policy.tick_preempt(rq, a, SLICE)
    policy.put_prev(rq, a, SLICE)
    assert _run(policy, rq) is b
    policy.account(rq, b, 300_000, 0)
    _block(policy, rq, b)
    assert not b.sched_delayed and rq.nr_queued == 1 and rq.nr_delayed == 0
    assert b.vruntime == 300_000 - 525_000


@pytest.mark.parametrize("delay_zero, kept", [(True, 0), (False, SLICE - 1_125_000)])
def test_the_pick_completes_a_delayed_dequeue_and_delay_zero_drops_the_positive_lag(
    delay_zero, kept
):
    """b runs 1.5 ms (alone with a delayed task its deadline renews as it goes): the average
    is 1.125 ms, a (750 us) is eligible with the earliest deadline, so pick_eevdf() returns
    it; its dequeue completes with lag 750 - 1125 us (the kernel's vlag +375 us), which
    DELAY_ZERO drops to 0; the pick goes on and returns b."""
    policy, rq = _policy(delay_zero=delay_zero)
    a, b = _two_tasks_one_past_the_average(policy, rq)
    assert _run(policy, rq) is b
    policy.account(rq, b, 1_500_000, 0)
    assert b.deadline > b.vruntime  # renewed: no runnable task waits
    policy.put_prev(rq, b, 0)
    assert _run(policy, rq) is b
    assert not a.sched_delayed and rq.nr_queued == 0 and rq.nr_delayed == 0
    assert a.vruntime == kept


def test_an_idle_pick_empties_the_queue_of_delayed_tasks():
    """Only a delayed task queued: the pick dequeues it and finds nothing to run."""
    policy, rq = _policy()
    a = Task(1, "a", [])
    policy.enqueue(rq, a, "fork", 0)
    _run(policy, rq)
    rq.vsum = rq.wsum = 0
    _block(policy, rq, a)  # alone, a is the average: eligible, dequeued
    assert rq.nr_queued == 0
    policy, rq = _policy()
    a, b = _two_tasks_one_past_the_average(policy, rq)
    _run(policy, rq)
    _block(policy, rq, b)  # b (0) is eligible: dequeued; a stays delayed
    assert rq.nr_queued == 1 and rq.nr_delayed == 1
    assert _run(policy, rq) is None
    assert rq.nr_queued == 0 and not a.sched_delayed


def test_a_delayed_task_woken_before_it_is_eligible_keeps_its_vruntime_and_deadline():
    """requeue_delayed_entity(): no placement, no lag inflation; it is runnable again."""
    policy, rq = _policy()
    a, b = _two_tasks_one_past_the_average(policy, rq)
    assert _run(policy, rq) is b
    policy.account(rq, b, 100_000, 0)
    policy.enqueue(rq, a, "wakeup", 0)
    assert not a.sched_delayed and rq.nr_delayed == 0 and rq.nr_queued == 1
    assert a.vruntime == SLICE and a.deadline == SLICE
    assert rq.load == 2048


@pytest.mark.parametrize("delay_zero", [True, False])
def test_a_delayed_task_woken_once_eligible_is_placed_at_the_average_with_delay_zero(delay_zero):
    """b ran 1 ms: the average is 875 us, a (750 us) is eligible (positive lag).  DELAY_ZERO
    places it again with lag 0: at the average without it (b's 1 ms), a full slice; without
    it a keeps its vruntime and deadline."""
    policy, rq = _policy(delay_zero=delay_zero)
    a, b = _two_tasks_one_past_the_average(policy, rq)
    assert _run(policy, rq) is b
    policy.account(rq, b, 1_000_000, 0)
    assert policy._avg(rq) == 875_000
    policy.enqueue(rq, a, "wakeup", 0)
    assert not a.sched_delayed and rq.nr_queued == 1
    if delay_zero:
        assert a.vruntime == 1_000_000 and a.deadline == 1_000_000 + SLICE
    else:
        assert a.vruntime == SLICE and a.deadline == SLICE


def _group_policy():
    tun = {**TUN, "group_shares_pelt": True, "group_hierarchy": True, "delay_dequeue": True}
    policy = EevdfPolicy("6.6-eevdf", tun, 1)
    engine = type("E", (), {"cpus": [type("Cpu", (), {"curr": None})()]})()
    policy.shares = PeltShares(engine, policy)
    policy.groups = EevdfGroups(policy)
    return policy, policy.new_rq(0)


def _member(tid, group):
    task = Task(tid, f"{group}{tid}", [], group)
    task.group_shares = 1024
    return task


def test_in_the_hierarchy_a_delayed_task_keeps_its_groups_entity_queued():
    """vm1 runs its slice in the vm group's cfs_rq (vm2 queued there) and blocks past its
    cfs_rq's average: delayed there, so dequeue_entities()' walk stops and the group's entity
    stays at the root; vm2 is picked.  When vm2 blocks eligible, the cfs_rq holds only the
    delayed vm1: the group entity stays (cfs_rq->load.weight counts vm1), and the next pick
    completes vm1's dequeue, empties the cfs_rq and takes the entity off the root."""
    policy, rq = _group_policy()
    vm1, vm2 = _member(1, "vm"), _member(2, "vm")
    policy.enqueue(rq, vm1, "fork", 0)
    policy.enqueue(rq, vm2, "fork", 0)
    assert _run(policy, rq) is vm1
    level = policy.groups.levels[("vm", 0)]
    policy.account(rq, vm1, SLICE, SLICE)
    _block(policy, rq, vm1)
    assert vm1.sched_delayed and level.cfs.nr_delayed == 1 and level.cfs.nr_queued == 2
    assert level.on_rq and rq.curr is level.se
    assert _run(policy, rq) is vm2
    _block(policy, rq, vm2)
    assert level.on_rq and level.cfs.nr_queued == 1
    assert _run(policy, rq) is None
    assert not vm1.sched_delayed and level.cfs.nr_queued == 0
    assert not level.on_rq and rq.nr_queued == 0 and rq.curr is None


def test_a_woken_delayed_group_task_is_requeued_in_its_cfs_rq():
    """vm1 delayed in its cfs_rq is woken while vm2 runs: back in place, no placement, and
    the group entity (still at the root) is not placed again."""
    policy, rq = _group_policy()
    vm1, vm2 = _member(1, "vm"), _member(2, "vm")
    policy.enqueue(rq, vm1, "fork", 0)
    policy.enqueue(rq, vm2, "fork", 0)
    _run(policy, rq)
    level = policy.groups.levels[("vm", 0)]
    policy.account(rq, vm1, SLICE, SLICE)
    _block(policy, rq, vm1)
    assert _run(policy, rq) is vm2
    se_vruntime = level.se.vruntime
    policy.enqueue(rq, vm1, "wakeup", 0)
    assert not vm1.sched_delayed and level.cfs.nr_delayed == 0 and level.cfs.nr_queued == 1
    assert vm1.vruntime == SLICE and vm1.deadline == SLICE
    assert level.se.vruntime == se_vruntime


def test_the_flattening_with_pelt_shares_is_refused():
    """Not modelled there: an error, not a wrong number."""
    with pytest.raises(SimulatorError, match="delay_dequeue"):
        EevdfPolicy(
            "6.6-eevdf",
            {**TUN, "delay_dequeue": True, "group_shares_pelt": True, "group_hierarchy": False},
            1,
        )


OFF_SPECS = [
    {
        "workload": "threadtest-burn",
        "kernel": "6.6-eevdf",
        "params": {"iterations": 10, "burn_us": 300},
    },
    {
        "workload": "chatroom",
        "kernel": "6.6-eevdf",
        "cpus": 2,
        "params": {"rooms": 1, "clients": 6, "messages": 40},
    },
    {
        "workload": "wake-pingpong",
        "kernel": "6.6-eevdf",
        "cpus": 4,
        "params": {"pairs": 3, "roundtrips": 100},
    },
    {
        "workload": "overcommit",
        "kernel": "6.6-eevdf",
        "topology": "1x4x2",
        "params": {"vcpus": 8, "hog_group_sizes": "6,6", "kick": "ipi", "duration_ms": 40},
    },
]


def _result(spec, **tunables):
    result = simulator.run({**spec, "tunables": {**spec.get("tunables", {}), **tunables}})
    result.pop("wall_seconds")
    result["tunables"] = {
        k: v for k, v in result["tunables"].items() if k not in ("delay_dequeue", "delay_zero")
    }
    return json.dumps(result, sort_keys=True)


@pytest.mark.parametrize("spec", OFF_SPECS, ids=lambda s: s["workload"])
def test_off_is_the_6_6_result_exactly(spec):
    """delay_dequeue off (the 6.6-eevdf default) gives the same result whatever delay_zero
    says, and on it changes the run where tasks block past the average (threadtest-burn's
    children exit rather than block: the same result there)."""
    default = _result(spec)
    assert _result(spec, delay_dequeue=0, delay_zero=0) == default
    assert _result(spec, delay_dequeue=0, delay_zero=1) == default
    changes = spec["workload"] != "threadtest-burn"
    assert (_result(spec, delay_dequeue=1) != default) == changes


def _burster_cycles(delay_dequeue):
    """One CPU, a CPU hog and a task that runs 2 ms (more than its slice) and sleeps 5 ms:
    the burster blocks with negative lag (it ran past the average)."""
    config = {
        "global": {"duration": 1},
        "tasks": {
            "hog": {"loop": -1, "run": 100_000},
            "burst": {"loop": -1, "run": 2000, "sleep": 5000},
        },
    }
    result = simulator.run(
        {
            "workload": "rtapp",
            "kernel": "6.6-eevdf",
            "cpus": 1,
            "params": {"config": json.dumps(config)},
            "tunables": {"delay_dequeue": delay_dequeue, "noise_pct": 0},
        }
    )
    return result["counters"]["wakeups"]


def test_a_sleeper_burns_off_its_negative_lag_while_delayed():
    """The direction the mechanism gives: in 6.6 the burster keeps its negative lag through
    every 5 ms sleep and waits, on waking, for the hog to catch up; delayed, it stays in the
    competition while the hog runs, is dequeued at lag 0 (or requeued at the average) and
    waits less, so it completes more run/sleep cycles in the same second."""
    assert _burster_cycles(1) > _burster_cycles(0)


@pytest.mark.parametrize("topology", ["1x2x1", "2x2x2"])
@pytest.mark.parametrize("workload", sorted(SMALL))
def test_delayed_runs_agree_with_reference_mode(workload, topology):
    """With the feature on, the event loop's fast paths and the plain functions still give
    one result (every workload, as tests/simulator/test_reference_mode.py checks it off)."""
    spec = {
        "workload": workload,
        "kernel": "6.6-eevdf",
        "topology": topology,
        "params": SMALL[workload],
        "seed": 3,
        "tunables": {"delay_dequeue": 1},
    }
    fast = simulator.run(spec)
    plain = simulator.run(spec, reference=True)
    fast.pop("wall_seconds")
    plain.pop("wall_seconds")
    assert fast == plain

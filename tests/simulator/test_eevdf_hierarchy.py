"""6.6's group hierarchy for EEVDF (`group_hierarchy`, simulator/policies/eevdf_group.py): a
cgroup's tasks queue in the group's own cfs_rq under one group entity in the root queue."""

import pytest

import simulator
from simulator.policies.eevdf import EevdfPolicy
from simulator.policies.eevdf_group import EevdfGroups
from simulator.policies.eevdf_shares import PeltShares
from simulator.program import Task

THREAD_VM = {"vcpus": 8, "hog_group_sizes": "6,6", "kick": "ipi", "requests": 600,
             "duration_ms": 5000}
THREAD_PATCH = {"balance_wake": True, "wake_affine": False}


class _Engine:
    """The engine as the policy's group code sees it: CPUs with nothing running on them in
    the engine's sense (the tests charge run time themselves)."""

    def __init__(self, ncpus):
        self.cpus = [type("Cpu", (), {"curr": None})() for _ in range(ncpus)]


def _policy(ncpus=1):
    tun = {"sched_cost_ns": 0, "base_slice_ns": 750_000, "sched_cost_log_ns": 0, "HZ": 250,
           "run_to_parity": True, "group_shares_pelt": True, "group_hierarchy": True}
    policy = EevdfPolicy("6.6-eevdf", tun, ncpus)
    policy.shares = PeltShares(_Engine(ncpus), policy)  # what attach() sets up
    policy.groups = EevdfGroups(policy)
    return policy, [policy.new_rq(c) for c in range(ncpus)]


def _member(tid, group):
    task = Task(tid, f"{group}{tid}", [], group)
    task.group_shares = 1024
    return task


def _run(policy, rq):
    task = policy.pick_next(rq, None, 0)
    policy.on_pick(rq, task, 0)
    return task


def test_a_task_woken_where_its_groups_entity_runs_joins_it_and_waits_for_its_turn():
    """enqueue_task_fair() stops at an entity already on_rq: vm2 woken while vm1 runs is
    placed in the VM's cfs_rq, the root queue gets no entity and the VM's entity keeps its
    vruntime and deadline.  When that entity's slice at the root is used (its vruntime
    passed its deadline, the hogs' entity waiting), the pick goes to the hogs' entity and
    vm2 waits for the VM's next turn; in the flattening vm2 is a root entity of its own."""
    policy, (rq,) = _policy()
    vm1, vm2, hog = _member(1, "vm"), _member(2, "vm"), _member(3, "hogs")
    policy.enqueue(rq, vm1, "fork", 0)
    policy.enqueue(rq, hog, "fork", 0)
    assert rq.nr_queued == 2 and rq.load == 2048  # the two groups' entities, no task
    assert _run(policy, rq) is vm1
    vm_level = policy.groups.levels[("vm", 0)]
    assert rq.curr is vm_level.se and vm_level.cfs.curr is vm1
    policy.account(rq, vm1, policy.slice, policy.slice)
    entity = (vm_level.se.vruntime, vm_level.se.deadline)
    assert entity == (policy.slice, policy.slice)  # at its weight, 1024: its slice used
    policy.enqueue(rq, vm2, "wakeup", policy.slice)
    assert rq.nr_queued == 1 and (vm_level.se.vruntime, vm_level.se.deadline) == entity
    assert vm_level.cfs.nr_queued == 1 and vm2.vruntime == vm1.vruntime  # at the VM's average
    assert policy.tick_preempt(rq, vm1, policy.slice)
    policy.put_prev(rq, vm1, policy.slice)
    assert _run(policy, rq) is hog
    assert vm_level.cfs.nr_queued == 2  # vm1 put back beside vm2 when the root switched

    flat, (flat_rq,) = _policy()
    flat.hier_on = False
    for task in (_member(1, "vm"), _member(3, "hogs"), _member(2, "vm")):
        flat.enqueue(flat_rq, task, "fork", 0)
    assert flat_rq.nr_queued == 3


def test_a_task_woken_where_its_group_is_absent_places_a_new_group_entity():
    """The VM's only task on the CPU blocks: its entity leaves the root with its lag (clamped
    as a task's, by entity_lag()); woken again, the task enqueues the entity afresh, placed by
    place_entity() at the root's average plus that lag inflated by PLACE_LAG's (W + w) / W
    (the running hogs' entity, 1024, and the VM's, 1024: twice the lag), with a full slice
    (the walk up gives the parents ENQUEUE_WAKEUP, never the new task's half slice)."""
    policy, (rq,) = _policy()
    vm, hog = _member(1, "vm"), _member(2, "hogs")
    policy.enqueue(rq, vm, "fork", 0)
    policy.enqueue(rq, hog, "fork", 0)
    assert _run(policy, rq) is vm
    policy.account(rq, vm, 100_000, 100_000)
    se = policy.groups.levels[("vm", 0)].se
    average = (se.vruntime + 0) // 2  # the hogs' entity at 0, both at weight 1024
    policy.curr_leaves(rq, vm, 100_000)
    assert rq.nr_queued == 1 and rq.curr is None
    assert se.vruntime == 100_000 - average  # its lag: it ran ahead of the average
    assert _run(policy, rq) is hog
    policy.account(rq, hog, 300_000, 400_000)
    root_average = policy._avg(rq)
    policy.enqueue(rq, vm, "wakeup", 400_000)
    assert rq.nr_queued == 1 and rq.curr is not se  # the entity queued beside the running one
    assert se.vruntime == root_average + 2 * (100_000 - average)
    assert policy._avg(rq) - se.vruntime == -(100_000 - average)  # the lag it left with
    assert se.deadline - se.vruntime == policy.slice


def test_a_queued_group_entity_reweighted_keeps_its_vruntime_and_rescales_its_deadline():
    """6.6's (pre-6.7) reweight_entity(): the VM's entity on CPU 0 halves its weight when the
    group's load on CPU 1 is folded in (calc_group_shares()); queued, it keeps its vruntime
    and its remaining virtual deadline doubles.  Its task keeps its own weight inside the
    group (a task's vruntime advances at 1024), while the entity's advances at its weight;
    what the balancer sees, rq.load and Task.weight, is the task's part of the entity."""
    policy, (rq0, rq1) = _policy(2)
    vm0, vm1, hog = _member(1, "vm"), _member(2, "vm"), _member(3, "hogs")
    policy.enqueue(rq0, hog, "fork", 0)
    policy.enqueue(rq0, vm0, "fork", 0)
    assert _run(policy, rq0) is hog
    se = policy.groups.levels[("vm", 0)].se
    before = (se.vruntime, se.deadline - se.vruntime, se.weight)
    policy.enqueue(rq1, vm1, "fork", 0)
    policy.rebalance_tick(rq0, 0)
    assert se.weight == 512 and before[2] == 1024
    assert (se.vruntime, se.deadline - se.vruntime) == (before[0], 2 * before[1])
    assert vm0.weight == 512 and rq0.load == 1024 + 512
    policy.account(rq0, hog, policy.slice, policy.slice)  # the hogs' entity has its turn
    assert policy.tick_preempt(rq0, hog, policy.slice)
    policy.put_prev(rq0, hog, policy.slice)
    assert _run(policy, rq0) is vm0
    start = (vm0.vruntime, se.vruntime)
    policy.account(rq0, vm0, 10_000, policy.slice + 10_000)
    assert (vm0.vruntime - start[0], se.vruntime - start[1]) == (10_000, 20_000)


def test_wakeup_preemption_compares_the_entities_where_the_two_tasks_meet():
    """check_preempt_wakeup()'s find_matching_se(): a vCPU woken while a hog runs is compared
    at the root, as its group's entity against the hogs' (RUN_TO_PARITY protects the hogs'
    entity picked with its deadline); a vCPU woken while another vCPU runs is compared inside
    the VM's cfs_rq, at the two tasks' own deadlines."""
    policy, (rq,) = _policy()
    hog, vm1, vm2 = _member(1, "hogs"), _member(2, "vm"), _member(3, "vm")
    policy.enqueue(rq, hog, "fork", 0)
    assert _run(policy, rq) is hog
    policy.enqueue(rq, vm1, "wakeup", 0)
    assert not policy.wakeup_preempts(rq, hog, vm1, 0)  # the hogs' entity is protected
    rq.seq = -1  # its stash gone (a deadline renewed while it ran alone)
    assert policy.wakeup_preempts(rq, hog, vm1, 0)

    policy, (rq,) = _policy()
    policy.enqueue(rq, vm1, "fork", 0)
    assert _run(policy, rq) is vm1
    policy.account(rq, vm1, 3 * policy.slice, 3 * policy.slice)  # alone: deadlines renewed
    now = 3 * policy.slice
    vm2.vruntime = policy.slice // 2  # the lag kept from its last sleep: it ran ahead
    policy.enqueue(rq, vm2, "wakeup", now)
    assert rq.nr_queued == 0  # nothing new at the root
    assert not policy.wakeup_preempts(rq, vm1, vm2, now)  # not eligible in the VM's cfs_rq
    policy.dequeue(rq, vm2, now)
    vm2.vruntime = -policy.slice // 2  # owed service instead
    policy.enqueue(rq, vm2, "wakeup", now)
    assert policy.wakeup_preempts(rq, vm1, vm2, now)


def test_a_yield_acts_in_the_tasks_own_cfs_rq_and_the_balancer_sees_tasks_not_entities():
    """yield_task_fair() pushes the yielding task's deadline in its own cfs_rq: its sibling
    runs next while the root's curr stays the group's entity (untouched at the root).  The
    balancer's list of queued tasks holds the tasks of every level, never a group entity."""
    policy, (rq,) = _policy()
    vm1, vm2, hog = _member(1, "vm"), _member(2, "vm"), _member(3, "hogs")
    for task in (vm1, vm2, hog):
        policy.enqueue(rq, task, "fork", 0)
    assert _run(policy, rq) is vm1
    se = rq.curr
    entity = (se.vruntime, se.deadline)
    assert {t.name for t in policy.queued_tasks(rq)} == {"vm2", "hogs3"}
    policy.yield_task(rq, vm1, 0)
    assert policy.yield_hands_over(rq, vm1, 0)
    policy.put_prev(rq, vm1, 0)
    assert _run(policy, rq) is vm2
    assert rq.curr is se and (se.vruntime, se.deadline) == entity
    assert vm1.deadline - vm1.vruntime == policy.slice  # a full slice from its old deadline


def _run_spec(spec, **tunables):
    result = simulator.run({**spec, "tunables": {**spec.get("tunables", {}), **tunables}})
    result.pop("wall_seconds")
    result["tunables"].pop("group_hierarchy")
    return result


@pytest.mark.parametrize("workload, params", [
    ("wake-pingpong", {"pairs": 3, "roundtrips": 100}),
    ("chatroom", {"rooms": 1, "clients": 6, "messages": 30}),
    ("threadtest-burn", {"iterations": 6, "burn_us": 200}),
])
def test_runs_without_cgroups_are_the_same_with_and_without_the_hierarchy(workload, params):
    spec = {"workload": workload, "kernel": "6.6-eevdf", "topology": "1x2x2", "params": params}
    assert _run_spec(spec, group_hierarchy=True) == _run_spec(spec, group_hierarchy=False)


@pytest.mark.parametrize("workload, params", [
    ("wake-pingpong", {"pairs": 3, "roundtrips": 100}),
    ("chatroom", {"rooms": 1, "clients": 6, "messages": 30}),
    ("threadtest-burn", {"iterations": 6, "burn_us": 200}),
])
def test_the_flat_fast_path_equals_the_group_path_without_cgroups(workload, params, monkeypatch):
    """Until a group task is enqueued the pick and the wakeup check take EevdfPolicy's flat
    paths (hier_active): forced through EevdfGroups' paths from the start, a run without
    cgroups gives exactly the same result."""
    spec = {"workload": workload, "kernel": "6.6-eevdf", "topology": "1x2x2", "params": params}
    fast = _run_spec(spec)
    plain_init = EevdfGroups.__init__

    def group_paths_from_the_start(self, policy):
        plain_init(self, policy)
        policy.hier_active = True

    monkeypatch.setattr(EevdfGroups, "__init__", group_paths_from_the_start)
    forced = simulator.run({**spec, "tunables": {}})
    assert forced["counters"] == fast["counters"]
    forced.pop("wall_seconds")
    forced["tunables"].pop("group_hierarchy")
    assert forced == fast


def test_without_group_tasks_the_flat_shortcuts_equal_the_group_models_answers():
    """Until the shares model has a group runqueue (shares_active), wake_load() is the root's
    load floored at 0 and rebalance_tick() folds nothing, and until a group task is queued
    (hier_active) queued_tasks() is the flat walk: each equals what the group models return
    for the same queues.  The first group task turns the shortcuts off."""
    policy, (rq,) = _policy()
    plain = [Task(tid, f"t{tid}", [], "") for tid in (1, 2, 3)]
    plain[1].nice = 5
    for task in plain:
        policy.enqueue(rq, task, "fork", 0)
    assert not policy.shares_active and not policy.hier_active
    assert policy.wake_load(rq, 0, None) == policy.shares.cpu_load(rq, 0, None) == rq.load
    assert policy.wake_load(rq, 0, plain[0]) == policy.shares.cpu_load(rq, 0, plain[0])
    assert policy.queued_tasks(rq) == policy.groups.queued_tasks(rq)
    assert [t.name for t in policy.queued_tasks(rq)] == ["t3", "t2", "t1"]
    assert policy.rebalance_tick(rq, 0) is True
    policy.enqueue(rq, _member(4, "vm"), "fork", 0)
    assert policy.shares_active and policy.hier_active
    assert policy.wake_load(rq, 0, None) == policy.shares.cpu_load(rq, 0, None)
    assert policy.queued_tasks(rq) == policy.groups.queued_tasks(rq)


@pytest.mark.parametrize("workload, params", [
    ("wake-pingpong", {"pairs": 3, "roundtrips": 100}),
    ("chatroom", {"rooms": 2, "clients": 6, "messages": 30}),
    ("threadtest-burn", {"iterations": 6, "burn_us": 200}),
])
def test_the_flat_shortcuts_equal_the_shares_model_in_runs_without_cgroups(workload, params,
                                                                           monkeypatch):
    """The shortcuts above, over whole runs: forced through the shares model and the group
    walk from the start (shares_active, hier_active set at once), a run without cgroups
    gives exactly the same result, on two topologies (newidle balancing across cores and
    sockets reads wake_load() and queued_tasks())."""
    plain_shares_init = PeltShares.__init__
    plain_groups_init = EevdfGroups.__init__
    for topology in ("1x2x2", "2x2x2"):
        spec = {"workload": workload, "kernel": "6.6-eevdf", "topology": topology,
                "params": params}
        fast = simulator.run(spec)
        fast.pop("wall_seconds")

        def model_from_the_start(self, eng, policy):
            plain_shares_init(self, eng, policy)
            policy.shares_active = True

        def group_walk_from_the_start(self, policy):
            plain_groups_init(self, policy)
            policy.hier_active = True

        with monkeypatch.context() as patched:
            patched.setattr(PeltShares, "__init__", model_from_the_start)
            patched.setattr(EevdfGroups, "__init__", group_walk_from_the_start)
            forced = simulator.run(spec)
        forced.pop("wall_seconds")
        assert forced == fast
        assert fast["counters"]["events"] > 50


def test_the_hierarchy_is_on_for_66_and_changes_a_waiting_vm():
    """`group_hierarchy` is on in the 6.6-eevdf profile (the kernels schedule hierarchically
    with CONFIG_FAIR_GROUP_SCHED, which cpu.shares needs); where the vCPUs wait behind hogs
    the run differs from the flattened one (whose exact results the golden
    overcommit-6.6-eevdf-flat keeps)."""
    spec = {"workload": "overcommit", "kernel": "6.6-eevdf", "topology": "1x4x2",
            "params": {**THREAD_VM, "requests": 200}}
    default = simulator.run(spec)
    assert default["tunables"]["group_hierarchy"] is True
    on, off = (_run_spec(spec, group_hierarchy=h) for h in (True, False))
    assert default["metrics"] == on["metrics"] != off["metrics"]


def _vm_wait_ms(tunables, seed):
    result = simulator.run({"workload": "overcommit", "kernel": "6.6-eevdf", "topology": "1x4x2",
                            "params": THREAD_VM, "tunables": tunables, "seed": seed})
    return result["metrics"]["vm_wait_sum_ms"][0]


def test_the_hierarchy_shortens_the_unpatched_vms_wait_and_the_patch_cuts_it_short_of_2x():
    """The thread's case, seeds 1-4 (docs/simulator.md, issue 24, eighth round and "6.6's
    place_entity() and lag"): the unpatched VM waits less with the hierarchy than flattened
    (97-124 ms against 128-154 ms; a vCPU woken wake-affine beside the kicking vCPU joins the
    VM's running entity, which keeps its place at the root when the kicker halts).  Since
    placement follows 6.6's place_entity() (PLACE_LAG's inflation, entity_lag()'s clamp) the
    patch cuts the wait on every seed, 1.23x-1.74x (67-79 ms), where with the one-slice lag
    and no inflation its cut was within 1.15x either way of none (0.92x-1.15x): the old
    assertion (patched within 1.15x of unpatched) no longer holds, for that reason.  With the
    balancer's PELT utilisation and runnable (pelt_signals, docs/simulator.md "6.6's PELT
    signals in the balancer") the cut is 0.88x-1.23x: seeds 3 and 4 wait longer patched, so
    "the patch cuts on every seed" holds only with the steady-state stand-ins (checked here
    with pelt_signals off); short of 2x holds either way."""
    for seed in (1, 2, 3, 4):
        hier, flat = (_vm_wait_ms({"group_hierarchy": h}, seed) for h in (True, False))
        patched = _vm_wait_ms(THREAD_PATCH, seed)
        assert hier < flat, (seed, hier, flat)
        assert hier < 2 * patched, (seed, hier, patched)
        steady = {"pelt_signals": False}
        hier, patched = (_vm_wait_ms({**steady, **t}, seed) for t in ({}, THREAD_PATCH))
        assert patched < hier < 2 * patched, (seed, hier, patched)

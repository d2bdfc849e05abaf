"""3.x's CFS buddies (policies/cfs_buddies.py, tunables cfs_buddies / last_buddy / next_buddy):
each rule of pick_next_entity(), check_preempt_wakeup() and dequeue_task_fair() directly."""

import simulator
from simulator.policies.cfs import CfsPolicy
from simulator.policies.taskheap import remove
from simulator.program import Task
from tests.simulator.test_cfs_group import _entity, _hier_policy, _member, _queue, _run

MS = 1_000_000


def _flat_policy(**tunables):
    """3.3 on one CPU: latency 6 ms, granularity 0.75 ms (sched_nr_latency 8), wakeup
    granularity 1 ms."""
    tun = simulator.validate({"workload": "wake-pingpong", "kernel": "3.3", "cpus": 1,
                              "tunables": tunables})["tunables"]
    policy = CfsPolicy("3.3", tun, 1)
    assert policy.nr_latency == 8 and policy.wakeup_gran == MS
    return policy


def _task(tid, vruntime):
    task = Task(tid, f"t{tid}", [])
    task.vruntime = vruntime
    return task


def _preempted_then_wakee_sleeps(policy, waiting, curr_ran):
    """``curr`` (at 10 ms) runs ``curr_ran`` ns with ``waiting`` tasks queued from 10.5 ms on;
    a wakee at 9.5 ms preempts it, runs and sleeps.  Returns (curr, leftmost waiter, pick)."""
    rq = policy.new_rq(0)
    curr = _task(1, 10 * MS)
    _queue(policy, rq, curr, "fork")
    waiters = [_task(2 + i, 10 * MS + MS // 2 + i * MS // 10) for i in range(waiting)]
    for task in waiters:
        _queue(policy, rq, task, "fork")
    assert _run(policy, rq) is curr
    curr.sum_exec += curr_ran
    policy.account(rq, curr, curr_ran, curr_ran)
    wakee = _task(99, 9 * MS + MS // 2)
    _queue(policy, rq, wakee, "fork")  # placed already: a fork keeps its vruntime here
    assert policy.wakeup_preempts(rq, curr, wakee, curr_ran)
    policy.put_prev(rq, curr, curr_ran)
    assert _run(policy, rq) is wakee
    policy.curr_leaves(rq, wakee, curr_ran)
    rq.nr_running -= 1
    return curr, waiters[0], _run(policy, rq)


def test_the_preempted_task_runs_again_after_the_wakee_while_within_a_granularity():
    """8 waiters + the running task + the wakee: sched_nr_latency (8) reached, so the preempted
    task is the last buddy; 0.5 ms right of the leftmost (less than the 1 ms granularity) it
    runs next, where the model before (cfs_buddies off) ran the leftmost."""
    curr, _, pick = _preempted_then_wakee_sleeps(_flat_policy(), 7, MS)
    assert pick is curr
    _, leftmost, pick = _preempted_then_wakee_sleeps(_flat_policy(cfs_buddies=False), 7, MS)
    assert pick is leftmost


def test_a_last_buddy_too_far_right_of_the_leftmost_leaves_the_cpu_to_the_leftmost():
    """2 ms of running puts the preempted task 1.5 ms right of the leftmost: beyond the
    granularity, wakeup_preempt_entity() says 1 and the leftmost runs."""
    _, leftmost, pick = _preempted_then_wakee_sleeps(_flat_policy(), 7, 2 * MS)
    assert pick is leftmost


def test_no_last_buddy_below_sched_nr_latency_or_without_the_feature():
    _, leftmost, pick = _preempted_then_wakee_sleeps(_flat_policy(), 3, MS)
    assert pick is leftmost  # 5 entities on the cfs_rq: scale is 0
    _, leftmost, pick = _preempted_then_wakee_sleeps(_flat_policy(last_buddy=False), 7, MS)
    assert pick is leftmost


def test_the_preempting_wakee_is_the_next_buddy_and_a_pick_clears_it():
    policy = _flat_policy()
    rq = policy.new_rq(0)
    curr, left, wakee = _task(1, 10 * MS), _task(2, 10 * MS), _task(3, 8 * MS)
    for task in (curr, left):
        _queue(policy, rq, task, "fork")
    assert _run(policy, rq) is curr
    _queue(policy, rq, wakee, "fork")
    assert policy.wakeup_preempts(rq, curr, wakee, 0)
    bud = policy.buddies.root(rq)
    assert bud.next is wakee and bud.last is None  # 3 entities: no last buddy
    policy.put_prev(rq, curr, 0)
    assert _run(policy, rq) is wakee and bud.next is None


def test_a_skip_buddy_yields_only_to_a_task_within_a_granularity():
    """pick_next_entity() passes over the yielder only when the second entity is not too far
    right of it; a skip buddy passed over stays marked."""
    for second_at, expect_second in ((10 * MS + MS // 2, True), (12 * MS, False)):
        policy = _flat_policy()
        rq = policy.new_rq(0)
        yielder, second = _task(1, 10 * MS), _task(2, second_at)
        for task in (yielder, second):
            _queue(policy, rq, task, "fork")
        assert _run(policy, rq) is yielder
        policy.yield_task(rq, yielder, 0)
        policy.put_prev(rq, yielder, 0)
        assert _run(policy, rq) is (second if expect_second else yielder)
        assert (policy.buddies.root(rq).skip is yielder) == expect_second


def _move(policy, rq, entity, vruntime):
    """Requeue a root entity at another vruntime."""
    policy._remove(rq, entity)
    entity.vruntime = vruntime
    policy._insert(rq, entity)


def _sleep_in_group(buddies, gap):
    """Groups "vm" (two tasks) and "hogs" (one): the vm's first task runs and sleeps with its
    entity ``gap`` right of the hogs' entity.  Returns (the pick, hog, the vm's second)."""
    policy = _hier_policy(ncpus=1) if buddies else _no_buddies_hier_policy()
    rq = policy.new_rq(0)
    hog, first, second = _member(1, "hogs"), _member(2, "vm"), _member(3, "vm")
    for task in (hog, first, second):
        _queue(policy, rq, task, "fork")
    hogs, vm = _entity(policy, "hogs"), _entity(policy, "vm")
    _move(policy, rq, vm, 4 * MS)
    _move(policy, rq, hogs, 5 * MS)
    assert _run(policy, rq) is first
    gap_ns = gap(policy, hogs)
    vm.vruntime = hogs.vruntime + gap_ns  # the entity ran past the hogs' entity
    policy.curr_leaves(rq, first, 0)
    rq.nr_running -= 1
    if buddies:
        assert policy.buddies.root(rq).next is vm  # dequeue_task_fair()'s parent buddy
    return _run(policy, rq), hog, second


def _no_buddies_hier_policy():
    policy = _hier_policy(ncpus=1)
    policy.buddies = None
    return policy


def _granularity(policy, entity):
    return MS * 1024 // policy.buddies._weight(entity)


def test_a_group_task_that_sleeps_makes_its_groups_entity_the_next_buddy():
    """The vm's entity, half a granularity right of the hogs' one, runs next: its other
    task; without buddies the leftmost (the hogs) runs."""
    pick, _, second = _sleep_in_group(True, lambda pol, hogs: _granularity(pol, hogs) // 2)
    assert pick is second
    pick, hog, _ = _sleep_in_group(False, lambda pol, hogs: MS // 2)
    assert pick is hog


def test_the_parent_next_buddy_too_far_right_leaves_the_cpu_to_the_leftmost():
    pick, hog, _ = _sleep_in_group(True, lambda pol, hogs: 2 * _granularity(pol, hogs))
    assert pick is hog


def test_a_group_emptied_by_its_last_sleeper_leaves_no_buddy_at_the_root():
    policy = _hier_policy(ncpus=1)
    rq = policy.new_rq(0)
    hog, alone = _member(1, "hogs"), _member(2, "vm")
    for task in (hog, alone):
        _queue(policy, rq, task, "fork")
    while _run(policy, rq) is not alone:
        policy.put_prev(rq, hog, 0)
        _move(policy, rq, _entity(policy, "hogs"), 50 * MS)
    policy.curr_leaves(rq, alone, 0)
    rq.nr_running -= 1
    bud = policy.buddies.root(rq)
    assert bud.next is None and bud.last is None and bud.skip is None
    assert _run(policy, rq) is hog


def test_a_yield_in_a_group_skips_at_both_levels_and_the_skip_stays_until_picked():
    """set_skip_buddy() up the hierarchy; pick_next_entity() clears only the picked entity's
    pointers, so the VM's entity stays skipped while the hogs' runs; once the hogs' entity is
    more than a granularity right of it, the VM's entity runs, and inside the group the
    yielder is still passed over for its sibling."""
    policy = _hier_policy(ncpus=1)
    rq = policy.new_rq(0)
    hog, first, second = _member(1, "hogs"), _member(2, "vm"), _member(3, "vm")
    for task in (hog, first, second):
        _queue(policy, rq, task, "fork")
    hogs, vm = _entity(policy, "hogs"), _entity(policy, "vm")
    _move(policy, rq, vm, 4 * MS)
    _move(policy, rq, hogs, 4 * MS + MS // 10)
    gq = policy.hier.queues[("vm", 0)]
    for task, vruntime in ((first, MS), (second, MS + MS // 5)):  # 0.2 ms apart in the group
        remove(gq.data, task.key)
        task.vruntime = vruntime
        policy.hier._insert(gq, task)
    assert _run(policy, rq) is first
    policy.yield_task(rq, first, 0)
    policy.put_prev(rq, first, 0)
    group, root = gq.bud, policy.buddies.root(rq)
    assert group.skip is first and root.skip is vm
    for _ in range(2):  # the hogs' entity, within a granularity, runs instead
        assert _run(policy, rq) is hog and root.skip is vm
        policy.put_prev(rq, hog, 0)
    _move(policy, rq, hogs, vm.vruntime + 2 * _granularity(policy, vm))
    assert gq.data[0].task is first  # the leftmost in its group, yet passed over
    assert _run(policy, rq) is second
    assert root.skip is None and group.skip is first

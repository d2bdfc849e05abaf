"""A CFS sleeper's vruntime across its sleep (2.6.24 - 3.x; policies/cfs.py task_waking()):
it stays absolute while the task sleeps (dequeue_entity() normalises only without
DEQUEUE_SLEEP) and is made relative to the queue it slept on when it is woken, at that queue's
min_vruntime of the moment (3.x's task_waking_fair(), 2.6.24's set_task_cpu()); enqueue()
then adds the new queue's min_vruntime and place_entity() clamps it.  The model before
normalised at the sleep, so the time the queue advanced while the task slept was added to it
and a long sleeper never got place_entity()'s credit."""

import pytest

import simulator
from simulator.policies.cfs import CfsPolicy
from simulator.program import Task
from tests.simulator.test_cfs_group import _charge, _hier_policy, _member, _queue, _run

MS = 1_000_000


def _policy(kernel):
    tun = simulator.validate({"workload": "wake-pingpong", "kernel": kernel,
                              "cpus": 1})["tunables"]
    return CfsPolicy(kernel, tun, 1)


def _sleeps_while_other_runs(policy, rq, sleeper, other, other_ran):
    """``sleeper`` runs 0.1 ms and sleeps; ``other`` runs ``other_ran`` ns; ``sleeper`` is
    woken on the same CPU.  Returns the queue's min_vruntime at the wakeup."""
    assert _run(policy, rq) is sleeper
    _charge(policy, rq, sleeper, MS // 10, MS // 10)
    policy.curr_leaves(rq, sleeper, MS // 10)
    rq.nr_running -= 1
    assert _run(policy, rq, MS // 10) is other
    _charge(policy, rq, other, other_ran, MS // 10 + other_ran)
    now = MS // 10 + other_ran
    policy.task_waking(rq, sleeper, now)
    _queue(policy, rq, sleeper, "wakeup", now)
    return now


@pytest.mark.parametrize("kernel", ["2.6.24", "3.3"])
@pytest.mark.parametrize("other_ran", [MS // 5, 40 * MS])
def test_a_woken_sleeper_keeps_its_vruntime_or_gets_the_sleeper_credit(kernel, other_ran):
    """One CPU, a sleeper and a task that runs while it sleeps: woken, the sleeper's vruntime
    is max(its own, min_vruntime - the sleeper credit), its own not raised by how far the
    queue's min_vruntime moved meanwhile.  After a short sleep (0.2 ms) it keeps its 0.1 ms
    and does not preempt; after a long one (40 ms) it gets the credit (3.3: half the 6 ms
    latency, GENTLE_FAIR_SLEEPERS; 2.6.24: the 20 ms latency) and preempts, which the model
    before (0.1 ms + 40 ms) never let it do."""
    policy = _policy(kernel)
    rq = policy.new_rq(0)
    sleeper, other = Task(1, "sleeper", []), Task(2, "other", [])
    _queue(policy, rq, sleeper, "fork")
    _queue(policy, rq, other, "fork")
    _sleeps_while_other_runs(policy, rq, sleeper, other, other_ran)
    assert rq.min_vruntime == other_ran
    assert sleeper.vruntime == max(MS // 10, other_ran - policy.sleeper_credit)
    preempts = policy.wakeup_preempts(rq, other, sleeper, 0)
    assert preempts == (other_ran > MS)
    assert sleeper.vruntime < MS // 10 + other_ran  # the model before: 0.1 ms + other_ran


def test_a_woken_group_task_is_relative_to_its_groups_queue_at_the_wakeup():
    """With the group hierarchy (3.3) the same at the group's own queue: a vCPU sleeping
    while its group's other task runs 40 ms is placed at the group queue's min_vruntime less
    the credit, not 40 ms right of where it slept."""
    policy = _hier_policy()
    rq = policy.new_rq(0)
    sleeper, other = _member(1, "vm"), _member(2, "vm")
    _queue(policy, rq, sleeper, "fork")
    _queue(policy, rq, other, "fork")
    _sleeps_while_other_runs(policy, rq, sleeper, other, 40 * MS)
    gq = policy.hier.queues[("vm", 0)]
    assert gq.min_vruntime == 40 * MS
    assert sleeper.vruntime == 40 * MS - policy.sleeper_credit

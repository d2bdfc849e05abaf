"""RUN_TO_PARITY (6.6's sched_feat, on by default; 63304558ba5d "sched/eevdf: Curb
wakeup-preemption"): a woken or forked task does not preempt the running one while that one is
eligible and still on the slice (the deadline) it was picked with."""

import pytest

import simulator
from simulator.policies.eevdf import EevdfPolicy
from simulator.program import Task

TUN = {"sched_cost_ns": 0, "base_slice_ns": 750_000, "sched_cost_log_ns": 0, "HZ": 250,
       "run_to_parity": True}


def _running_parent_and_forked_child(run_to_parity, ran_ns=100_000):
    """A parent picked with a full slice runs ``ran_ns`` alone, then forks a child at nice -5.
    6.6 gives a new task a full slice (wake_up_new_task() places it without ENQUEUE_INITIAL),
    so a nice 0 child at the average would have a later deadline than its eligible parent;
    the nice -5 child's slice is 0.25 ms of virtual time (x 1024 / 3121), its deadline the
    earlier, as the half-slice child's was before that was modelled."""
    policy = EevdfPolicy("6.6-eevdf", {**TUN, "run_to_parity": run_to_parity}, 1)
    rq = policy.new_rq(0)
    parent, child = Task(1, "parent", []), Task(2, "child", [], nice=-5)
    policy.enqueue(rq, parent, "wakeup", 0)  # no lag: a full slice to its deadline
    assert policy.pick_next(rq, None, 0) is parent
    policy.on_pick(rq, parent, 0)
    policy.account(rq, parent, ran_ns, ran_ns)
    policy.task_fork(rq, parent, child, ran_ns, True)
    policy.enqueue(rq, child, "fork", ran_ns)
    return policy, rq, parent, child


def test_the_running_task_keeps_its_slice():
    policy, rq, parent, child = _running_parent_and_forked_child(True)
    # the child, placed at the average with its short (nice -5) slice, has the earlier
    # deadline...
    assert child.deadline < parent.deadline and child.vruntime <= policy._avg(rq)
    # ... but the parent, eligible, is protected until it has used the slice it was picked with
    assert parent.vruntime <= policy._avg(rq)
    assert not policy.wakeup_preempts(rq, parent, child, 100_000)
    assert policy.preempt_time(rq, parent, 100_000) == 750_000  # its slice ends there
    policy.account(rq, parent, 700_000, 800_000)  # 0.8 ms: past its deadline
    assert policy.wakeup_preempts(rq, parent, child, 800_000)


def test_without_it_the_child_preempts_at_once():
    policy, rq, parent, child = _running_parent_and_forked_child(False)
    assert policy.wakeup_preempts(rq, parent, child, 100_000)


def test_a_task_that_ran_alone_past_its_slice_is_not_protected():
    """Alone on the CPU the running task gets a new deadline each time it reaches one (as
    update_deadline() gives it), which is no longer the one it was picked with: a child it
    forks then preempts it at once, though it is eligible and short of its new deadline."""
    policy, rq, parent, child = _running_parent_and_forked_child(True, ran_ns=2_000_000)
    assert parent.vruntime <= policy._avg(rq) and parent.vruntime < parent.deadline
    assert policy.wakeup_preempts(rq, parent, child, 2_000_000)


def test_a_running_task_past_the_average_is_not_protected():
    """Protection holds only while the running task is eligible: once it has run past the
    average, a woken task with an earlier deadline preempts it mid-slice (its deadline is
    earlier than the queued child's too: it is the pick)."""
    policy, rq, parent, child = _running_parent_and_forked_child(True)
    policy.account(rq, parent, 300_000, 400_000)
    woken = Task(3, "woken", [])
    woken.vruntime = -700_000  # its lag: 0.7 ms owed
    policy.enqueue(rq, woken, "wakeup", 400_000)
    assert parent.vruntime > policy._avg(rq) and parent.vruntime < parent.deadline
    assert woken.vruntime <= policy._avg(rq) and woken.deadline < parent.deadline
    assert woken.deadline < child.deadline
    assert policy.wakeup_preempts(rq, parent, woken, 400_000)


@pytest.mark.parametrize("cpus", [1, 2, 4])
def test_fewer_wakeup_preemptions_on_a_chatroom(cpus):
    """The commit's point: EEVDF over-scheduled; with RUN_TO_PARITY the chatroom's messages
    preempt their receivers' CPUs less often.  Four rooms keep every CPU busy: with two rooms
    on two CPUs, 6.6's balancer pulls a waiting client to the CPU that goes idle at 0.69 ms
    and the two runs then switch alike (349 against 353 preemptions), where the shared 2.6 /
    3.x balancer had left that CPU idle (docs/simulator.md, "6.6's own load balancer")."""
    def counters(run_to_parity):
        return simulator.run({"workload": "chatroom", "kernel": "6.6-eevdf", "cpus": cpus,
                              "params": {"rooms": 4, "clients": 10, "messages": 100},
                              "tunables": {"run_to_parity": run_to_parity}})["counters"]
    on, off = counters(1), counters(0)
    assert on["preemptions"] < 0.8 * off["preemptions"], (on, off)
    assert on["context_switches"] < off["context_switches"], (on, off)


def test_a_woken_task_preempts_only_when_it_is_the_pick():
    """6.6's check_preempt_wakeup() preempts when pick_eevdf() returns the woken task: beating
    the running task's deadline is not enough while a queued eligible task's is earlier."""
    policy, rq, parent, child = _running_parent_and_forked_child(False)
    policy.account(rq, parent, 300_000, 400_000)
    woken = Task(3, "woken", [])
    woken.vruntime = -300_000  # 0.3 ms owed: eligible, deadline before the parent's
    policy.enqueue(rq, woken, "wakeup", 400_000)
    assert woken.vruntime <= policy._avg(rq) and woken.deadline < parent.deadline
    # the forked child (its nice -5 slice to its deadline) is eligible and earlier still
    assert child.vruntime <= policy._avg(rq) and child.deadline < woken.deadline
    assert not policy.wakeup_preempts(rq, parent, woken, 400_000)
    assert policy.pick_next(rq, None, 400_000) is child  # the pick agrees
    assert policy.wakeup_preempts(rq, parent, woken, 400_000)  # the child gone, it is

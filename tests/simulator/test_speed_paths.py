"""The compiled build's spelled-out forms of plain operations give the plain results."""

import itertools

from simulator import balance
from simulator.policies.base import NO_SLICE_END
from simulator.policies.eevdf import EevdfPolicy
from simulator.program import Task

TUN = {"sched_cost_ns": 0, "base_slice_ns": 750_000, "sched_cost_log_ns": 0, "HZ": 250,
       "run_to_parity": True}


def test_spans_is_tuple_membership():
    spans = [(), (0,), (3,), (0, 1), (2, 3), tuple(range(8)), tuple(range(64, 200, 7))]
    for span, cpu in itertools.product(spans, [-1, 0, 1, 3, 7, 8, 71, 190, 10**20]):
        assert balance._spans(span, cpu) == (cpu in span), (span, cpu)


def test_no_slice_end_alone_and_an_instant_from_start_with_company():
    policy = EevdfPolicy("6.6-eevdf", TUN, 1)
    rq = policy.new_rq(0)
    task, other = Task(1, "task", []), Task(2, "other", [])
    policy.enqueue(rq, task, "wakeup", 0)
    assert policy.pick_next(rq, None, 0) is task
    policy.on_pick(rq, task, 0)
    assert policy.preempt_time(rq, task, 5) == NO_SLICE_END  # nobody waits
    policy.enqueue(rq, other, "wakeup", 5)
    assert 5 <= policy.preempt_time(rq, task, 5) != NO_SLICE_END

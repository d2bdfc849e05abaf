"""The compiled build's spelled-out forms of plain operations give the plain results."""

import itertools
import random

import pytest

from simulator import balance
from simulator.policies.base import NO_SLICE_END
from simulator.policies.eevdf import EevdfPolicy
from simulator.policies.taskheap import NOT_QUEUED, Heap, Node, push, remove
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


def test_heap_that_never_shrinks_is_a_priority_queue():
    """taskheap.Heap keeps its nodes in the first ``size`` items of a list that never shrinks
    (no reallocation as a queue goes 1 -> 0 -> 1): against a sorted list of (key, order) over
    random pushes and removals (the top, anywhere), the top and the contents agree at every
    step, each node knows its position, and positions past ``size`` are refused."""
    rng = random.Random(24)
    heap = Heap()
    nodes = [Node(Task(i, f"t{i}", [])) for i in range(40)]
    model: list[tuple[int, int, Node]] = []
    order = 0
    capacity = 0
    for _step in range(6000):
        free = [n for n in nodes if n.pos == NOT_QUEUED]
        if free and (not model or rng.random() < 0.5):
            node = rng.choice(free)
            order += 1
            node.key, node.order = rng.randrange(8), order  # many equal keys: order decides
            push(heap, node)
            model.append((node.key, node.order, node))
        else:
            entry = min(model, key=lambda e: e[:2]) if rng.random() < 0.5 else rng.choice(model)
            remove(heap, entry[2])
            model.remove(entry)
            assert entry[2].pos == NOT_QUEUED
        model.sort(key=lambda e: e[:2])
        assert len(heap) == heap.size == len(model) and bool(heap) == bool(model)
        assert len(heap.nodes) >= capacity  # never shrinks
        capacity = len(heap.nodes)
        assert sorted(map(id, heap)) == sorted(id(e[2]) for e in model)
        assert all(heap[n.pos] is n for n in heap.live())
        if model:
            assert heap.nodes[0] is heap[0] is model[0][2]
        with pytest.raises(IndexError):
            heap[heap.size]
    assert capacity < len(nodes) + 1 and order > 2500

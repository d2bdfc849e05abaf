"""The engine's two event queues (simulator/eventq.py) against each other and against a model.

The indexed heap is the compiled build's queue, heapq with lazy cancellation the pure-Python
build's.  Both must pop the same events in the same order, so every workload x every kernel
family gives identical results on either.
"""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simulator
from simulator import eventq
from simulator.eventq import Event, EventQueue, LazyHeapQueue
from tests.simulator.test_reference_mode import KERNELS, SMALL, _comparable


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("workload", sorted(SMALL))
def test_both_queues_give_identical_results(workload, kernel):
    spec = {"workload": workload, "kernel": kernel, "topology": "2x2x2",
            "params": SMALL[workload], "seed": 5}
    indexed = simulator.run(spec, queue="indexed")
    lazy = simulator.run(spec, queue="heapq")
    assert _comparable(indexed) == _comparable(lazy)
    assert indexed["counters"]["events"] > 0


def test_both_queues_agree_on_a_busy_chatroom():
    """Many re-planned segments and idle CPUs re-arming balance ticks: most events move."""
    spec = {"workload": "chatroom", "kernel": "rsdl-0.31", "cpus": 8, "seed": 3,
            "params": {"rooms": 10, "clients": 20, "messages": 100}}
    assert _comparable(simulator.run(spec, queue="indexed")) == _comparable(
        simulator.run(spec, queue="heapq"))


# one operation on a queue of 12 events: (0, i, when) schedule, (1, i, _) cancel, (2, _, _) pop,
# (3, _, later) handle the earliest as the engine does: first(), schedule it again `later` ns
# on if that is odd, settle()
OPERATIONS = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 11), st.integers(0, 40)),
                      max_size=300)


def _replay(queue, operations):
    """Apply ``operations``; return what each pop gave and what was left, in pop order."""
    events = [Event(0, i) for i in range(12)]
    popped = []
    for op, index, when in operations:
        if op == 0:
            queue.schedule(events[index], when)
        elif op == 1:
            queue.cancel(events[index])
        elif op == 2:
            ev = queue.pop()
            popped.append(None if ev is None else (ev.obj, ev.when))
        else:
            ev = queue.first()
            popped.append(None if ev is None else (ev.obj, ev.when))
            if ev is not None:
                seq = ev.seq
                if when % 2:
                    queue.schedule(ev, ev.when + when)
                queue.settle(ev, seq)
    while (ev := queue.pop()) is not None:
        popped.append((ev.obj, ev.when))
    return popped


def _model(operations):
    """The contract in plain terms: each event's latest (when, seq) if it is still queued."""
    pending = {}
    seq = 0
    popped = []
    for op, index, when in operations:
        if op == 0:
            seq += 1
            pending[index] = (when, seq)
        elif op == 1:
            pending.pop(index, None)
        elif not pending:
            popped.append(None)
        else:
            first = min(pending, key=pending.get)
            first_when = pending.pop(first)[0]
            popped.append((first, first_when))
            if op == 3 and when % 2:
                seq += 1
                pending[first] = (first_when + when, seq)
    for index in sorted(pending, key=pending.get):
        popped.append((index, pending[index][0]))
    return popped


@settings(max_examples=300, deadline=None)
@given(OPERATIONS)
def test_queues_pop_in_when_then_schedule_order(operations):
    expected = _model(operations)
    assert _replay(EventQueue(), operations) == expected
    assert _replay(LazyHeapQueue(), operations) == expected


def test_indexed_heap_keeps_positions_and_the_heap_property():
    queue = EventQueue()
    events = [Event(0, i) for i in range(50)]
    rng = random.Random(7)
    for _ in range(2000):
        ev = rng.choice(events)
        if rng.random() < 0.2:
            queue.cancel(ev)
            assert not ev.queued
        else:
            queue.schedule(ev, rng.randrange(100))
            assert ev.queued
        heap = queue.heap
        for pos, item in enumerate(heap):
            assert item.pos == pos
            if pos:
                parent = heap[(pos - 1) // 2]
                assert (parent.when, parent.seq) < (item.when, item.seq)
    assert len(queue) == sum(ev.queued for ev in events)


def test_lazy_queue_compacts_superseded_entries():
    """Moving one event over and over leaves superseded entries; compaction bounds them."""
    queue = LazyHeapQueue()
    ev = Event(0, None)
    for when in range(1000, 0, -1):
        queue.schedule(ev, when)
    assert len(queue) <= eventq.HEAP_SLACK
    assert queue.pop() is ev and ev.when == 1
    assert queue.pop() is None


def test_the_build_picks_its_faster_queue():
    expected = EventQueue if eventq.COMPILED else LazyHeapQueue
    assert type(eventq.new_queue()) is expected
    assert simulator._compiled.STATE.startswith("compiled") == eventq.COMPILED

"""The simulator's O(log n) picks against the plain definitions they replace.

2.4's goodness() scan is the modelled kernel's cost (charged in simulated time, unchanged); the
simulator finds the same task from heaps.  Here both run side by side over thousands of random
runqueue operations, on twin task sets, and must pick the same task every time (ties by list
order included) and leave the same counters after every recalculation.
"""

import random

import simulator
from simulator.api import make_policy
from simulator.engine import Engine
from simulator.program import Task
from simulator.topology import parse_topology

NCPUS = 4


def _policy(reference):
    """A 2.4 policy attached to an engine of NCPUS CPUs (whose task table a recalculation
    walks), in reference mode (the plain scan) or not; no workload, no events."""
    norm = simulator.validate({"workload": "yield-loop", "kernel": "2.4", "cpus": NCPUS})
    topo = parse_topology(norm["topology"])
    policy = make_policy(norm, topo.ncpus)
    eng = Engine(topo, policy, norm["tunables"], 0, 10**6, reference=reference)
    return policy, eng, eng.cpus[0].rq


class Twins:
    """The same runqueue history applied to an indexed policy and a scanning one, each with
    its own copy of every task."""

    def __init__(self):
        self.sides = [_policy(reference=False), _policy(reference=True)]
        self.picks = self.recalcs = self.bonus_wins = 0

    def new_task(self, tid, nice, quota, last_cpu, how):
        for policy, eng, rq in self.sides:
            task = Task(tid, f"t{tid}", [], nice=nice)
            task.quota, task.last_cpu = quota, last_cpu
            eng.tasks[tid] = task
            policy.enqueue(rq, task, how, 0)

    def wake(self, tid):
        for policy, eng, rq in self.sides:
            policy.enqueue(rq, eng.tasks[tid], "wakeup", 0)

    def dequeue(self, tid):
        for policy, eng, rq in self.sides:
            policy.dequeue(rq, eng.tasks[tid], 0)

    def exit(self, tid):
        for _policy, eng, _rq in self.sides:
            del eng.tasks[tid]

    def put_back(self, tid, cpu_id, used, yielded):
        for policy, eng, rq in self.sides:
            task = eng.tasks[tid]
            task.quota -= used
            task.last_cpu = cpu_id
            task.yield_pending = yielded
            policy.put_prev(rq, task, 0)

    def pick(self, cpu_id):
        """Both pick for ``cpu_id``: the same task, and the same counters everywhere after."""
        plain_tasks = self.sides[1][1].tasks
        before = {tid: t.quota for tid, t in plain_tasks.items()}
        got = [policy.pick_next(rq, eng.cpus[cpu_id], 0) for policy, eng, rq in self.sides]
        assert got[0].tid == got[1].tid
        fast = [(t.tid, t.quota, t.yield_pending) for t in self.sides[0][1].tasks.values()]
        plain = [(t.tid, t.quota, t.yield_pending) for t in plain_tasks.values()]
        assert fast == plain
        self.recalcs += any(t.quota != before[tid] for tid, t in plain_tasks.items())
        self.bonus_wins += got[0].last_cpu == cpu_id
        self.picks += 1
        return got[0].tid


def test_indexed_goodness_pick_is_the_scan_pick():
    """Random runqueue histories: tasks forked and woken with any counter, nice level and last
    CPU, dequeued, put back after running (some after sched_yield(), picked again at once as
    the engine does), blocking, exiting; picks on any free CPU."""
    rng = random.Random(24)
    twins = Twins()
    assert twins.sides[0][0].indexed and not twins.sides[1][0].indexed
    tick = twins.sides[0][0].tick
    queued: list[int] = []
    running: dict[int, int] = {}  # tid -> the CPU it runs on
    sleeping: list[int] = []
    tid = 0
    for _ in range(8000):
        op = rng.random()
        if (op < 0.2 and len(queued) < 16) or len(queued) < 2:
            if sleeping and rng.random() < 0.5:
                woken = sleeping.pop(rng.randrange(len(sleeping)))
                twins.wake(woken)
                queued.append(woken)
            else:
                tid += 1
                twins.new_task(tid, rng.choice((0, 0, 0, -5, 10, 19, -20)),
                               rng.choice((0, -1, 1, tick // 2, 3 * tick, 6 * tick)),
                               rng.choice((None, *range(NCPUS))), rng.choice(("fork", "wakeup")))
                queued.append(tid)
        elif op < 0.25:
            gone = queued.pop(rng.randrange(len(queued)))
            twins.dequeue(gone)
            sleeping.append(gone)
        elif op < 0.65 and running:
            ran = rng.choice(sorted(running))
            cpu_id = running.pop(ran)
            if rng.random() < 0.3:  # it blocks or exits instead of going back
                if rng.random() < 0.5:
                    sleeping.append(ran)
                else:
                    twins.exit(ran)
                continue
            yielded = rng.random() < 0.3
            twins.put_back(ran, cpu_id, rng.randrange(0, 7 * tick), yielded)
            queued.append(ran)
            if yielded:  # sched_yield(): schedule() at once on that CPU
                picked = twins.pick(cpu_id)
                queued.remove(picked)
                running[picked] = cpu_id
        else:
            cpu_id = rng.randrange(NCPUS)
            if cpu_id not in running.values():
                picked = twins.pick(cpu_id)
                queued.remove(picked)
                running[picked] = cpu_id
    assert twins.picks > 2000 and twins.recalcs > 20 and twins.bonus_wins > 200, vars(twins)


def test_2_4_yielders_same_result_as_the_scan():
    """The whole engine on 2.4 with 300 yielders, indexed pick against reference mode (which
    scans): identical results."""
    spec = {"workload": "yield-loop", "kernel": "2.4", "cpus": 4,
            "params": {"tasks": 300, "duration_ms": 300, "warmup_ms": 0}}
    fast = simulator.run(spec)
    plain = simulator.run(spec, reference=True)
    fast.pop("wall_seconds")
    plain.pop("wall_seconds")
    assert fast == plain
    assert fast["counters"]["sched_decisions"] > 500


def test_rsdl_best_level_from_the_remainder_table_is_the_lowest_set_bit():
    """RSDL's pick finds its best level (the lowest set bit of the level bitmap) from a table
    indexed by the lowest bit's remainder modulo 67, instead of int.bit_length(): the same
    level for every bitmap of its 40 levels, single bits and random mixes alike."""
    from simulator.policies.rsdl import LEVELS, _lowest_bit

    rng = random.Random(24)
    bitmaps = [1 << level for level in range(LEVELS)]
    bitmaps += [rng.randrange(1, 1 << LEVELS) for _ in range(20_000)]
    bitmaps += [(1 << LEVELS) - 1, 1 << (LEVELS - 1) | 1]
    for bitmap in bitmaps:
        assert _lowest_bit(bitmap) == (bitmap & -bitmap).bit_length() - 1, bitmap

"""6.6's PELT utilisation and runnable averages (simulator/pelt.py) and where the balancer reads
them: each signal on its own, migration and exit moving a task's part, group_classify() with
real utilisation, and an engine run whose CPU sums stay the sums of their tasks' averages."""

import random

import pytest

import simulator
from simulator import balance66
from simulator.api import make_policy, validate
from simulator.engine import Engine
from simulator.pelt import HALF_LIFE_NS, SCHED_CAPACITY_SCALE, Pelt, decay
from simulator.program import Task
from simulator.topology import parse_topology

MS = 1_000_000


def _run_duty_cycle(pelt, cpu, tid, on_ns, off_ns, periods, start=0):
    """The task runs on_ns, sleeps off_ns, ``periods`` times; returns the time at the end."""
    now = start
    for _ in range(periods):
        pelt.enqueue(cpu, tid, now)
        pelt.run(cpu, tid, now, 1)
        now += on_ns
        pelt.run(cpu, tid, now, 0)
        pelt.dequeue(cpu, tid, now, True)
        now += off_ns
    return now


def test_a_task_running_half_the_time_converges_to_half_the_capacity():
    pelt = Pelt(1, 0)
    now = _run_duty_cycle(pelt, 0, 1, 2 * MS, 2 * MS, 500)  # 2 s, 30 half-lives
    util = pelt.task_util(1, now)
    assert 480 <= util <= 530, util  # 512 with a ripple of about 2 ms / 47 ms around it
    assert abs(pelt.cpu_util(0, now) - util) <= 1  # its CPU's sum is its average alone
    assert abs(pelt.cpu_runnable(0, now) - util) <= 1  # runnable only while it runs


def test_an_always_running_task_reaches_the_capacity_and_a_sleeping_one_halves_per_half_life():
    pelt = Pelt(1, 0)
    pelt.enqueue(0, 1, 0)
    pelt.run(0, 1, 0, 1)
    now = 20 * HALF_LIFE_NS
    assert pelt.task_util(1, now) >= SCHED_CAPACITY_SCALE - 1
    pelt.run(0, 1, now, 0)
    pelt.dequeue(0, 1, now, True)
    before = pelt.task_util(1, now)
    assert pelt.task_util(1, now + HALF_LIFE_NS) == pytest.approx(before / 2, abs=1)


def test_two_tasks_sharing_a_cpu_fill_its_util_and_double_its_runnable():
    pelt = Pelt(1, 0)
    now = 0
    pelt.enqueue(0, 1, now)
    pelt.enqueue(0, 2, now)
    for _ in range(1000):  # 4 s of 2-ms turns
        for tid in (1, 2):
            pelt.run(0, tid, now, 1)
            now += 2 * MS
            pelt.run(0, tid, now, 0)
    assert pelt.cpu_util(0, now) >= SCHED_CAPACITY_SCALE - 1
    assert pelt.cpu_runnable(0, now) == pytest.approx(2 * SCHED_CAPACITY_SCALE, abs=2)
    assert 480 <= pelt.task_util(1, now) <= 540
    assert pelt.cpu_util_without(0, 1, now) == pytest.approx(SCHED_CAPACITY_SCALE
                                                             - pelt.task_util(1, now), abs=2)


def test_a_migrating_task_takes_its_averages_along_and_an_exiting_one_takes_them_away():
    pelt = Pelt(2, 0)
    now = _run_duty_cycle(pelt, 0, 1, 2 * MS, 2 * MS, 200)
    util = pelt.task_util(1, now)
    assert pelt.cpu_util(0, now) == pytest.approx(util, abs=1)
    pelt.enqueue(1, 1, now)  # it wakes on CPU 1: detached from 0, attached to 1
    assert pelt.cpu_util(0, now) <= 1
    assert pelt.cpu_util(1, now) == pytest.approx(util, abs=1)
    assert pelt.cpu_util_without(1, 1, now) <= 1
    pelt.dequeue(1, 1, now, True)
    pelt.exit(1, now)
    assert pelt.cpu_util(1, now) <= 1 and pelt.cpu_runnable(1, now) <= 1


def test_a_new_task_starts_at_half_its_cpus_spare_utilisation():
    """post_init_entity_util_avg()'s cap: (capacity - the CPU's util) / 2."""
    pelt = Pelt(1, 0)
    pelt.enqueue(0, 1, 0)
    assert pelt.task_util(1, 0) == SCHED_CAPACITY_SCALE // 2
    pelt.enqueue(0, 2, 0)
    assert pelt.task_util(2, 0) == SCHED_CAPACITY_SCALE // 4


def test_group_classify_with_pelt_util_sees_spare_capacity_where_steady_state_sees_overload():
    """Three tasks on two CPUs, all just woken after a long sleep: steady state counts 2048 of
    utilisation (overloaded); their PELT averages are low, so the group has spare capacity."""
    pelt = Pelt(2, 0)
    for tid, cpu in ((1, 0), (2, 0), (3, 1)):
        _run_duty_cycle(pelt, cpu, tid, MS, 99 * MS, 10)
    now = 1000 * MS + 20 * HALF_LIFE_NS  # after the cycles' second
    for tid, cpu in ((1, 0), (2, 0), (3, 1)):
        pelt.enqueue(cpu, tid, now)
    stats = balance66.GroupStats((0, 1), False)
    stats.nr = 3
    stats.util = sum(pelt.cpu_util(c, now) for c in (0, 1))
    stats.runnable = sum(pelt.cpu_runnable(c, now) for c in (0, 1))
    assert stats.util < 100
    assert balance66.group_classify(117, stats, False) == balance66.HAS_SPARE
    stats.util, stats.runnable = 2 * SCHED_CAPACITY_SCALE, 3 * SCHED_CAPACITY_SCALE
    assert balance66.group_classify(117, stats, False) == balance66.OVERLOADED


def _engine(**tunables):
    norm = validate({"workload": "wake-pingpong", "kernel": "6.6-eevdf", "topology": "1x2x2",
                     "tunables": tunables})
    return Engine(parse_topology(norm["topology"]), make_policy(norm, norm["cpus"]),
                  norm["tunables"], 1, 10**6)


def test_only_66_with_pelt_signals_keeps_the_averages():
    assert _engine().pelt is not None
    assert _engine(pelt_signals=False).pelt is None
    assert _engine(balance_66=False).pelt is None


def test_an_engine_run_keeps_each_cpus_sums_the_sums_of_its_tasks_averages():
    eng = _engine()
    for tid in range(1, 7):
        eng.spawn(Task(tid, f"t{tid}", []), 0)
    eng.now = 50 * MS
    pelt = eng.pelt
    assert pelt is not None
    for cpu in range(len(eng.cpus)):
        attached = [s for s in pelt.tasks.values() if s.cpu == cpu]
        for s in attached:
            s.settle(eng.now)
        c = pelt.cpus[cpu]
        c.settle(eng.now)
        assert c.util == pytest.approx(sum(s.util for s in attached), abs=1e-6)
        assert c.runnable == pytest.approx(sum(s.runnable for s in attached), abs=1e-6)
        assert c.nr == eng.cpus[cpu].rq.nr_running


def test_pelt_signals_move_a_66_run_and_leave_it_when_off():
    """The switch is live (the figures move) and off gives the steady-state model's run."""
    spec = {"workload": "chatroom", "kernel": "6.6-eevdf", "cpus": 4, "seed": 1,
            "params": {"rooms": 2, "clients": 10, "messages": 30, "lock": "futex"}}
    on, off = (simulator.run({**spec, "tunables": {"pelt_signals": flag}})
               for flag in (True, False))
    assert on["counters"] != off["counters"]


def test_hogs_ahead_ms_starts_the_guest_later_and_counts_its_run_only():
    """`hogs_ahead_ms`: the vCPUs sleep while the hogs run first; the throughput is taken over
    the guest's own run (counting the 200 ms head start would cut 100 requests' ops/s about
    tenfold) and its vCPUs wait for nothing before they start."""
    spec = {"workload": "overcommit", "kernel": "6.6-eevdf", "topology": "1x4x2", "seed": 1}
    params = {"vcpus": 8, "hog_group_sizes": "6,6", "kick": "ipi", "requests": 100}
    cold, warm = (simulator.run({**spec, "params": {**params, "hogs_ahead_ms": ahead}})
                  for ahead in (0, 200))
    ops_cold, ops_warm = (r["metrics"]["throughput_ops_per_s"][0] for r in (cold, warm))
    assert ops_cold / 2 < ops_warm < 2 * ops_cold, (ops_cold, ops_warm)
    assert warm["metrics"] != cold["metrics"]


def test_decay_is_the_power_it_replaced_bit_for_bit():
    """decay() calls math.pow (a direct C call once compiled) where it had `0.5 ** x`: the
    same libm pow(), so every average, and every run, is what it was."""
    rng = random.Random(24)
    elapsed = [0, 1, 999, HALF_LIFE_NS, 3 * HALF_LIFE_NS + 7] + [
        rng.randrange(0, 400 * HALF_LIFE_NS) for _ in range(20_000)]
    assert all(decay(ns) == 0.5 ** (ns / HALF_LIFE_NS) for ns in elapsed)



def _fields(s):
    return (s.util, s.runnable, s.stamp, s.running, s.nr, s.cpu)


def test_the_signal_calls_equal_the_tid_calls_bit_for_bit():
    """The engine calls enqueue_signal(), run_signal() and dequeue_signal() with the Signal it
    keeps on the Task; enqueue(), run() and dequeue() find it by tid.  The same random
    history through each leaves every task's and CPU's averages identical, to the bit."""
    rng = random.Random(12)
    by_tid, by_signal = Pelt(3, 0), Pelt(3, 0)
    kept = {}  # tid -> Signal, as Task.pelt keeps it
    queued = {}  # tid -> cpu
    running = {}  # cpu -> tid
    now = 0
    for _ in range(4000):
        now += rng.choice((0, 1, 1000, 250_000, 3 * MS))
        tid = rng.randrange(1, 9)
        if tid not in queued:
            cpu = rng.randrange(3)
            by_tid.enqueue(cpu, tid, now)
            kept[tid] = by_signal.enqueue_signal(cpu, kept.get(tid), tid, now)
            queued[tid] = cpu
        elif running.get(queued[tid]) == tid:
            cpu = queued[tid]
            by_tid.run(cpu, tid, now, 0)
            by_signal.run_signal(cpu, kept[tid], now, 0)
            del running[cpu]
            gone = rng.random() < 0.7
            by_tid.dequeue(cpu, tid, now, gone)
            by_signal.dequeue_signal(cpu, kept[tid], now, gone)
            del queued[tid]
            if rng.random() < 0.05:
                by_tid.exit(tid, now)
                by_signal.exit(tid, now)
                del kept[tid]
        elif queued[tid] not in running:
            by_tid.run(queued[tid], tid, now, 1)
            by_signal.run_signal(queued[tid], kept[tid], now, 1)
            running[queued[tid]] = tid
        assert {t: _fields(s) for t, s in by_tid.tasks.items()} == {
            t: _fields(s) for t, s in by_signal.tasks.items()}
        assert [_fields(c) for c in by_tid.cpus] == [_fields(c) for c in by_signal.cpus]
    assert all(by_signal.tasks[t] is s for t, s in kept.items())
    assert len(by_tid.tasks) > 3 and by_tid.cpus[0].util > 0.0


def test_during_an_engine_run_each_tasks_signal_is_its_entry_in_pelt_tasks():
    """Task.pelt is what the engine hands to the signal calls: it must be Pelt.tasks[tid]
    from the task's first enqueue until it exits (then both are gone)."""
    from simulator.wl_common import Build
    from simulator.workloads import WORKLOADS

    norm = validate({"workload": "chatroom", "kernel": "6.6-eevdf", "topology": "1x2x2",
                     "params": {"rooms": 2, "clients": 6, "messages": 40}})
    for budget in (500, 2000, 10**6):
        eng = Engine(parse_topology(norm["topology"]), make_policy(norm, norm["cpus"]),
                     norm["tunables"], 1, budget)
        build = Build(eng, norm["params"])
        WORKLOADS["chatroom"].build(build)
        eng._seed_events()
        eng._event_loop()  # stops after ``budget`` events, mid-run but the last
        pelt = eng.pelt
        assert pelt is not None
        live = list(eng.tasks.values())
        assert all(task.pelt is pelt.tasks.get(task.tid) for task in live)
        assert set(pelt.tasks) <= {task.tid for task in live}
        assert sum(task.pelt is not None for task in live) == len(pelt.tasks)
        assert pelt.tasks or budget == 10**6  # mid-run: tasks with averages to check
    assert not pelt.tasks and not live  # the whole run: every task exited, its signal gone


def test_pelts_settle_with_the_decay_reused_equals_signal_settle_bit_for_bit():
    """Pelt._settle() reuses the decay of the span it computed last; Signal.settle() always
    calls decay(): over spans that repeat (as a task's and its CPU's do) both give the same
    averages, to the bit."""
    from simulator.pelt import Signal
    rng = random.Random(7)
    pelt = Pelt(1, 0)
    memo, plain = Signal(0, 300.0, 700.0), Signal(0, 300.0, 700.0)
    now = 0
    for _ in range(20_000):
        now += rng.choice((0, 1000, 1000, 250_000, 250_000, rng.randrange(1, 5 * MS)))
        for s in (memo, plain):
            s.running, s.nr = now % 2, now % 3
        pelt._settle(memo, now)
        plain.settle(now)
        assert _fields(memo) == _fields(plain)
    assert pelt.memo_elapsed > 0

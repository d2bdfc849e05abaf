"""Active balancing (balance.py _active_balance() / active_push(), balance66.py
need_active_balance() / request_active_push() / detach_one_task()), mechanism by mechanism:
the kick after cache_nice_tries + 2 failed passes, the migration thread's push of the task it
preempted, the bookkeeping of nr_balance_failed and the balance interval, 6.6's
group_smt_balance case, and the tunable that switches it off."""

import pytest

import simulator
from simulator import balance, balance66
from simulator.api import make_policy, validate
from simulator.engine import Engine
from simulator.program import EXIT, RUN, Task
from simulator.topology import parse_topology

LONG_NS = 10**10


def _engine(kernel, topology, tunables=None):
    norm = validate({"workload": "wake-pingpong", "kernel": kernel, "topology": topology,
                     "tunables": {"noise_pct": 0, **(tunables or {})}})
    return Engine(parse_topology(norm["topology"]), make_policy(norm, norm["cpus"]),
                  norm["tunables"], 1, 10**6)


def _task(tid, affinity=None, run_ns=LONG_NS):
    return Task(tid, f"t{tid}", [(RUN, run_ns), (EXIT,)], affinity=affinity)


def _running(eng, cpu_id, task):
    eng.spawn(task, cpu_id)
    eng.schedule(eng.cpus[cpu_id])
    assert eng.cpus[cpu_id].curr is task


def _pinned_pair(kernel, tunables=None):
    """CPU 0 runs ``a`` (allowed anywhere) with ``b`` queued behind it, pinned to CPU 0; CPU 1
    idle, 100 ms on (every load history has caught up with the 2048 on CPU 0)."""
    eng = _engine(kernel, "1x2x1", tunables)
    a, b = _task(1), _task(2, affinity={0})
    _running(eng, 0, a)
    eng.spawn(b, 0)
    eng.now = 100_000_000
    for cpu in eng.cpus:
        balance.load_changed(eng, cpu)
    return eng, a, b


@pytest.mark.parametrize("kernel", ["2.6.22", "2.6.24", "3.3", "rsdl-0.33"])
def test_the_running_task_is_pushed_after_cache_nice_tries_plus_3_failed_passes(kernel):
    """Nothing queued can move (b is pinned, a runs): each periodic pass of the idle CPU fails;
    the (cache_nice_tries + 3)th wakes CPU 0's migration thread, which preempts a and pushes it
    to CPU 1 (cache-hot or not); b runs on CPU 0."""
    eng, a, b = _pinned_pair(kernel)
    cpu0, cpu1 = eng.cpus
    level = cpu1.domains[0]
    for _ in range(level.cache_nice_tries + 2):
        assert not balance.load_balance(eng, cpu1, level, "idle")
        assert cpu0.push_cpu == -1 and level.balance_interval_ms == level.min_interval_ms
    interval = level.balance_interval_ms
    assert not balance.load_balance(eng, cpu1, level, "idle")
    assert cpu0.push_cpu == 1 and cpu0.need_resched
    # "We've kicked active balancing, reset the failure counter" -- and back off
    assert level.nr_balance_failed == level.cache_nice_tries + 1
    assert level.balance_interval_ms == min(2 * interval, level.max_interval_ms)
    preemptions = eng.n_preemptions
    eng.schedule(cpu0)  # the migration thread runs, then CPU 0 picks again
    assert cpu0.curr is b and a.cpu == 1 and cpu0.push_cpu == -1
    assert eng.n_preemptions == preemptions + 1
    assert eng.counters["active_balance_pushed"] == 1


def test_a_newly_idle_pass_never_kicks_on_the_shared_balancer():
    eng, a, _ = _pinned_pair("3.3")
    cpu0, cpu1 = eng.cpus
    level = cpu1.domains[0]
    level.nr_balance_failed = 10
    assert not balance.load_balance(eng, cpu1, level, "newidle")
    assert cpu0.push_cpu == -1


def test_a_running_task_pinned_to_its_cpu_is_not_pushed():
    """out_one_pinned: no kick; the interval backs off (all_pinned: up to 512 ms)."""
    eng = _engine("2.6.22", "1x2x1")
    cpu0, cpu1 = eng.cpus
    _running(eng, 0, _task(1, affinity={0}))
    eng.spawn(_task(2, affinity={0}), 0)
    eng.now = 100_000_000
    for cpu in eng.cpus:
        balance.load_changed(eng, cpu)
    level = cpu1.domains[0]
    level.nr_balance_failed = level.cache_nice_tries + 2
    before = level.balance_interval_ms
    balance.load_balance(eng, cpu1, level, "idle")
    assert cpu0.push_cpu == -1 and level.balance_interval_ms == 2 * before


def test_the_tunable_switches_it_off():
    eng, _, _ = _pinned_pair("2.6.22", {"active_balance": False})
    cpu0, cpu1 = eng.cpus
    level = cpu1.domains[0]
    for _ in range(level.cache_nice_tries + 6):
        balance.load_balance(eng, cpu1, level, "idle")
    assert cpu0.push_cpu == -1 and "active_balance_kicks" not in eng.counters


def _smt_pair(tunables=None):
    """1x2x2: core 0 (CPUs 0 and 1) runs one task on each thread, core 1 is idle."""
    eng = _engine("6.6-eevdf", "1x2x2", tunables)
    a, c = _task(1), _task(2)
    _running(eng, 0, a)
    _running(eng, 1, c)
    return eng, a, c


def test_66_group_smt_balance_pushes_a_lone_running_task_to_an_idle_core():
    """CPU 2 balancing the MC level sees core 0 as group_smt_balance: migrate_task, 1 task;
    the busiest queue has one running task, so nothing is detached and each pass fails; the
    (cache_nice_tries + 3)th kicks the stopper, which pushes that task; the push resets
    nr_balance_failed and the interval stays at min_interval."""
    eng, a, _ = _smt_pair()
    cpu2 = eng.cpus[2]
    level = cpu2.domains[1]
    assert level.name == "MC"
    for _ in range(level.cache_nice_tries + 2):
        assert balance66.load_balance(eng, cpu2, 1, balance66.IDLE) == (0, True)
        assert eng.cpus[0].push_cpu == -1
    balance66.load_balance(eng, cpu2, 1, balance66.IDLE)
    assert eng.cpus[0].push_cpu == 2
    assert level.nr_balance_failed == level.cache_nice_tries + 3  # 6.6 leaves it at the kick
    assert level.balance_interval_ms == level.min_interval_ms
    eng.schedule(eng.cpus[0])
    assert a.cpu == 2 and eng.cpus[0].curr is None and level.nr_balance_failed == 0


def test_66_newly_idle_pass_kicks_once_periodic_passes_failed():
    """imbalanced_active_balance() does not look at the idle type."""
    eng, _, _ = _smt_pair()
    level = eng.cpus[2].domains[1]
    level.nr_balance_failed = level.cache_nice_tries + 3
    balance66.load_balance(eng, eng.cpus[2], 1, balance66.NEWLY_IDLE)
    assert eng.cpus[0].push_cpu == 2


def test_66_without_the_tunable_the_smt_case_never_moves():
    eng, _, _ = _smt_pair({"active_balance": False})
    for _ in range(10):
        balance66.load_balance(eng, eng.cpus[2], 1, balance66.IDLE)
    assert eng.cpus[0].push_cpu == -1


def test_whole_runs_count_kicks_and_pushes_only_when_they_happen():
    """The 2.4 profile has no balancer and no tunable; its counters carry no new names."""
    spec = {"workload": "threadtest", "cpus": 2,
            "params": {"iterations": 8, "loops": 200_000, "yield_in_spin": True}}
    old = simulator.run({**spec, "kernel": "2.4"})
    assert "active_balance" not in old["tunables"]
    assert "active_balance_kicks" not in old["counters"]


@pytest.mark.parametrize("active", [True, False])
def test_a_whole_o1_run_pushes_the_running_task_off_a_pinned_queue(active):
    """2.6.22 with its 100 ms slices: a runs 2 s on CPU 0 with b queued behind it, pinned
    there; the idle CPU's periodic passes fail until the migration thread pushes a (one kick,
    one push); without it a waits on CPU 0 until its slice expires and b runs, and only then
    can a queued a be pulled, so both finish later."""
    eng = _engine("2.6.22", "1x2x1", {"active_balance": active})
    a, b = _task(1, run_ns=2 * 10**9), _task(2, affinity={0}, run_ns=2 * 10**9)
    eng.spawn(a, 0)
    eng.spawn(b, 0)
    eng.run()
    counters = eng.counters
    assert a.cpu == 1 and b.cpu == 0
    if active:
        assert counters["active_balance_kicks"] == counters["active_balance_pushed"] == 1
        assert counters["balance_moved"] == 0 and eng.now < 2_050_000_000
    else:
        assert "active_balance_pushed" not in counters and counters["balance_moved"] == 1
        assert eng.now > 2_090_000_000

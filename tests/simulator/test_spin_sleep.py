"""A lock waiter that sleeps by a timer once its yields are spent (`spin_sleep_us`,
`jvm=hotspot-spin`): HotSpot's Thread::SpinAcquire() spins, yields at every 4096th iteration
six times (`Yields > 5`), then park(1)s at each such point, a 1 ms sleep that SpinRelease()
never cuts short (it only clears the lock word).  Issue 24, docs/simulator.md (chatroom)."""

import pytest

import simulator
from simulator.api import make_policy, validate
from simulator.engine import Engine
from simulator.program import EXIT, LOCK, MARK, RUN, UNLOCK, Mutex
from simulator.topology import parse_topology
from simulator.wl_common import MS, US, Build

HOLD_NS = 5 * MS  # the holder keeps the lock this long


def _waiter_on_a_busy_lock(kernel, sleep_ns):
    """A holder takes the lock and runs HOLD_NS holding it; 100 us in, a waiter on the other CPU
    contends with HotSpot's counts (6 yields, each after 4096 loop iterations) and, once its
    yields are spent, sleeps ``sleep_ns`` (0: blocks on the futex).  Returns the engine, the
    holder's unlock time and the waiter's acquire time."""
    norm = validate({"workload": "chatroom", "kernel": kernel, "cpus": 2})
    eng = Engine(parse_topology(norm["topology"]), make_policy(norm, 1), norm["tunables"], 1,
                 10**6)
    b = Build(eng, norm["params"])
    lock = Mutex("room", handoff=False)
    busy_ns = round(4096 * eng.tun["loop_ns"])
    seen: dict[str, int] = {}

    def mark(name):
        return (MARK, lambda eng, task: seen.setdefault(name, eng.now))

    b.start(b.task("holder", [(LOCK, lock, "futex"), (RUN, HOLD_NS), mark("unlock"),
                              (UNLOCK, lock), (EXIT,)], affinity={0}), 0)
    b.start(b.task("waiter", [(RUN, 100 * US), mark("contend"),
                              (LOCK, lock, "yield", 6, busy_ns, sleep_ns), mark("acquire"),
                              (UNLOCK, lock), (EXIT,)], affinity={1}), 1)
    eng.run()
    return eng, seen, busy_ns


@pytest.mark.parametrize("kernel", ["2.6.22", "rsdl-0.31", "rsdl-0.33"])
def test_a_waiter_sleeps_after_six_yields_and_its_timer_ends_the_sleep(kernel):
    """Alone on its CPU the waiter spins: six rounds of 4096 loops and a sched_yield(), a
    seventh round of loops, then a 1 ms timed sleep, and so on (each sleep after 4096 more
    loops) until it finds the lock free.  The holder's unlock wakes nobody: every wakeup the run
    has is the waiter's timer, one per sleep, and the waiter takes the lock only at the end of
    the sleep it was in when the lock was freed (the first timer after the unlock)."""
    eng, seen, busy_ns = _waiter_on_a_busy_lock(kernel, MS)
    counters = eng._counters
    sleeps = counters["spin_sleeps"]
    assert eng.n_yields == 6
    assert counters["spin_blocks"] == 0 and sleeps >= 4
    assert eng.n_wakeups == sleeps  # nothing but the timers woke the waiter
    # 6 x (loops + yield), then per sleep loops + 1 ms: the sleeps fill the 4.9 ms the lock
    # stays busy once contended, and the last one ends after the unlock
    spun = 6 * (busy_ns + eng.yield_ns)
    waited = seen["unlock"] - seen["contend"]
    assert sleeps == -(-(waited - spun) // (busy_ns + MS)), (sleeps, waited)
    assert seen["unlock"] < seen["acquire"] < seen["unlock"] + MS + busy_ns
    assert seen["acquire"] - seen["contend"] >= spun + sleeps * (busy_ns + MS)


def test_without_the_sleep_the_unlock_wakes_the_blocked_waiter_at_once():
    """The same waiter with spin_sleep 0 (the model before it: J9-style, block on the futex once
    the yields are spent): it blocks once, the unlock wakes it, and it takes the lock within
    microseconds of the unlock, where the sleeper waits out its timer."""
    eng, seen, _ = _waiter_on_a_busy_lock("rsdl-0.31", 0)
    assert eng._counters["spin_blocks"] == 1 and "spin_sleeps" not in eng._counters
    assert eng.n_wakeups == 1
    assert seen["unlock"] <= seen["acquire"] < seen["unlock"] + 50 * US


def test_the_hotspot_preset_is_its_documented_counts():
    """``jvm=hotspot-spin`` is nothing but SpinAcquire()'s counts: 6 yields, each after 4096
    loop iterations, then a 1 ms sleep; it sleeps and never blocks on the futex."""
    spec = {"workload": "chatroom", "kernel": "rsdl-0.31", "cpus": 2,
            "params": {"rooms": 4, "clients": 20, "messages": 40, "lock": "yield",
                       "broadcast": 1, "sock_msgs": 4, "write_locked": 1, "cs_us": 10,
                       "think_us": 50}}
    preset = simulator.run({**spec, "params": {**spec["params"], "jvm": "hotspot-spin"}})
    spelled = simulator.run({**spec, "params": {**spec["params"], "spin_yields": 6,
                                                "spin_loops": 4096, "spin_sleep_us": 1000}})
    assert preset["metrics"] == spelled["metrics"] and preset["counters"] == spelled["counters"]
    assert preset["counters"]["spin_sleeps"] > 0 and preset["counters"]["spin_blocks"] == 0
    longer = simulator.run({**spec, "params": {**spec["params"], "jvm": "hotspot-spin",
                                               "spin_sleep_us": 4000}})
    assert longer["counters"]["spin_sleeps"] < preset["counters"]["spin_sleeps"]


@pytest.mark.parametrize("kernel", ["2.6.22", "rsdl-0.31", "rsdl-0.33", "2.6.23", "6.6-eevdf"])
def test_sleeping_spinners_fast_path_equals_reference_mode(kernel):
    """The spin-then-sleep strategy through the event loop's inlined paths and in reference
    mode: identical results."""
    spec = {"workload": "chatroom", "kernel": kernel, "cpus": 2, "seed": 3,
            "params": {"rooms": 2, "clients": 8, "messages": 20, "lock": "yield",
                       "jvm": "hotspot-spin", "broadcast": 1, "sock_msgs": 2,
                       "write_locked": 1, "cs_us": 20}}
    fast = simulator.run(spec)
    plain = simulator.run(spec, reference=True)
    fast.pop("wall_seconds")
    plain.pop("wall_seconds")
    assert fast == plain
    assert fast["counters"].get("spin_sleeps", 0) > 0

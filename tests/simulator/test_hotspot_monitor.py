"""HotSpot's Java monitor (`jvm=hotspot-monitor`): ObjectMonitor's adaptive spin, its cxq and
EntryList, the successor (`_succ`) that spares an exit its wakeup, and the responsible thread's
timed park (JDK 7u hotspot/src/share/vm/runtime/objectMonitor.cpp; docs/simulator.md, chatroom
and issue 24's "HotSpot's Java monitor").  The mechanism first, then what it does to RSDL."""

import pytest

import simulator
from simulator.api import make_policy, validate
from simulator.engine import Engine
from simulator.interp import SPIN_LIMIT, SPIN_PENALTY
from simulator.program import EXIT, LOCK, MARK, RUN, SLEEP, UNLOCK, Mutex
from simulator.topology import parse_topology
from simulator.wl_common import MS, US, Build


def _engine(cpus=2, kernel="2.6.22", reference=False):
    norm = validate({"workload": "chatroom", "kernel": kernel, "cpus": cpus})
    eng = Engine(parse_topology(norm["topology"]), make_policy(norm, 1), norm["tunables"], 1,
                 10**7, reference=reference)
    monitor = Mutex("room", handoff=False, monitor=True, loop_ns=eng.tun["loop_ns"])
    monitor.spin_duration = SPIN_LIMIT  # inflate() starts _SpinDuration at Knob_SpinLimit
    return eng, Build(eng, norm["params"]), monitor


def _mark(seen, name):
    return (MARK, lambda eng, task: seen.setdefault(name, (eng.now, eng.n_wakeups)))


def _one_waiter(hold_ns):
    """A holder takes the monitor on CPU 0 and keeps it ``hold_ns``; 100 us in, a waiter on CPU
    1 contends: it spins its budget out, finds both queues empty, becomes the responsible
    thread and parks timed.  Returns the engine, the monitor and the marks."""
    eng, b, monitor = _engine()
    seen: dict[str, tuple[int, int]] = {}
    b.start(b.task("holder", [(LOCK, monitor, "monitor"), (RUN, hold_ns), _mark(seen, "unlock"),
                              (UNLOCK, monitor), (EXIT,)], affinity={0}), 0)
    b.start(b.task("waiter", [(RUN, 100 * US), (LOCK, monitor, "monitor"),
                              _mark(seen, "acquire"), (UNLOCK, monitor), (EXIT,)],
                   affinity={1}), 1)
    eng.run()
    return eng, monitor, seen


@pytest.mark.parametrize(("hold_ms", "timed_parks"), [(500, 4), (1500, 5), (3000, 7)])
def test_the_responsible_waiters_park_timeout_grows_x8_up_to_a_second(hold_ms, timed_parks):
    """The waiter spins twice (enter()'s early TrySpin() and EnterI()'s) and parks; responsible,
    it parks 1, 8, 64, 512 ms, then 1000 ms each time (RecheckInterval x8, clamped at 1000):
    its parks begin about 0, 1, 9, 73, 585, 1585 and 2585 ms after it
    contends, so a monitor held 0.5 s sees 4 of them, 1.5 s 5 and 3 s 7 (two at the cap).  Each
    timer wakes it to a futile TryLock and spin (each spin that runs its full count costs the
    monitor Knob_Penalty); the holder's exit unparks it, ending the timed park it is in, and it
    owns the monitor within microseconds of the unlock, not at its timer."""
    eng, monitor, seen = _one_waiter(hold_ms * MS)
    assert eng._counters["monitor_timed_parks"] == timed_parks
    assert eng._counters["spin_blocks"] == 0  # it never parked untimed
    assert eng.n_wakeups == timed_parks  # every timer but the last, and the unpark
    assert seen["unlock"][0] <= seen["acquire"][0] < seen["unlock"][0] + 50 * US
    # enter()'s spin and EnterI()'s before it first parked, then one after each timer
    failed_spins = 2 + (timed_parks - 1)
    assert monitor.spin_duration == SPIN_LIMIT - SPIN_PENALTY * failed_spins
    assert monitor.owner is None and not monitor.cxq and not monitor.waiters
    assert monitor.succ is None and monitor.responsible is None


def test_a_short_hold_is_spun_on_and_never_parked():
    """A monitor held for less than the spin's budget (5011 iterations at loop_ns, 15 us on the
    default machine) is taken by the spinning waiter as soon as it is free: no park, no wakeup,
    and a successful spin cannot raise _SpinDuration past Knob_SpinLimit."""
    eng, monitor, seen = _one_waiter(100 * US + 5 * US)
    assert eng.n_wakeups == 0 and "monitor_timed_parks" not in eng._counters
    assert eng._counters["spin_blocks"] == 0
    assert seen["acquire"][0] == seen["unlock"][0]
    assert monitor.spin_duration == SPIN_LIMIT


def test_an_exit_unparks_exactly_one_heir_newest_first():
    """Three waiters on three CPUs contend while the holder keeps the monitor 5 ms; each queues
    itself on the cxq's front, the first (finding the queues empty) as the responsible thread.
    The holder's exit drains the cxq into the EntryList in its order (QMode 0: newest first)
    and unparks its head alone; each heir, owning the monitor 1 ms and exiting, unparks the
    next.  So they own it newest first, each one wakeup after the previous exit, none early."""
    eng, b, monitor = _engine(cpus=4)
    seen: dict[str, tuple[int, int]] = {}
    b.start(b.task("holder", [(LOCK, monitor, "monitor"), (RUN, 5 * MS), _mark(seen, "exit0"),
                              (UNLOCK, monitor), (EXIT,)], affinity={0}), 0)
    for i in (1, 2, 3):
        prog = [(RUN, 100 * i * US), (LOCK, monitor, "monitor"), _mark(seen, f"own{i}"),
                (RUN, MS), _mark(seen, f"exit{i}"), (UNLOCK, monitor), (EXIT,)]
        b.start(b.task(f"waiter{i}", prog, affinity={i}), i)
    eng.run()
    assert eng._counters["spin_blocks"] == 2  # waiters 2 and 3 park untimed
    assert eng._counters["monitor_timed_parks"] >= 1  # waiter 1, the responsible one
    order = sorted((1, 2, 3), key=lambda i: seen[f"own{i}"][0])
    assert order == [3, 2, 1]
    previous = "exit0"
    for i in order:
        exit_at, wakeups_at_exit = seen[previous]
        own_at, wakeups_at_own = seen[f"own{i}"]
        assert exit_at < own_at < exit_at + 50 * US
        assert wakeups_at_own == wakeups_at_exit + 1, (i, wakeups_at_exit, wakeups_at_own)
        previous = f"exit{i}"


def test_a_stranded_waiter_is_recovered_by_its_timed_park():
    """Stranding: the monitor is freed while its waiters stay parked (in HotSpot a 1-0 fast
    exit that raced an entering thread; here the holder drops the owner word without the exit
    protocol).  Nothing unparks anyone; the responsible waiter's timer does: it wakes at the end
    of its current timed park, finds the monitor free and takes it, and its own exit then
    unparks the other waiter, who had parked untimed."""
    eng, b, monitor = _engine(cpus=3)
    seen: dict[str, tuple[int, int]] = {}
    drop = (MARK, lambda eng, task: setattr(monitor, "owner", None))
    b.start(b.task("holder", [(LOCK, monitor, "monitor"), (RUN, 20 * MS), _mark(seen, "drop"),
                              drop, (EXIT,)], affinity={0}), 0)
    for i in (1, 2):
        prog = [(RUN, 100 * i * US), (LOCK, monitor, "monitor"), _mark(seen, f"own{i}"),
                (RUN, 100 * US), (UNLOCK, monitor), (EXIT,)]
        b.start(b.task(f"waiter{i}", prog, affinity={i}), i)
    eng.run()
    # waiter 1 is responsible: parks start about 0.1, 1.1, 9.1 ms (1, 8, 64 ms long), so the
    # park in progress at the 20 ms drop ends about 73 ms, 53 ms after the drop
    assert seen["own1"][0] - seen["drop"][0] > 50 * MS
    assert 72 * MS < seen["own1"][0] < 74 * MS
    assert seen["own1"][0] < seen["own2"][0] < seen["own1"][0] + 200 * US
    assert eng._counters["monitor_timed_parks"] == 3  # 1, 8 and 64 ms
    assert eng._counters["spin_blocks"] == 1


def _unparked_while_runnable(reference):
    """The holder exits at 2 ms while the responsible waiter (nice 19, CPU 1) is runnable
    behind a nice-0 hog (0.5-3.5 ms) after its 1 ms timed park, and takes the monitor again
    at once; the waiter runs at 3.5 ms, spins on the retaken monitor and fails."""
    eng, b, monitor = _engine(reference=reference)
    seen: dict[str, tuple[int, int]] = {}
    hold = [(LOCK, monitor, "monitor"), (RUN, 2 * MS), (UNLOCK, monitor),
            (LOCK, monitor, "monitor"), (RUN, 5 * MS), _mark(seen, "exit"), (UNLOCK, monitor),
            (EXIT,)]
    b.start(b.task("holder", hold, affinity={0}), 0)
    b.start(b.task("waiter", [(RUN, 100 * US), (LOCK, monitor, "monitor"),
                              _mark(seen, "acquire"), (UNLOCK, monitor), (EXIT,)],
                   nice=19, affinity={1}), 1)
    b.start(b.task("hog", [(SLEEP, 500 * US), (RUN, 3 * MS), (EXIT,)], affinity={1}), 1)
    eng.run()
    return eng, monitor, seen


def test_an_unpark_of_a_runnable_heir_makes_its_next_park_return_at_once():
    """exit() unparks the EntryList's head even when it is not parked (here runnable, not yet
    run since its timer): ParkEvent keeps the permit, so the heir's next park() returns at
    once into one more TrySpin() (Knob_SpinAfterFutile), and only the park after that blocks.
    Four failed full spins (enter()'s, EnterI()'s, after the timer, after the permit), each
    Knob_Penalty, one timed park and one untimed; the second exit unparks it and it owns the
    monitor within microseconds.  The fast path and reference mode give the same run."""
    eng, monitor, seen = _unparked_while_runnable(False)
    assert monitor.spin_duration == SPIN_LIMIT - 4 * SPIN_PENALTY  # 3 without the permit
    assert eng._counters["monitor_timed_parks"] == 1 and eng._counters["spin_blocks"] == 1
    assert seen["exit"][0] < seen["acquire"][0] < seen["exit"][0] + 50 * US
    plain, plain_monitor, plain_seen = _unparked_while_runnable(True)
    assert (plain_seen, plain._counters, plain_monitor.spin_duration) == (
        seen, eng._counters, monitor.spin_duration)


@pytest.mark.parametrize("kernel", ["2.6.22", "rsdl-0.31", "6.6-eevdf"])
def test_the_fast_path_equals_reference_mode_with_the_monitor(kernel):
    """The inlined lock and unlock fast paths and the plain handlers give the same run."""
    spec = {"workload": "chatroom", "kernel": kernel, "cpus": 2, "seed": 3,
            "params": {"rooms": 2, "clients": 6, "messages": 20, "lock": "yield",
                       "jvm": "hotspot-monitor", "broadcast": 1, "sock_msgs": 2,
                       "write_locked": 1}}
    fast = simulator.run(spec)
    plain = simulator.run(spec, reference=True)
    assert {k: v for k, v in fast.items() if k != "wall_seconds"} == {
        k: v for k, v in plain.items() if k != "wall_seconds"}
    assert fast["counters"]["spin_blocks"] > 0


VOLANO_MONITOR = {"rooms": 10, "clients": 20, "messages": 20, "think_us": 50, "cs_us": 10,
                  "lock": "yield", "jvm": "hotspot-monitor", "broadcast": 1, "sock_msgs": 4,
                  "write_locked": 1}


def test_the_monitor_makes_no_sched_yield_so_031_runs_as_033():
    """Nothing on the monitor's path calls sched_yield(): TrySpin_VaryDuration() spins on the
    owner word (SpinPause()) and EnterI() parks.  RSDL 0.31 and 0.33 differ only in what a
    yield does, so at VolanoMark's room size, with full sockets written under the monitor,
    they give the same run, bit for bit, at mainline's throughput (within 5 %)."""
    def run(kernel):
        return simulator.run({"workload": "chatroom", "kernel": kernel, "cpus": 2, "seed": 1,
                              "params": VOLANO_MONITOR,
                              "tunables": {"vmstat_interval_ms": 10}})
    mainline, soft, expire = run("2.6.22"), run("rsdl-0.31"), run("rsdl-0.33")
    assert soft["counters"]["yields"] == 0 and mainline["counters"]["yields"] == 0
    assert soft["counters"] == expire["counters"]
    assert soft["vmstat"]["rows"] == expire["vmstat"]["rows"]
    msgs = [x["metrics"]["throughput_msgs_per_s"][0] for x in (mainline, soft)]
    assert 0.95 * msgs[0] < msgs[1] < 1.05 * msgs[0], msgs

"""Trends the field notes describe, emerging from modelled mechanisms (never fitted numbers).

Small loop counts and iteration numbers keep this fast; each test names the mechanism it rests on.
"""

import pytest

import simulator

# The later threadtest variant of the reference data: sched_yield() inside the spin loop.
LOOPS = [1_000_000, 2_000_000, 4_000_000, 10_000_000, 20_000_000, 40_000_000]


def threadtest_ms(kernel, loops, iterations=20, cpus=2, **extra):
    params = {"iterations": iterations, "loops": loops, "yield_in_spin": True}
    params.update(extra.pop("params", {}))
    result = simulator.run({"workload": "threadtest", "kernel": kernel, "cpus": cpus,
                            "params": params, **extra})
    return result["metrics"]["time_ms"][0]


# what the 1M -> 2M step gives since the balancer reads cpu_load[type-1] (see the reason)
GAP_WIDENS_AT_2M = pytest.mark.xfail(strict=True, reason=(
    "since the balancer reads cpu_load[type-1] as the kernel's source_load()/target_load() "
    "do (docs/simulator.md, load balancing) the 2.6.24 / 2.6.22 ratio rises from 1M to 2M "
    "loops (3.63, 3.85, 2.31, 1.94, 1.33, 1.03 at 1M-40M, 20 iterations; before 5.23, 2.27, "
    "2.25, 1.93, 1.33, 1.08). 2.6.24 at 2M: with the faster history the idle CPU's first "
    "pull comes a tick sooner, so the balance deadline its busy interval then sets "
    "(idle_keeps_busy_next_balance) falls due while it is still busy and moves 64 ms on; "
    "the next parent waits queued through the child's whole yield spin (31.4 ms an "
    "iteration, thread 25.7; was 23.5). 2.6.22 at 2M got faster (8.2 ms, thread 15.1; was "
    "10.3; not analysed). A phase effect of the kept deadline, not resolved"))


def _ratios_2624_to_2622():
    ratios = []
    for loops in LOOPS:
        old, new = threadtest_ms("2.6.22", loops), threadtest_ms("2.6.24", loops)
        assert old < new, f"2.6.22 should beat 2.6.24 at {loops} loops ({old} vs {new})"
        ratios.append(new / old)
    return ratios


@GAP_WIDENS_AT_2M
def test_threadtest_2622_beats_2624_and_the_gap_closes_as_loops_grow():
    """2.6.24's child runs first and its parent, the waiting task, is the one balanced away;
    the idle CPU keeps the balance deadline it had while busy, so it pulls late, and the parent
    is cache-hot; meanwhile a finished thread's sched_yield() is a no-op and it spins on.
    2.6.22 keeps the parent running, a hard yield hands the CPU over, and the idle CPU pulls
    the cold child at its next tick.  The fixed cost per iteration matters less as the loops
    grow."""
    ratios = _ratios_2624_to_2622()
    assert ratios[0] > ratios[1] > ratios[-1], ratios
    assert ratios[0] > 1.3 and ratios[-1] < 1.15, ratios


@GAP_WIDENS_AT_2M
def test_the_gap_closes_at_every_step():
    """From 1M to 40M loops the 2.6.24 / 2.6.22 ratio falls at every step: 2.6.24's idle CPU
    keeps the balance deadline its busy interval set (idle_balance() resets it only once
    passed), so each fork waits a deadline that does not grow with the loop, while 2.6.22's
    idle CPU balances at its next tick."""
    ratios = _ratios_2624_to_2622()
    assert all(a > b for a, b in zip(ratios, ratios[1:], strict=False)), ratios


def test_original_variant_without_yield_keeps_the_order():
    """10k loops, no yield in the spin: the spin phase dominates and 2.6.24 loses to 2.6.22;
    2.6.25's idle-balance kick never makes it slower than 2.6.24."""
    times = {k: threadtest_ms(k, 10_000, params={"yield_in_spin": False})
             for k in ("2.6.22", "2.6.24", "2.6.25")}
    assert times["2.6.22"] < times["2.6.24"] and times["2.6.25"] <= times["2.6.24"], times


def test_2623_lands_between_2622_and_2624():
    """2.6.23 differs from 2.6.24 in what CFS as first merged did: finer granularities (2 ms,
    wakeup 1 ms), a new thread queued by activate_task() (neutral start beside its parent:
    no START_DEBIT, no child-runs-first, so the two threads overlap sooner) and no cache-hot
    veto; its yield requeues at its own key like 2.6.24's.  Strictly between 2.6.22 and
    2.6.24 where the fork path matters most (10k loops, busy spin)."""
    t22, t23, t24 = (threadtest_ms(k, 10_000, params={"yield_in_spin": False})
                     for k in ("2.6.22", "2.6.23", "2.6.24"))
    assert t22 < t23 < t24, (t22, t23, t24)


def test_2623_slower_than_2622_at_large_loop_counts():
    """2M-10M loops, yield in the spin: 2.6.23 shares 2.6.24's idle balance deadline kept from
    busy times (both CFS kernels wait for it after a fork), but its new thread starts neutral
    beside the parent, runs when the parent yields and has no cache-hot veto against its
    pull: between the two."""
    for loops in (2_000_000, 4_000_000, 10_000_000):
        t22, t23, t24 = (threadtest_ms(k, loops) for k in ("2.6.22", "2.6.23", "2.6.24"))
        assert t22 < t23 < t24, (loops, t22, t23, t24)


def test_2623_slower_than_2622_at_1m_loops():
    """1M loops, yield in the spin, 20 iterations: 120.0 / 120.4 / 435.1 ms (2.6.22 / 2.6.23 /
    2.6.24).  Holds since the balancer reads cpu_load[type-1] as source_load()/target_load()
    do (before: 84.0 / 84.0 / 439.1, equal): both kernels now pull the thread a tick later
    and run about 6 ms an iteration.  The 0.4 ms: 2.6.22's every other iteration is 0.05-0.1
    ms shorter (its idle CPU pulls the thread 2.9 ms in, just before the parent yields), while
    2.6.23, serial on one CPU until the idle CPU's kept deadline (64 ms), has had one early
    pull (0.5 ms) by then.  A 0.3 % margin: at 50 iterations (bench/simulator_versions.py)
    its three more deadline pulls make it 300 / 297 / 1075 ms, not holding
    (test_mechanisms.py's 1M case stays a strict xfail; docs/simulator.md, issue 24)."""
    t22, t23, t24 = (threadtest_ms(k, 1_000_000) for k in ("2.6.22", "2.6.23", "2.6.24"))
    assert t22 < t23 < t24, (t22, t23, t24)


def burn_idx(kernel, iterations, burn_us):
    result = simulator.run({"workload": "threadtest-burn", "kernel": kernel, "cpus": 2,
                            "params": {"iterations": iterations, "burn_us": burn_us}})
    return result["metrics"]["idx"][0]


def burn_idx_cpu_clock(kernel, iterations, burn_us):
    result = simulator.run({"workload": "threadtest-burn", "kernel": kernel, "cpus": 2,
                            "params": {"iterations": iterations, "burn_us": burn_us,
                                       "clock": "cpu"}})
    return result["metrics"]["idx"][0]


@pytest.mark.parametrize("kernel", ["2.6.22", "2.6.24"])
def test_burn_idx_near_two_for_long_bursts_and_falling_as_bursts_shorten(kernel):
    """Same total work (iterations x burn constant): the per-iteration balancing delay is paid
    more often as bursts shorten, until the two burns no longer overlap at all (idx ~1: each
    burn's wall time, which is what the harness sums as work, spans the whole iteration)."""
    points = [(1, 200_000), (10, 20_000), (100, 2_000), (1000, 200)]
    idx = [burn_idx_cpu_clock(kernel, it, burn) for it, burn in points]
    assert idx[0] > 1.75, idx
    assert all(a > b for a, b in zip(idx, idx[1:], strict=False)), idx
    assert idx[-1] < 1.1, idx


def test_wall_clock_burn_counts_time_spent_preempted():
    """The harness burns wall-clock time by default: on one CPU, EEVDF's short slices interleave
    the two threads and both burns end together after one burn length of wall time; burning
    CPU time (-c) needs both burns back to back."""
    def time_us(clock):
        return simulator.run({"workload": "threadtest-burn", "kernel": "6.6-eevdf", "cpus": 1,
                              "params": {"iterations": 3, "burn_us": 20_000, "clock": clock}}
                             )["metrics"]["time_us"][0]
    wall, cpu = time_us("wall"), time_us("cpu")
    assert wall < 0.7 * cpu, (wall, cpu)
    assert wall >= 3 * 20_000


def test_idle_cpu_wakeup_latency_slows_short_bursts():
    """Handing work to an idle CPU costs the machine's wakeup-to-run latency (IPI, idle exit,
    a halted vCPU woken by the host), paid once per iteration: short bursts suffer most."""
    def idx(idle_wake_ns, burn_us, iterations):
        return simulator.run({"workload": "threadtest-burn", "kernel": "6.6-eevdf", "cpus": 2,
                              "params": {"iterations": iterations, "burn_us": burn_us},
                              "tunables": {"idle_wake_ns": idle_wake_ns}})["metrics"]["idx"][0]
    short = idx(0, 200, 200) / idx(50_000, 200, 200)
    long = idx(0, 20_000, 2) / idx(50_000, 20_000, 2)
    assert short > 1.2 and short > long, (short, long)


def test_a_vcpu_woken_within_the_hosts_halt_polling_window_wakes_faster():
    """A guest's vCPU idle for less than halt_poll_ns is still polling on its host CPU: its wake
    costs idle_wake_polled_ns, not idle_wake_ns.  threadtest-burn's 50 us bursts idle each CPU
    for tens of us per iteration: of an iteration's two idle wakes (the child's CPU, then the
    joining parent's) every one is polled but the first, on a CPU that had not run before the
    run and so has idled longer than any window."""
    def metrics(halt_poll_ns, iterations=20):
        return simulator.run({"workload": "threadtest-burn", "kernel": "6.6-eevdf", "cpus": 2,
                              "params": {"iterations": iterations, "burn_us": 50},
                              "tunables": {"idle_wake_ns": 30_000, "idle_wake_polled_ns": 10_000,
                                           "halt_poll_ns": halt_poll_ns}})["metrics"]
    never, polled = metrics(0), metrics(200_000)
    assert never["time_us"][0] - polled["time_us"][0] == pytest.approx((2 * 20 - 1) * 20.0)
    assert polled["idx"][0] > never["idx"][0] + 0.2
    # a window shorter than every idle spell changes nothing
    assert metrics(1000) == never


def test_machine_calibration_sets_the_halt_polling_window_in_a_guest_only():
    calibration = {"loop_ns": 0.23, "loop_memory_ns": 0.23, "thread_create_join_us": 17,
                   "context_switch_us": 1, "wakeup_local_us": 2, "wakeup_remote_us": 19,
                   "ipi_us": 9, "idle_exit_us": 0, "vcpu_wake_us": 23, "virtualised": True}
    tun = simulator.validate({"workload": "threadtest", "kernel": "6.6-eevdf",
                              "machine": {"calibration": calibration}})["tunables"]
    # long: IPI + idle exit + the host's vCPU wake; polled: the ping-pong's cross-CPU excess
    assert tun["idle_wake_ns"] == 32_000 and tun["idle_wake_polled_ns"] == 17_000
    assert tun["halt_poll_ns"] == 200_000  # KVM_HALT_POLL_NS_DEFAULT
    bare = dict(calibration, virtualised=False, idle_exit_us=23, vcpu_wake_us=0)
    tun = simulator.validate({"workload": "threadtest", "kernel": "6.6-eevdf",
                              "machine": {"calibration": bare}})["tunables"]
    assert tun["halt_poll_ns"] == 0


def test_busy_cpus_slow_each_other_outside_smt():
    """busy_contention: two busy CPUs (no SMT) run slower than one, so threadtest's overlapped
    loops take longer; an idle partner costs nothing."""
    def ms(contention, cpus):
        return simulator.run({"workload": "threadtest", "kernel": "6.6-eevdf", "cpus": cpus,
                              "params": {"iterations": 5, "loops": 4_000_000},
                              "tunables": {"busy_contention": contention}})["metrics"]["time_ms"][0]
    assert ms(0.3, 2) > 1.2 * ms(0.0, 2)
    assert ms(0.3, 1) == ms(0.0, 1)


def test_machine_calibration_sets_machine_tunables():
    calibration = {"loop_ns": 1.5, "loop_memory_ns": 2.5, "thread_create_join_us": 40,
                   "context_switch_us": 3,
                   "wakeup_local_us": 2, "wakeup_remote_us": 30, "virtualised": True,
                   "vcpu_wake_us": 20, "contention": 0.1}
    norm = simulator.validate({"workload": "threadtest", "kernel": "6.6-eevdf",
                               "machine": {"calibration": calibration},
                               "tunables": {"context_switch_ns": 500}})
    tun = norm["tunables"]
    assert tun["loop_ns"] == 1.5 and tun["fork_ns"] == 40_000 and tun["wakeup_ns"] == 2000
    assert tun["idle_wake_ns"] == 28_000  # remote - local beats 1 + 2 + 20 us
    assert tun["busy_contention"] == 0.1
    assert tun["context_switch_ns"] == 500  # an explicit tunable wins over the machine
    assert norm["machine"]["virtualised"] is True


def chatroom(kernel, seed=1, jvm_lock=None, **tunables):
    """The seed thread's chat server on 2 CPUs: throughput, mean vmstat r and id, counters.
    `jvm_lock` replaces the default lock params (hand-off succession, spin_yields' default)."""
    params = {"rooms": 4, "clients": 20, "messages": 150, "think_us": 50, "cs_us": 10,
              "lock": "yield", **(jvm_lock or {"succession": "handoff"})}
    result = simulator.run({"workload": "chatroom", "kernel": kernel, "cpus": 2, "seed": seed,
                            "params": params,
                            "tunables": {"vmstat_interval_ms": 10, **tunables}})
    rows = result["vmstat"]["rows"]
    vmstat = {"r": sum(row[1] for row in rows) / len(rows),
              "id": sum(row[6] for row in rows) / len(rows)}
    return result["metrics"]["throughput_msgs_per_s"][0], vmstat, result["counters"]


@pytest.mark.xfail(strict=True, reason="since move_tasks() follows 2.6.22's source "
                   "(busiest_group_form=2.6.22: a task heavier than the load left to move is "
                   "skipped, where the model skipped one whose half weight exceeded it; "
                   "docs/simulator.md, 'The shared balancer, second round') a busy "
                   "CPU's pass pulls one task where it pulled two, and 0.31 no longer loses "
                   "enough: seeds 1 / 2 0.31 22.9k / 32.0k msgs/s against 0.33 32.6k / 32.6k "
                   "and 2.6.22 32.2k / 31.6k (17.8k / 17.8k with the half-weight rule); RSDL's "
                   "own move_tasks() was not read")
@pytest.mark.parametrize("seed", [1, 2])
def test_rsdl_031_soft_yield_collapses_a_yield_spinning_chat_server(seed):
    """JVM-style room locks spin on sched_yield() up to spin_yields times, then block.  RSDL
    0.31's yield is nearly a no-op: a spinner keeps the CPU from the preempted lock holder
    until it gives up and blocks, so throughput collapses with fewer runnable tasks; 0.33
    expires the yielder, the holder runs at once and mainline's throughput comes back.  A
    longer rr_interval makes the holder's preemption rarer and recovers part of it.  vmstat
    shows it: fewer runnable tasks (r) and more idle time (id), not only less throughput --
    under hand-off succession (unlock passes the lock to a blocked waiter), whose convoys give
    the idle time; the JVM's competitive succession does not (test_mechanisms.py).
    Seeds 1 / 2: 0.31 17.8k / 17.8k msgs/s, 0.33 32.2k / 32.3k, 2.6.22 32.4k / 31.5k,
    0.31 at rr_interval 16 32.0k / 32.0k; r 5.4 / 5.5 against 0.33's 7.4, id 10.5 / 10.7 %
    against 2.9 / 2.4 %.  Holds since the balancer reads cpu_load[type-1] (before: 0.31 lost
    22 % / 1 %, strict xfail since RSDL's major-epoch rule)."""
    soft, soft_vm, soft_c = chatroom("rsdl-0.31", seed)
    expire, expire_vm, expire_c = chatroom("rsdl-0.33", seed)
    mainline, _, _ = chatroom("2.6.22", seed)
    longer, _, _ = chatroom("rsdl-0.31", seed, rr_interval=16)
    assert soft < 0.6 * expire and soft < 0.6 * mainline, (soft, expire, mainline)
    assert expire > 0.9 * mainline, (expire, mainline)
    assert soft < longer < expire, (soft, longer, expire)
    assert soft_vm["r"] < expire_vm["r"] - 0.5, (soft_vm, expire_vm)
    assert soft_vm["id"] > 1.5 * expire_vm["id"], (soft_vm, expire_vm)
    assert soft_c["spin_blocks"] > 10 * max(1, expire_c["spin_blocks"])


def test_yield_semantics_cannot_matter_with_a_futex_lock():
    params = {"rooms": 1, "clients": 8, "messages": 200, "lock": "futex"}
    runs = [simulator.run({"workload": "chatroom", "kernel": k, "cpus": 2, "params": params})
            for k in ("rsdl-0.31", "rsdl-0.33")]
    assert runs[0]["metrics"] == runs[1]["metrics"]
    assert runs[0]["counters"]["yields"] == 0


def overcommit(kernel, patched):
    tunables = {"balance_wake": True, "wake_affine": False} if patched else {}
    result = simulator.run({"workload": "overcommit", "kernel": kernel, "cpus": 8,
                            "params": {"duration_ms": 300}, "tunables": tunables})
    return result["metrics"]["vm_wait_sum_ms"][0], result["metrics"]["throughput_ops_per_s"][0]


@pytest.mark.parametrize("kernel", ["2.6.24"])
def test_balance_on_wake_cuts_the_vm_wait_sum(kernel):
    """The thread's patch (SD_BALANCE_WAKE on, SD_WAKE_AFFINE off: with wake-affine on, the
    affine domain wins and the flag is never consulted) sends each waking vCPU to the least
    loaded CPU of the cache domain instead of its previous one, so the guest's tasks wait less
    behind the hogs.  (On 3.3 select_idle_sibling already finds the idle CPUs here.)"""
    wait_off, ops_off = overcommit(kernel, False)
    wait_on, ops_on = overcommit(kernel, True)
    assert wait_on < wait_off and ops_on > ops_off, (wait_off, wait_on, ops_off, ops_on)


def schedule_us(kernel, tasks):
    result = simulator.run({"workload": "runqueue-cost", "kernel": kernel, "cpus": 2,
                            "params": {"runqueue_length": tasks, "duration_ms": 200}})
    return result["metrics"]["schedule_us"][0]


def test_schedule_cost_grows_linearly_on_24_flat_on_o1_and_slowly_on_cfs():
    lengths = [2, 8, 32, 64]
    goodness = [schedule_us("2.4", n) for n in lengths]
    o1 = [schedule_us("2.6.22", n) for n in lengths]
    cfs = [schedule_us("2.6.24", n) for n in lengths]
    slopes = [(goodness[i + 1] - goodness[i]) / (lengths[i + 1] - lengths[i])
              for i in range(len(lengths) - 1)]
    assert min(slopes) > 0 and max(slopes) == pytest.approx(min(slopes), rel=0.1), slopes
    assert max(o1) == pytest.approx(min(o1))
    assert all(a < b for a, b in zip(cfs, cfs[1:], strict=False))
    assert cfs[-1] < 3 * cfs[0] and goodness[-1] > 3 * cfs[-1]


@pytest.mark.parametrize("kernel", ["2.6.22", "2.6.24", "3.3", "6.6-eevdf", "rsdl-0.33"])
def test_yield_loop_with_fewer_tasks_than_cpus_never_switches(kernel):
    def switches(tasks):
        result = simulator.run({"workload": "yield-loop", "kernel": kernel, "cpus": 4,
                                "params": {"tasks": tasks, "duration_ms": 100}})
        return result["metrics"]["context_switches"][0]

    assert switches(3) == 0
    # oversubscribed, every yield hands over sooner or later (2.6.24's once the yielder's
    # vruntime has passed the leftmost queued task's)
    assert switches(6) > 1000


def test_global_edf_meets_deadlines_that_round_robin_misses():
    spec = {"workload": "periodic", "cpus": 4, "params": {"duration_ms": 1000}}
    edf = simulator.run({**spec, "kernel": "6.6-eevdf"})["metrics"]
    o1 = simulator.run({**spec, "kernel": "2.6.22"})["metrics"]
    expected_jobs = sum(1000 // int(p.split(":")[0]) + 1
                        for p in simulator.validate({**spec, "kernel": "6.6-eevdf"})
                        ["params"]["tasks"].split(";"))
    assert edf["jobs"][0] == expected_jobs == o1["jobs"][0]
    assert edf["deadline_misses"][0] == 0 < o1["deadline_misses"][0]


def test_24_scan_cost_per_task_comes_from_the_modelled_goodness_scan():
    """2.4's per-task cost is goodness_insns instructions priced from the calibrated counting
    loop plus one cache-line miss: a slower machine (larger loop_ns) scans more slowly."""
    def slope(**tunables):
        cost = [simulator.run({"workload": "runqueue-cost", "kernel": "2.4", "cpus": 2,
                               "params": {"runqueue_length": n, "duration_ms": 200},
                               "tunables": tunables})["metrics"]["schedule_us"][0]
                for n in (8, 32)]
        return (cost[1] - cost[0]) / 24 * 1000  # ns per runnable task

    assert slope() == pytest.approx(40 * 3.0 / 4 + 60, rel=0.02)
    assert slope(loop_ns=6.0) == pytest.approx(40 * 6.0 / 4 + 60, rel=0.02)
    assert slope(goodness_insns=80, task_line_miss_ns=0) == pytest.approx(80 * 3.0 / 4, rel=0.02)

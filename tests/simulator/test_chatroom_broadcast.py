"""The chat server as VolanoMark's loopback test runs it (`broadcast=1`): four threads per
client, each message queued under the room's lock for the room's other writers (issue 24)."""

import pytest

import simulator

SMALL = {"rooms": 2, "clients": 4, "messages": 5, "lock": "futex"}
J9_ROOMS = {"rooms": 4, "clients": 20, "messages": 40, "think_us": 50, "cs_us": 10,
            "lock": "yield", "jvm": "j9", "broadcast": 1}


def chat(kernel, params, seed=1, **tunables):
    return simulator.run({"workload": "chatroom", "kernel": kernel, "cpus": 2, "seed": seed,
                          "params": params,
                          "tunables": {"vmstat_interval_ms": 10, **tunables}})


def mean_vmstat(result, column):
    rows = result["vmstat"]["rows"]
    return sum(row[column] for row in rows) / len(rows)


@pytest.mark.parametrize("pacing", ["none", "turns"])
def test_each_message_costs_a_delivery_to_every_other_client_of_its_room(pacing):
    """A room's CPU time is its messages' work: each of `clients` x `messages` is built by its
    sender, parsed and queued by its server receiver (`think_us` + `cs_us`), and each of its
    `clients` - 1 copies dequeued (`cs_us`) and written by a writer and read by a client
    (`deliver_us` each), plus the wakeups; the ring passes each message once."""
    clients, messages, think, cs, deliver = 4, 5, 20, 5, 5  # the workload's defaults
    copies = clients * (clients - 1) * messages
    work_us = clients * messages * (2 * think + cs) + copies * (cs + 2 * deliver)
    broadcast = chat("2.6.22", {**SMALL, "broadcast": 1, "pacing": pacing})
    ring = chat("2.6.22", SMALL)
    wakeups_us = broadcast["counters"]["wakeups"] * broadcast["tunables"]["wakeup_ns"] / 1000
    expected_us = 2 * work_us + wakeups_us  # two rooms; a wakeup costs its waker wakeup_ns
    ran_us = sum(broadcast["groups"][room]["run_ms"] * 1000 for room in ("room0", "room1"))
    assert abs(ran_us - expected_us) < 0.02 * expected_us, (ran_us, expected_us)
    for room in ("room0", "room1"):
        ring_us = ring["groups"][room]["run_ms"] * 1000
        assert ring_us < broadcast["groups"][room]["run_ms"] * 1000 / 3, (room, ring_us)


def test_users_taking_turns_keep_one_message_of_a_room_in_flight():
    """Taking turns, a room's next message is sent only once the previous one reached its
    sender's successor: far fewer tasks are runnable than when every sender sends at once, and
    the run takes longer."""
    at_once = chat("2.6.22", {**J9_ROOMS, "messages": 10})
    in_turn = chat("2.6.22", {**J9_ROOMS, "messages": 10, "pacing": "turns"})
    assert mean_vmstat(in_turn, 1) < mean_vmstat(at_once, 1) / 2
    assert (in_turn["metrics"]["throughput_msgs_per_s"][0]
            < at_once["metrics"]["throughput_msgs_per_s"][0])


@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.xfail(
    strict=True, reason="since move_tasks() follows 2.6.22's source (busiest_group_form=2.6.22: "
    "a task heavier than the load left to move is skipped, not one whose half weight exceeds "
    "it; docs/simulator.md, 'The shared balancer, second round') seed 2 keeps fewer "
    "tasks runnable on 2.6.22 than on 0.31 (vmstat r 94.1 against 98.0; the switch and "
    "preemption storms still hold); seed 1 holds again (94.1 against 92.3); not analysed"))])
def test_mainline_switch_storm_and_rsdl_fewer_switches_and_runnable(seed):
    """Each message wakes the room's 19 writers while its receiver holds the room's lock: on
    2.6.22 the woken writers preempt (O(1)'s sleep_avg bonus), a switch storm with many tasks
    runnable; RSDL's woken tasks only preempt a task at a worse level, so it switches far less
    and keeps fewer tasks runnable (the thread's direction for both)."""
    mainline = chat("2.6.22", J9_ROOMS, seed)
    soft = chat("rsdl-0.31", J9_ROOMS, seed)
    assert mainline["counters"]["context_switches"] > 10 * soft["counters"]["context_switches"]
    assert mainline["counters"]["preemptions"] > 100 * max(1, soft["counters"]["preemptions"])
    assert mean_vmstat(mainline, 1) > mean_vmstat(soft, 1), (mean_vmstat(mainline, 1),
                                                             mean_vmstat(soft, 1))


@pytest.mark.xfail(strict=True, reason="with the broadcast RSDL 0.31 keeps mainline's "
                   "throughput (0.99x / 1.06x on seeds 1 / 2; users taking turns 0.95x / "
                   "0.93x) and the CPUs stay busy (0.2-2.1 % idle on every kernel): another "
                   "room's threads are always runnable while a room's lock holder waits; what "
                   "emptied the thread's runqueues is not modelled (docs/simulator.md, issue "
                   "24: RSDL). Tried since: J9's wake-all monitor exit (succession=wakeall: "
                   "1.02x / 1.00x, turns 0.99x / 0.95x) and summed level quotas "
                   "(level_quota_sum: 0.63x / 0.66x, 0.3-0.9 % idle against mainline's 0.6 %; "
                   "turns 1.01x). Since the balancer reads cpu_load[type-1]: 1.00x / 0.98x, "
                   "turns 0.99x / 0.98x, 0.3-1.0 % idle")
@pytest.mark.parametrize("pacing", ["none", "turns"])
def test_rsdl_031_loses_half_with_more_idle_under_the_broadcast(pacing):
    mainline = chat("2.6.22", {**J9_ROOMS, "pacing": pacing})
    soft = chat("rsdl-0.31", {**J9_ROOMS, "pacing": pacing})
    ratio = (soft["metrics"]["throughput_msgs_per_s"][0]
             / mainline["metrics"]["throughput_msgs_per_s"][0])
    assert ratio <= 0.5 and mean_vmstat(soft, 6) > mean_vmstat(mainline, 6), ratio


# VolanoMark's own size (IBM LTC's workload description: 20 users a room, four threads a user,
# "most of the loopback tests we have run use 10 rooms and 100 messages"): 800 threads
VOLANO = {**J9_ROOMS, "rooms": 10, "messages": 100}


@pytest.mark.parametrize("seed", [1, 2])
def test_at_volanomarks_size_031_switches_far_less_and_keeps_fewer_runnable(seed):
    """At VolanoMark's size two parts of the thread's vmstat hold: 0.31 switches about a tenth as
    often as mainline (3,501 / 4,641 against 39,279 / 38,993) and keeps fewer threads runnable
    (r 184.7 / 175.7 against 253.4 / 255.5), though hundreds, not the thread's 1-12."""
    mainline = chat("2.6.22", VOLANO, seed)
    soft = chat("rsdl-0.31", VOLANO, seed)
    assert mainline["counters"]["context_switches"] > 5 * soft["counters"]["context_switches"]
    assert mean_vmstat(soft, 1) < 0.8 * mean_vmstat(mainline, 1), (mean_vmstat(soft, 1),
                                                                   mean_vmstat(mainline, 1))


def chat_on(cpus, kernel, params, seed=1, **tunables):
    return simulator.run({"workload": "chatroom", "kernel": kernel, "cpus": cpus, "seed": seed,
                          "params": params, "tunables": {"vmstat_interval_ms": 10, **tunables}})


def throughput(result):
    return result["metrics"]["throughput_msgs_per_s"][0]


@pytest.mark.parametrize("seed", [1, 2])
def test_with_a_200us_hold_at_volanomarks_size_031_loses_half_rr100_between_033_recovers(seed):
    """The room's lock held 200 us per copy (`cs_us`; no source gives the hold, so it is a
    point of bench/simulator_rsdl_chatroom.py --scale volano --hold-us's sweep, not a default),
    VolanoMark's 10 rooms x 20 users, 50 messages, 8 CPUs: issue 24's throughput shape holds
    (0.31 0.46x / 0.47x, rr_interval 100 0.63x / 0.62x, 0.33 1.02x / 1.02x), and 0.31 switches
    a sixth as often: its spinners' yields keep the CPU while the holder waits."""
    params = {**VOLANO, "messages": 50, "cs_us": 200}
    mainline, soft, longer, expire = (
        chat_on(8, kernel, params, seed, **tunables)
        for kernel, tunables in (("2.6.22", {}), ("rsdl-0.31", {}),
                                 ("rsdl-0.31", {"rr_interval": 100}), ("rsdl-0.33", {})))
    ratios = [throughput(x) / throughput(mainline) for x in (soft, longer, expire)]
    assert ratios[0] <= 0.5 and ratios[0] < ratios[1] < 0.9 and ratios[2] >= 0.9, ratios
    assert mainline["counters"]["context_switches"] > 3 * soft["counters"]["context_switches"]


@pytest.mark.parametrize("seed", [1, 2])
def test_a_handoff_lock_convoys_031s_writers_on_the_room_lock(seed):
    """Under a FIFO hand-off of the room's lock (`succession=handoff`, not J9's documented
    exit) each unlock makes a blocked writer the owner while it waits to run, and on 0.31 that
    owner waits behind spinners whose yields keep the CPU: VolanoMark's size, 50 messages, 8
    CPUs, 0.31 keeps about a tenth of mainline's runnable threads (r 33.3 / 34.8 against 258.7 /
    260.2; ~180 writers wait on the room locks, ~2 writers and ~2 readers a room are runnable),
    the thread's direction, but collapses (0.03x), switches more, not less, and idles only once
    the last rooms straggle (the CPUs spin 90 % of the time while every room runs); 0.33, whose
    yield lets the owner run, keeps mainline's throughput."""
    params = {**VOLANO, "messages": 50, "succession": "handoff"}
    mainline, soft, expire = (chat_on(8, kernel, params, seed)
                              for kernel in ("2.6.22", "rsdl-0.31", "rsdl-0.33"))
    assert mean_vmstat(soft, 1) < mean_vmstat(mainline, 1) / 5
    assert throughput(soft) < 0.1 * throughput(mainline)
    assert throughput(expire) >= 0.9 * throughput(mainline)
    assert soft["counters"]["context_switches"] > mainline["counters"]["context_switches"]


@pytest.mark.xfail(strict=True, reason="at VolanoMark's size (10 rooms x 20 users, 800 "
                   "threads, J9's counts) no idle appears and r stays in the hundreds: with the "
                   "model's 10 us hold on 2 CPUs 0.31 keeps 0.88x of mainline's throughput, r "
                   "184.7 against 253.4, 0.1 % idle against 0.2 %; with a 200 us hold on 8 CPUs "
                   "0.46x, r 157.1 against 195.9, 0.4 % idle against 1.7 %. Every message wakes "
                   "its room's 19 writers and then 19 readers, every sender sends at once so "
                   "each writer has copies queued, and a writer waiting for the lock spins "
                   "(runnable) before it blocks: hundreds of threads stay runnable on every "
                   "kernel; with full sockets written under the room's monitor 0.31 "
                   "collapses and r falls to 34.7 against 183.0, but its spinners keep the "
                   "CPUs busy (0.0 % idle); with HotSpot's spin/yield/sleep lock "
                   "(jvm=hotspot-spin, a 1 ms timed sleep after 6 yields) in that case, 50 "
                   "messages: 0.31 0.20x, but r 244.1 against 173.5 and 0.1 % idle against "
                   "2.0 %, 2.1M switches against 259k: the sleepers' timers wake hundreds of "
                   "writers each millisecond to poll the lock; with HotSpot's Java monitor "
                   "(jvm=hotspot-monitor: adaptive spin without sched_yield(), parks, one "
                   "heir an exit, the responsible waiter's 1-1000 ms timed park) in that case, "
                   "100 messages: 0.31 1.04x, r 22.8 against 57.6, 0.2 % idle against 4.8 %, "
                   "311k switches against 293k, and 0.33 gives the same run bit for bit: "
                   "nothing on the monitor's path yields, so RSDL's yield semantics never act "
                   "(docs/simulator.md, issue 24: RSDL 0.31 at VolanoMark's size, HotSpot's "
                   "Java monitor)")
@pytest.mark.parametrize(("cpus", "messages", "hold_us", "sockets"),
                         [(2, 100, 10, {}), (8, 50, 200, {}),
                          (2, 100, 10, {"sock_msgs": 4, "write_locked": 1}),
                          (2, 50, 10, {"sock_msgs": 4, "write_locked": 1,
                                       "jvm": "hotspot-spin"}),
                          (2, 100, 10, {"sock_msgs": 4, "write_locked": 1,
                                        "jvm": "hotspot-monitor"})])
def test_rsdl_031_vmstat_signature_at_volanomarks_size(cpus, messages, hold_us, sockets):
    """The third case: loopback sockets of 4 messages, each writer's write made holding the
    room's monitor (both swept, no source): 0.31 0.03x, r 34.7 against 183.0, 0.0 % idle
    against 0.1 % (test_a_full_socket_under_the_monitor_collapses_031_without_idle).  The
    fourth: the same with HotSpot's Thread::SpinAcquire() strategy (`jvm=hotspot-spin`); the
    fifth with HotSpot's Java monitor (`jvm=hotspot-monitor`)."""
    params = {**VOLANO, "messages": messages, "cs_us": hold_us, **sockets}
    mainline = chat_on(cpus, "2.6.22", params)
    soft = chat_on(cpus, "rsdl-0.31", params)
    assert throughput(soft) <= 0.5 * throughput(mainline)
    assert mean_vmstat(soft, 1) < mean_vmstat(mainline, 1) / 10
    assert mean_vmstat(soft, 6) > mean_vmstat(mainline, 6) + 20


@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.xfail(
    strict=True, reason="since the balancer reads cpu_load[type-1] (docs/simulator.md, load "
    "balancing) seed 2's 0.31 with summed level quotas keeps 66.0 tasks runnable against "
    "mainline's 93.9, not below two thirds of it (62.6); with move_tasks() as 2.6.22's source "
    "has it 64.5 against 94.1 (62.7); not analysed"))])
def test_summed_level_quotas_let_woken_writers_preempt_031s_lock_holder(seed):
    """With a level's quota the sum of its tasks' (``level_quota_sum``, the RSDL readme) levels
    seldom finish, so each task descends by its own quota: a receiver, which runs for every
    message, sinks below the writers it wakes while holding the room's lock, and they preempt
    it there (RSDL preempts from a better level); on 0.31 each then spins with yields that keep
    the CPU and blocks. 0.31 loses a third (0.63x / 0.66x) with about half mainline's runnable
    tasks; 0.33, whose yield expires the spinner, keeps mainline's throughput."""
    summed = {"level_quota_sum": 1}
    mainline = chat("2.6.22", J9_ROOMS, seed)
    soft = chat("rsdl-0.31", J9_ROOMS, seed, **summed)
    expire = chat("rsdl-0.33", J9_ROOMS, seed, **summed)
    shared = chat("rsdl-0.31", J9_ROOMS, seed)
    msgs = [x["metrics"]["throughput_msgs_per_s"][0] for x in (mainline, soft, expire)]
    assert msgs[1] < 0.75 * msgs[0] and msgs[2] >= 0.9 * msgs[0], msgs
    assert soft["counters"]["preemptions"] > 100 * shared["counters"]["preemptions"]
    assert mean_vmstat(soft, 1) < mean_vmstat(mainline, 1) / 1.5


SOCKETS = {**J9_ROOMS, "messages": 20}


@pytest.mark.parametrize("kernel", ["2.6.22", "rsdl-0.31"])
def test_a_socket_too_large_to_fill_runs_as_an_unbounded_one(kernel):
    """`sock_msgs` 0 (unbounded, the default) and a buffer no run can fill give the same run,
    bit for bit: a send that finds a free slot goes on at once."""
    unbounded = chat(kernel, SOCKETS)
    huge = chat(kernel, {**SOCKETS, "sock_msgs": 10**6})
    assert huge["counters"] == unbounded["counters"]
    assert throughput(huge) == throughput(unbounded)
    assert huge["vmstat"]["rows"] == unbounded["vmstat"]["rows"]


def test_a_full_socket_puts_its_sender_to_sleep():
    """With loopback sockets of 4 messages a sender (client sender, server writer) that finds
    its socket full sleeps until the reader frees a slot, which wakes it: about three times
    mainline's wakeups (22,996 against 8,099), every message still delivered."""
    unbounded = chat("2.6.22", SOCKETS)
    bounded = chat("2.6.22", {**SOCKETS, "sock_msgs": 4})
    assert bounded["counters"]["wakeups"] > 2 * unbounded["counters"]["wakeups"]
    assert 0.8 * throughput(unbounded) < throughput(bounded) <= throughput(unbounded)


def test_a_full_socket_under_the_monitor_collapses_031_without_idle():
    """Sockets of 4 messages and each writer's write made holding the room's monitor (both
    swept; no source says either): a writer whose socket is full sleeps holding the monitor,
    its reader waits behind spinners whose 0.31 yields keep the CPU, and 0.31 collapses
    (88 against 3,107 msgs/s) with a sixth of mainline's runnable threads (r 15.8 against
    93.0), the thread's direction, but the CPUs spin instead of idling (0.0 % against 1.5 %),
    rr_interval 100 recovers nothing (no spin round spends a quota), and 0.33 keeps 0.89x."""
    params = {**SOCKETS, "sock_msgs": 4, "write_locked": 1}
    mainline, soft, longer, expire = (
        chat(kernel, params, **tunables)
        for kernel, tunables in (("2.6.22", {}), ("rsdl-0.31", {}),
                                 ("rsdl-0.31", {"rr_interval": 100}), ("rsdl-0.33", {})))
    assert throughput(soft) < 0.1 * throughput(mainline)
    assert throughput(longer) < 1.1 * throughput(soft)
    assert throughput(expire) > 0.8 * throughput(mainline)
    assert mean_vmstat(soft, 1) < mean_vmstat(mainline, 1) / 3
    assert mean_vmstat(soft, 6) <= mean_vmstat(mainline, 6)


def test_a_rooms_programs_share_their_step_objects(monkeypatch):
    """A room's receivers each list a wakeup of every other writer, and a reader taking turns
    a read of every other user's message: clients^2 steps a room. They are references to one
    step object per writer and per reader (2.2 GB -> 345 MB of peak RSS for 3,000 clients
    taking turns), never a tuple each."""
    from simulator import wl_common

    programs: dict[str, list] = {}
    task = wl_common.Build.task

    def keep(self, name, prog, *args, **kwargs):
        programs[name] = prog
        return task(self, name, prog, *args, **kwargs)

    monkeypatch.setattr(wl_common.Build, "task", keep)
    chat("2.6.22", {"rooms": 1, "clients": 4, "messages": 2, "broadcast": 1, "pacing": "turns"})
    receivers = [programs[f"r0c{i}.recv"] for i in range(4)]
    wakes = [{id(step) for step in prog if step[0] == receivers[0][-4][0]} for prog in receivers]
    assert all(len(found) == 3 for found in wakes)  # the three other writers
    assert len(set().union(*wakes)) == 4  # one object per writer, shared by the receivers
    reader = programs["r0c1.read"]
    assert len({id(step) for step in reader[:6] if step in reader[:2]}) == 2


@pytest.mark.parametrize("seed", [1, 2])
def test_waiters_that_sleep_50ms_empty_031s_runqueues_and_idle_its_cpus(seed):
    """A wait that its timer ends, not a runnable thread: HotSpot's spin/yield/sleep lock
    (`jvm=hotspot-spin`) with its sleep swept to 50 ms (`spin_sleep_us`; HotSpot's own is 1 ms,
    and nothing sources 50), sockets of 4 messages written holding the room's monitor (swept,
    no source), VolanoMark's size, 50 messages, 2 CPUs.  0.31's yields keep the CPU, so its
    waiters spend their 6 yields at once and sleep (25k sleeps against mainline's 6k); a
    monitor freed meanwhile stays free until a sleeper's timer fires, and a CPU whose threads
    all sleep on monitors or wait for messages idles: 0.31 keeps a tenth of mainline's
    runnable threads (r 10.0 against 108.9 on seed 1), idles its CPUs (42.6 % against
    15.3 %) and switches less; 0.33, whose yield lets the holder run,
    keeps mainline's throughput.  Not the thread's whole signature: 0.31 loses about a third
    (0.63x), not half, and rr_interval 100 is not between (docs/simulator.md, issue 24)."""
    params = {**VOLANO, "messages": 50, "sock_msgs": 4, "write_locked": 1,
              "jvm": "hotspot-spin", "spin_sleep_us": 50_000}
    mainline, soft, expire = (chat(kernel, params, seed)
                              for kernel in ("2.6.22", "rsdl-0.31", "rsdl-0.33"))
    assert mean_vmstat(soft, 1) < mean_vmstat(mainline, 1) / 5
    assert mean_vmstat(soft, 6) > mean_vmstat(mainline, 6) + 15
    assert soft["counters"]["context_switches"] < mainline["counters"]["context_switches"]
    assert throughput(soft) < 0.8 * throughput(mainline)
    assert throughput(expire) >= 0.9 * throughput(mainline)

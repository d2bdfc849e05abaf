"""Issue 24's RSDL direction: RSDL 0.31 against 2.6.22 on a Java chat server whose monitors
spin on sched_yield() (IBM J9's documented counts, `jvm=j9`, the JVM's competitive succession).

Run from the repository root:  .venv/bin/python bench/simulator_rsdl_chatroom.py [--quick]

The target (the thread): RSDL 0.31 at most 0.5x of 2.6.22's throughput, rr_interval 100
between, 0.33 at least 0.9x, with fewer runnable tasks and more idle time than mainline
(vmstat: RSDL r 1-12 against 380-470, 53 % idle against 3-8 %) and fewer context switches.

Each RSDL profile runs twice: with one rr_interval per level shared by its tasks (the model's
default) and with a level's quota the sum of its tasks' quotas (`level_quota_sum`, "summed").
Prints, per chat-server model and seed: each kernel's throughput, its ratio to 2.6.22's, the
mean vmstat r and id (10 ms samples), context switches, preemptions, sched_yield() calls and
spinners that gave up and blocked.  Two models: `ring`, the token ring (each message passed to
one neighbour under the room's lock), and `broadcast`, VolanoMark's loopback structure (four
threads per client, each message queued for the room's other 19 writers; `broadcast=1`),
with every sender sending at once or with a room's users taking turns (`pacing=turns`); each
under the JVM's competitive succession and under J9's wake-all monitor exit (`succession=wakeall`).
Every figure is a simulated one, so the machine's load cannot change it; the load average is
printed beside the figures all the same, as every bench script does.

`--handoff` prints instead the hand-off ring of tests/simulator (unlock passes the lock to a
blocked waiter, 3000 yields before blocking, `spin_yields` as the tests sweep it) at 150
messages and at 7500: at 150 a client runs 9 ms, a tenth of a 100 ms quota, so rr_interval 100
is only exercised in the long run (about two minutes of CPU for both seeds).

`--scale volano` runs VolanoMark's own documented size instead (IBM LTC, "VolanoMark 2.1.2 -
Workload Description": 20 users a room, four threads a user, "most of the loopback tests we
have run use 10 rooms and 100 messages", so 800 threads): the broadcast with every sender at
once and with users taking turns, and the ring, at 100 messages and at 50 (the ratios at both
show whether the shorter run stands for the longer), and the broadcast under a FIFO hand-off
of the room lock (`succession=handoff`: not J9's documented exit, run to show what a convoy on
the monitor does), on 2 CPUs (the model's default; the thread's CPU count is not in our notes)
and 8 (the IBM study's "8P test"). For seed 1 at 100 messages it then prints, on each CPU
count, a census: the mean number of each role's threads (sender, server receiver, writer,
client reader) that are runnable, blocked on the room lock, blocked waiting for a message, or
exited, and of idle CPUs, weighted by time (kept from the engine's wakeup/switch/exit hooks,
where every change of those states happens). `--hold-us 10,50,200,1000` sweeps instead the
time the room's lock is held per copy (`cs_us`, which no source gives) on the broadcast.
`--jvm hotspot-spin` runs every model with HotSpot's Thread::SpinAcquire() strategy instead of
J9's counts (6 yields, each after 4096 spin iterations, then 4096 more and a timed sleep, again
until the lock is free: a wait its timer ends, not an unlock), `--spin-sleep-us` sets that
sleep (0: HotSpot's 1 ms); the rows then print the sleeps taken.  `--jvm hotspot-monitor`
runs HotSpot's Java monitor instead (ObjectMonitor: an adaptive spin without sched_yield(), then
a park; the exit wakes one queued waiter unless a successor is there; one waiter a monitor
parks timed, 1 ms and then x8 up to 1 s); its `sleeps` are those timed parks.
"""

import argparse
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import simulator  # noqa: E402
from simulator.api import run_once, validate  # noqa: E402
from simulator.program import BLOCKED, LOCK  # noqa: E402
from simulator.topology import parse_topology  # noqa: E402

JVM = {"lock": "yield", "jvm": "j9", "rooms": 4, "clients": 20, "think_us": 50, "cs_us": 10}
MODELS = {
    "ring": {**JVM, "messages": 150},
    "broadcast": {**JVM, "messages": 40, "broadcast": 1},
    "broadcast, users taking turns": {**JVM, "messages": 40, "broadcast": 1, "pacing": "turns"},
}
# J9's own monitor exit wakes every blocked waiter (`succession=wakeall`, Apache Harmony's
# hythread monitor_exit()), where the JVM's competitive succession above wakes the first
MODELS.update(
    {
        f"{model}, J9's wake-all exit": {**params, "succession": "wakeall"}
        for model, params in list(MODELS.items())
    }
)
SUMMED = {"level_quota_sum": 1}  # a level's quota the sum of its tasks' (the RSDL readme)
KERNELS = (
    ("2.6.22", {}),
    ("rsdl-0.31", {}),
    ("rsdl-0.31", {"rr_interval": 100}),
    ("rsdl-0.33", {}),
    ("rsdl-0.31", SUMMED),
    ("rsdl-0.31", {**SUMMED, "rr_interval": 100}),
    ("rsdl-0.33", SUMMED),
)


def label(kernel, tunables):
    return (
        kernel
        + (f" rr{tunables['rr_interval']}" if "rr_interval" in tunables else "")
        + (" summed" if tunables.get("level_quota_sum") else "")
    )


# set by --jvm: the lock strategy every run takes instead of its model's (J9's counts)
STRATEGY = {}


def run(kernel, seed, params, tunables, cpus=2):
    result = simulator.run(
        {
            "workload": "chatroom",
            "kernel": kernel,
            "cpus": cpus,
            "seed": seed,
            "params": {**params, **STRATEGY},
            "tunables": {"vmstat_interval_ms": 10, **tunables},
        }
    )
    rows = result["vmstat"]["rows"]
    msgs = result["metrics"]["throughput_msgs_per_s"][0]
    return {
        "msgs": msgs,
        "r": sum(row[1] for row in rows) / len(rows),
        "id": sum(row[6] for row in rows) / len(rows),
        "spin": spin_share(result, msgs, cpus),
        **result["counters"],
    }


def spin_share(result, msgs, cpus):
    """Percent of the CPUs' time spent in lock-spin rounds: each sched_yield() a spinner makes
    ends a round of busy-wait loops (J9's 32 x 256, HotSpot's 4096, or `spin_loops`) and costs
    the syscall; with HotSpot's strategy each timed sleep ends a round of busy-wait loops too."""
    prm, tun = result["params"], result["tunables"]
    loops = {"j9": 32 * 256, "hotspot-spin": 4096}.get(prm["jvm"], prm["spin_loops"])
    round_ns = loops * tun["loop_ns"] + tun["yield_syscall_ns"]
    wall_ns = prm["rooms"] * prm["clients"] * prm["messages"] / msgs * 1e9
    counters = result["counters"]
    spun_ns = counters["yields"] * round_ns + counters.get("spin_sleeps", 0) * loops * tun[
        "loop_ns"]
    return 100 * spun_ns / (wall_ns * cpus)


def report(model, params, seeds):
    for seed in seeds:
        print_rows(
            model, seed, [(kernel, tun, run(kernel, seed, params, tun)) for kernel, tun in KERNELS]
        )


HANDOFF = {
    "rooms": 4,
    "clients": 20,
    "think_us": 50,
    "cs_us": 10,
    "lock": "yield",
    "spin_yields": 3000,
    "succession": "handoff",
}
HANDOFF_KERNELS = (
    ("2.6.22", {}),
    ("rsdl-0.31", {}),
    ("rsdl-0.31", {"rr_interval": 100}),
    ("rsdl-0.33", {}),
)


def report_handoff(seeds):
    for messages in (150, 7500):
        model = f"ring, hand-off succession, 3000 yields, {messages} messages"
        for seed in seeds:
            rows = [
                (kernel, tun, run(kernel, seed, {**HANDOFF, "messages": messages}, tun))
                for kernel, tun in HANDOFF_KERNELS
            ]
            print_rows(model, seed, rows)


# IBM LTC's VolanoMark workload description: 10 rooms of 20 users, 100 messages each
VOLANO = {**JVM, "rooms": 10, "clients": 20, "messages": 100}
VOLANO_MODELS = {
    "broadcast": {**VOLANO, "broadcast": 1},
    "broadcast, users taking turns": {**VOLANO, "broadcast": 1, "pacing": "turns"},
    "ring": VOLANO,
    # not J9's documented exit (competitive, or wake-all): a FIFO hand-off, to show the convoy
    "broadcast, hand-off succession": {**VOLANO, "broadcast": 1, "succession": "handoff"},
}


def print_volano_point(model, seeds, params, cpus, tunables=None):
    """One point at VolanoMark's size: every hand-off kernel (with ``tunables`` on top of its
    own) for each seed."""
    for seed in seeds:
        rows = [
            (kernel, tun, run(kernel, seed, params, {**tun, **(tunables or {})}, cpus))
            for kernel, tun in HANDOFF_KERNELS
        ]
        print_rows(f"VolanoMark's size, {model}, {cpus} CPUs", seed, rows)


def report_volano(seeds, cpu_counts):
    for cpus in cpu_counts:
        for model, params in VOLANO_MODELS.items():
            for messages in (100, 50):
                print_volano_point(f"{model}, {messages} messages", seeds,
                                   {**params, "messages": messages}, cpus)
    for model in ("broadcast", "broadcast, users taking turns", "broadcast, hand-off succession"):
        for cpus in cpu_counts:
            print_census(f"{model}, 100 messages", VOLANO_MODELS[model], cpus)


def report_hold_sweep(seeds, cpu_counts, holds_us):
    """The broadcast at VolanoMark's size with the room's lock held `cs_us` per message copy
    (no source gives the hold time: swept), then the census at each hold for seed 1."""
    for cpus in cpu_counts:
        for hold in holds_us:
            params = {**VOLANO_MODELS["broadcast"], "cs_us": hold}
            print_volano_point(f"broadcast, lock held {hold} us", seeds, params, cpus)
            print_census(f"broadcast, lock held {hold} us", params, cpus)


def report_socket_sweep(seeds, cpu_counts, slots, loops_ns=None):
    """The broadcast at VolanoMark's size with bounded loopback sockets (`sock_msgs` messages
    each; a send that finds its socket full sleeps, as tcp_sendmsg() does at wait_for_sndbuf;
    no source gives the buffer in messages: swept), the writer's socket write outside the room's
    monitor and inside it (`write_locked`, no source either), then the census for seed 1.
    With `loops_ns`, instead: the write inside the monitor at each J9 spin-loop speed
    (`loop_ns`, the machine's, unknown for the thread's: swept), without the census."""
    if loops_ns:
        for cpus in cpu_counts:
            for n in slots:
                params = {**VOLANO_MODELS["broadcast"], "sock_msgs": n, "write_locked": 1}
                for loop in loops_ns:
                    model = f"broadcast, sockets of {n} messages, write inside, loop_ns {loop}"
                    print_volano_point(model, seeds, params, cpus, {"loop_ns": loop})
        return
    for cpus in cpu_counts:
        for locked in (0, 1):
            for n in slots:
                params = {**VOLANO_MODELS["broadcast"], "sock_msgs": n, "write_locked": locked}
                where = "inside" if locked else "outside"
                model = f"broadcast, sockets of {n} messages, write {where} the monitor"
                print_volano_point(model, seeds, params, cpus)
                print_census(model, params, cpus)


def print_census(model, params, cpus):
    print(
        f"\nCensus, VolanoMark's size, {model}, {cpus} CPUs, seed 1: mean threads runnable "
        "per role (sender, server receiver, writer, client reader; a spinning writer is "
        "runnable), blocked on the room lock, waiting for a message, exited; idle CPUs in %"
    )
    print(f"{'kernel':<22}" + "".join(f"{column:>8}" for column in CENSUS_COLUMNS))
    for kernel, tun in HANDOFF_KERNELS:
        means = census(kernel, params, tun, cpus)
        cells = [
            sum(v for k, v in means.items() if k.endswith(state))
            if role == "all"
            else means.get(f"{role} {state}", 0.0)
            for role, state in CENSUS_COLUMNS.values()
        ]
        print(f"{label(kernel, tun):<22}" + "".join(f"{cell:>8.1f}" for cell in cells))


CENSUS_COLUMNS = {
    "send": ("send", "runnable"),
    "recv": ("recv", "runnable"),
    "write": ("write", "runnable"),
    "read": ("read", "runnable"),
    "lock": ("all", "blocked on the lock"),
    "msgwait": ("all", "waiting for a message"),
    "exited": ("all", "exited"),
    "idle %": ("all", "idle CPUs"),
}


class Census:
    """Attached in place of the engine's ftrace writer (the engine calls it where a task wakes,
    switches or exits): the time-weighted count of the chat server's threads by role and state
    and of idle CPUs. A thread's state changes only at those hooks (it blocks at a switch)."""

    def __init__(self):
        self.eng = None
        self.state = {}
        self.counts = {}
        self.weighted = {}
        self.idle = set()
        self.last = 0

    def attach(self, eng):
        self.eng = eng
        self.idle = {cpu.id for cpu in eng.cpus}

    def flush(self):
        elapsed = self.eng.now - self.last
        self.last = self.eng.now
        for key, count in [*self.counts.items(), ("all idle CPUs", len(self.idle))]:
            self.weighted[key] = self.weighted.get(key, 0) + count * elapsed

    def set(self, task, state):
        self.flush()
        key = f"{task.name.rsplit('.', 1)[-1]} {state}"
        old = self.state.get(task.tid)
        if old is not None:
            self.counts[old] -= 1
        self.state[task.tid] = key
        self.counts[key] = self.counts.get(key, 0) + 1

    def switch(self, cpu, prev, nxt):
        if prev is not None and prev.state == BLOCKED:  # pc is past the op it blocked in
            lock = prev.prog[prev.pc - 1][0] == LOCK
            self.set(prev, "blocked on the lock" if lock else "waiting for a message")
        self.flush()
        (self.idle.add if nxt is None else self.idle.discard)(cpu.id)

    def wakeup(self, task, waker_cpu, new=False):
        self.set(task, "runnable")

    def exit(self, cpu, task):
        self.set(task, "exited")

    def fork(self, cpu, parent, child):
        pass

    def migrate(self, task, orig, dest, on_cpu):
        pass


def census(kernel, params, tunables, cpus=2, seed=1):
    norm = validate(
        {
            "workload": "chatroom",
            "kernel": kernel,
            "cpus": cpus,
            "seed": seed,
            "params": {**params, **STRATEGY},
            "tunables": tunables,
        }
    )
    counter = Census()
    run_once(norm, parse_topology(norm["topology"]), 0, None, ftrace=counter)
    counter.flush()
    means = {key: total / counter.last for key, total in sorted(counter.weighted.items())}
    means["all idle CPUs"] *= 100 / cpus  # as vmstat's id: a percentage of the CPUs
    return means


def print_rows(model, seed, rows):
    mainline = rows[0][2]["msgs"]
    print(f"\n{model}, seed {seed} (load average {os.getloadavg()[0]:.2f})")
    print(
        f"{'kernel':<22}{'msgs/s':>9}{'ratio':>7}{'r':>7}{'id %':>6}{'cs':>8}"
        f"{'preempt':>8}{'yields':>11}{'blocks':>7}{'spin %':>7}"
        + (f"{'sleeps':>9}" if STRATEGY else "")
    )
    for kernel, tun, x in rows:
        print(
            f"{label(kernel, tun):<22}{x['msgs']:>9.0f}{x['msgs'] / mainline:>7.2f}"
            f"{x['r']:>7.1f}{x['id']:>6.1f}{x['context_switches']:>8}{x['preemptions']:>8}"
            f"{x['yields']:>11}{x['spin_blocks']:>7}{x['spin']:>7.1f}"
            + (f"{x.get('spin_sleeps', 0) + x.get('monitor_timed_parks', 0):>9}"
               if STRATEGY else "")
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="seed 1 only")
    parser.add_argument(
        "--handoff",
        action="store_true",
        help="the tests' hand-off ring at 150 and 7500 messages instead",
    )
    parser.add_argument(
        "--scale",
        choices=("volano",),
        help="volano: VolanoMark's documented size (10 rooms x 20 users, 100 "
        "messages, 800 threads) on 2 and 8 CPUs, with a census of roles",
    )
    parser.add_argument("--cpus", default="2,8", help="with --scale: CPU counts (default 2,8)")
    parser.add_argument(
        "--hold-us",
        help="with --scale: instead, sweep the room lock's hold time (cs_us, no source) on "
        "the broadcast over these values, e.g. 10,50,200,1000",
    )
    parser.add_argument(
        "--sock-msgs",
        help="with --scale: instead, bound each loopback socket to this many messages (no "
        "source: swept) on the broadcast, the writer's write outside and inside the room's "
        "monitor, e.g. 1,4,16,64",
    )
    parser.add_argument(
        "--loop-ns",
        help="with --sock-msgs: instead, the write inside the monitor at these spin-loop "
        "speeds (loop_ns, no source for the thread's machine), e.g. 0.01,0.1,0.3,1,3",
    )
    parser.add_argument(
        "--jvm",
        choices=("j9", "hotspot-spin", "hotspot-monitor"),
        default="j9",
        help="the room lock's strategy: j9 (J9's counts, the default) or hotspot-spin "
        "(HotSpot's Thread::SpinAcquire(): 6 yields, each after 4096 spin iterations, then "
        "4096 more and a timed sleep, again until the lock is free; a sleep prints a `sleeps`) "
        "or hotspot-monitor (HotSpot's Java monitor, ObjectMonitor; its timed parks print as "
        "`sleeps`)",
    )
    parser.add_argument(
        "--spin-sleep-us",
        type=int,
        default=0,
        help="with --jvm hotspot-spin: the timed sleep's length in us (0: HotSpot's park(1), "
        "1 ms; how long a 1 ms timed wait lasted on the thread's kernels is not sourced)",
    )
    args = parser.parse_args()
    if args.jvm != "j9":
        STRATEGY.update({"jvm": args.jvm, "spin_sleep_us": args.spin_sleep_us})
    seeds = (1,) if args.quick else (1, 2)
    if args.scale:
        cpu_counts = [int(n) for n in args.cpus.split(",")]
        if args.sock_msgs:
            report_socket_sweep(
                seeds,
                cpu_counts,
                [int(n) for n in args.sock_msgs.split(",")],
                [float(x) for x in args.loop_ns.split(",")] if args.loop_ns else None,
            )
        elif args.hold_us:
            report_hold_sweep(seeds, cpu_counts, [int(n) for n in args.hold_us.split(",")])
        else:
            report_volano(seeds, cpu_counts)
        return
    if args.handoff:
        report_handoff(seeds)
        return
    for model, params in MODELS.items():
        report(model, params, seeds)


if __name__ == "__main__":
    main()

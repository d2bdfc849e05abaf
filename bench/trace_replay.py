"""Replay speed: a 100,000-event trace through `simulator replay`, events/s, as a ratio to a
bare heapq event loop timed in the same process (the floor of any heapq-based simulator here,
as in bench/simulator_speed.py).

Run from the repository root:  .venv/bin/python bench/trace_replay.py [--events N] [--runs R]

The trace is made by the simulator itself (threadtest on 2.6.24, written with
`--trace-format ftrace`), so the figure does not depend on what this machine records. Three
rates, each on the trace's events and process CPU time (best of --runs, so other load on a
shared machine distorts them as little as possible):
- read: parsing the trace and rebuilding every task's program (schedtrace + replay.Rebuild);
- simulate: running the rebuilt programs on 6.6-eevdf, with the replay's own per-task figures;
- replay: both, what `python -m simulator replay` costs.

Then, per recorded trace in tests/fixtures/traces/ (with --agreement), how the replay on
6.6-eevdf (2 CPUs) agrees with the recording: as the replay does by default, with the spins on
a task queued behind the spinner left out and the recorded CPU time kept as every spin's floor
(the heuristic before issue 24 item 6), without spin-waits, with RUN_TO_PARITY off, and with the
recorded priorities applied, and without autogroup (docs/simulator.md, "Spins that wait for
another task", "Autogroup"): the
makespan ratio, the spin-waits found, and the benchmark's tasks whose wait sum is within 2x of
the recorded one (waits under 1 ms count as 1 ms), with the benchmark's total wait, replayed /
recorded.

With --breakdown, per trace, where the benchmark's waits went, recorded and replayed: by what
ended them (a fork, a wakeup, a preemption) and by what held the CPU the task then ran on while
it waited (the benchmark, another program, nothing); and how each wait of a child forked onto
its parent's CPU ended: the parent handing the CPU to the child (its slice over), or to
another program's task woken in the last 100 us. Replayed with autogroup (the default for
these recordings) and without.

--set TUNABLE=VALUE (repeatable) passes a tunable to every replay of --agreement and
--breakdown (e.g. --set delay_dequeue=1: 6.12's delayed dequeue); --delay-dequeue adds
--agreement rows with it (with and without DELAY_ZERO, and without autogroup).

With --placements, the quiet recordings of tests/fixtures/traces/fork_placement/ (made with
no other job on the machine): the default replay's agreement on each, and every task in or out
of 2x by where its fork placed it (schedtrace.fork_placements(): on an idle CPU, on the
parent's CPU while another idled, on the parent's CPU while none idled, ...).
"""

import argparse
import collections
import io
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import schedtrace  # noqa: E402
import simulator  # noqa: E402
from bench.simulator_speed import bare_loop_rate, best_of  # noqa: E402
from simulator import replay as replay_module  # noqa: E402
from simulator.replay import read_trace, replay, simulate, validate, wait_agreement  # noqa: E402

TRACES = ROOT / "tests" / "fixtures" / "traces"
RECORDED = [("ftrace_threadtest.trace.gz", "threadtest"), ("ftrace_burn.trace", "threadtest_burn"),
            ("perfsched_threadtest.txt.gz", "threadtest"),
            ("tracecmd_threadtest.txt.gz", "threadtest"), ("perf_burn_ns.txt", "threadtest_burn"),
            ("harness_busy/threadtest.trace.gz", "threadtest"),
            ("harness_busy/threadtest_burn.trace.gz", "threadtest_burn"),
            ("lost_switch_ins/whole_system_threadtest_burn.trace.gz", "threadtest threadtest_burn")]
QUIET_RECORDED = [(f"fork_placement/{name}", "threadtest threadtest_burn") for name in
                  ("threadtest_10k_1.trace.gz", "threadtest_10k_2.trace.gz",
                   "threadtest_10k_3.trace.gz", "burn_50_1.trace.gz")]
LINES_PER_ITERATION = 10  # threadtest on 2 CPUs: fork, wakeups, switches, exit, migrations


def make_trace(path, events):
    iterations = max(1, events // LINES_PER_ITERATION)
    with open(path, "w") as f:
        simulator.run({"workload": "threadtest", "kernel": "2.6.24", "cpus": 2,
                       "params": {"iterations": iterations, "loops": 100000},
                       "tunables": {"vmstat_interval_ms": 0}, "max_events": 10**9},
                      trace=f, trace_format="ftrace")


def timed(fn):
    cpu0 = time.process_time()
    result = fn()
    return {"cpu_seconds": time.process_time() - cpu0, "result": result}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--agreement", action="store_true",
                        help="also the wait-sum agreement on the recorded traces")
    parser.add_argument("--breakdown", action="store_true",
                        help="also where the benchmark's waits went, recorded and replayed")
    parser.add_argument("--set", action="append", default=[], metavar="TUNABLE=VALUE",
                        help="a tunable for every replay of --agreement / --breakdown (e.g. "
                        "delay_dequeue=1); repeatable")
    parser.add_argument("--delay-dequeue", action="store_true",
                        help="also --agreement's rows with 6.12's delayed dequeue "
                        "(delay_dequeue 1, with and without DELAY_ZERO)")
    parser.add_argument("--others-sweep", action="store_true",
                        help="also, on the harness recordings with autogroup, how the "
                        "agreement moves with the other programs' group(s) and shares")
    parser.add_argument("--sides", action="store_true",
                        help="also the tasks out of 2x split by side (too little / too much "
                        "wait), and what held the CPU during the too-little ones' recorded waits")
    parser.add_argument("--placements", action="store_true",
                        help="also the quiet fork_placement recordings: the agreement, and "
                        "each task in or out of 2x by where its fork placed it")
    args = parser.parse_args()
    extra = parse_sets(args.set)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(pathlib.Path(tmp) / "trace.txt")
        make_trace(path, args.events)
        norm = validate({"workload": "threadtest", "kernel": "6.6-eevdf", "cpus": 2,
                         "tunables": {"vmstat_interval_ms": 0}, "max_events": 10**9})
        read = best_of(args.runs, lambda: timed(lambda: read_trace(path)))
        rebuild = read["result"][0]
        events = rebuild.events
        sim = best_of(args.runs, lambda: timed(lambda: simulate(norm, read_trace(path)[0])))
        sim_cpu = sim["cpu_seconds"] - read["cpu_seconds"]
        bare = bare_loop_rate(events, runs=args.runs)
    total = read["cpu_seconds"] + sim_cpu
    out = io.StringIO()
    out.write(f"trace: {events} events, {len(rebuild.tasks)} tasks\n")
    for name, cpu in (("read", read["cpu_seconds"]), ("simulate", sim_cpu), ("replay", total)):
        rate = events / cpu
        out.write(f"{name:9} {cpu:7.3f} s CPU  {rate:12,.0f} events/s  "
                  f"ratio to bare heapq loop {rate / bare:.3f}\n")
    out.write(f"bare heapq loop: {bare:,.0f} events/s\n")
    sys.stdout.write(out.getvalue())
    if args.agreement:
        agreement(extra, DELAY_VARIANTS if args.delay_dequeue else [])
    if args.breakdown:
        breakdown(extra)
    if args.others_sweep:
        others_sweep()
    if args.sides:
        sides(extra)
    if args.placements:
        placements(extra)


VARIANTS = [  # (label, replay() keywords)
    ("default", {}),
    ("no queued spins, floor", {"queued_spins": False, "spin_work": "recorded"}),
    ("no spin-waits", {"spin_waits": False}),
    ("RUN_TO_PARITY off", {"tunables": {"run_to_parity": 0}}),
    ("recorded priorities", {"priorities": True}),
    ("autogroup off", {"autogroup": False}),
]


# 6.12's delayed dequeue (docs/simulator.md, "Delayed dequeue") on the 6.6-eevdf profile
DELAY_VARIANTS = [
    ("6.12 delayed dequeue", {"tunables": {"delay_dequeue": 1}}),
    ("delayed, DELAY_ZERO off", {"tunables": {"delay_dequeue": 1, "delay_zero": 0}}),
    ("delayed, autogroup off", {"tunables": {"delay_dequeue": 1}, "autogroup": False}),
]


def parse_sets(pairs):
    """--set NAME=VALUE pairs as a tunables dict (integers where they parse)."""
    tunables = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        tunables[name] = int(value) if value.lstrip("-").isdigit() else value
    return tunables


def agreement(extra=None, more=()):
    """Each recorded trace on 6.6-eevdf (2 CPUs) in each variant; ``extra``: tunables for
    every replay; ``more``: variants after the standard ones."""
    for name, comms in RECORDED:
        for label, kwargs in [*VARIANTS, *more]:
            kwargs = dict(kwargs)
            tunables = {"noise_pct": 0, **(extra or {}), **kwargs.pop("tunables", {})}
            result = replay(str(TRACES / name), "6.6-eevdf", cpus=2, tunables=tunables,
                            **kwargs)
            rows = wait_agreement(result, comms=set(comms.split()), floor_ms=1.0)
            within = sum(0.5 <= row[4] <= 2 for row in rows)
            real, sim = sum(row[2] for row in rows), sum(row[3] for row in rows)
            options = {k: v for k, v in kwargs.items() if k not in ("priorities", "autogroup")}
            found = read_trace(str(TRACES / name), options.pop("spin_waits", True),
                               **options)[0].spin_waits
            print(f"{name[:28]:28} {label:22} spin-waits {found:3}  "
                  f"makespan {result['makespan_ms'] / result['real']['makespan_ms']:.3f}  "
                  f"within 2x {within:3}/{len(rows):3}  total wait {sim:7.1f} / {real:7.1f} ms"
                  f" = {sim / real:.2f}", flush=True)


def others_sweep():
    """The harness recordings hold the other programs as one placeholder per CPU, so how many
    sessions they were is lost: with autogroup, the stand-ins' group (one per CPU, the
    replay's choice, or one spanning the CPUs) and its shares (the nice level the recording's
    wait ratio gives, replay.others_nice(), or a fixed nice), swept."""
    made = replay_module.stand_in

    def spanning(index, cpu, run_ns, *, nice, autogroup):
        task = made(index, cpu, run_ns, nice=nice, autogroup=autogroup)
        task.group = "autogroup-others"
        return task

    def fixed(level):
        def stand_in(index, cpu, run_ns, *, nice, autogroup):
            return made(index, cpu, run_ns, nice=level, autogroup=autogroup)
        return stand_in

    cases = [("per CPU, inferred", made), ("spanning, inferred", spanning)]
    cases += [(f"per CPU, nice {level:+d}", fixed(level)) for level in (5, 0, -5, -10)]
    try:
        for name, comms in RECORDED[5:7]:
            for label, factory in cases:
                replay_module.stand_in = factory
                result = replay(str(TRACES / name), "6.6-eevdf", cpus=2,
                                tunables={"noise_pct": 0}, autogroup=True)
                rows = wait_agreement(result, comms=set(comms.split()), floor_ms=1.0)
                within = sum(0.5 <= row[4] <= 2 for row in rows)
                real, sim = sum(row[2] for row in rows), sum(row[3] for row in rows)
                print(f"{name[:28]:28} {label:20} within 2x {within:3}/{len(rows):3}  "
                      f"total wait {sim / real:.2f}  makespan "
                      f"{result['makespan_ms'] / result['real']['makespan_ms']:.3f}",
                      flush=True)
    finally:
        replay_module.stand_in = made


class EventLog(replay_module.StatsWriter):
    """The replayed schedule's events, kept."""

    def __init__(self):
        super().__init__()
        self.events = []

    def _line(self, cpu_id, comm, pid, flags, event, body):
        fields = schedtrace.fields.parse_fields(event, body)
        self.events.append(schedtrace.Event(self.eng.now, cpu_id, event, pid, comm, 0,
                                            **fields))
        super()._line(cpu_id, comm, pid, flags, event, body)


def _close_holding(held, running, switch, bench):
    """At a switch, the CPU's last holder's stretch ends: kept as (start, end, kind), kind
    "nothing" (idle), "benchmark" or "other"."""
    if switch.cpu in running:
        pid, comm, since = running[switch.cpu]
        kind = "nothing" if not pid else "benchmark" if comm in bench else "other"
        held[switch.cpu].append((since, switch.ts, kind))


def wait_causes(events, bench):
    """ms of the benchmark's waits by what ended them and by what held the CPU meanwhile,
    and the count of child-behind-parent waits by how they ended."""
    held = collections.defaultdict(list)  # cpu -> (start, end, holder kind)
    running, runnable, woken, forks = {}, {}, {}, {}
    ends, shares, how = collections.Counter(), collections.Counter(), collections.Counter()
    waits = []
    for e in events:
        if e.kind == "sched_switch":
            _close_holding(held, running, e, bench)
            if e.prev_comm in bench and (e.prev_state or "R")[:1] == "R":
                runnable.setdefault(e.prev_pid, (e.ts, "preemption"))
            for child, (parent, cpu) in list(forks.items()):
                if cpu == e.cpu and e.prev_pid == parent and (e.prev_state or "R")[:1] == "R":
                    fresh = e.ts - woken.get(e.next_pid, -10**18) < 100_000
                    how["slice" if e.next_pid == child else
                        "other's wakeup" if fresh else "other"] += 1
                    del forks[child]
            running[e.cpu] = (e.next_pid, e.next_comm, e.ts)
            if e.next_pid in runnable:
                since, cause = runnable.pop(e.next_pid)
                waits.append((since, e.ts, e.cpu, cause))
                forks.pop(e.next_pid, None)
        elif e.kind in ("sched_wakeup", "sched_waking", "sched_wakeup_new"):
            woken[e.target_pid] = e.ts
            new = e.kind == "sched_wakeup_new"
            if (e.target_comm in bench and e.target_pid not in runnable
                    and all(e.target_pid != r[0] for r in running.values())):
                runnable[e.target_pid] = (e.ts, "fork" if new else "wakeup")
            if new and e.target_comm in bench and e.target_cpu == e.cpu:
                forks[e.target_pid] = (running.get(e.cpu, (0,))[0], e.cpu)
    for since, until, cpu, cause in waits:
        ends[cause] += until - since
        for start, end, kind in held[cpu]:
            overlap = min(end, until) - max(start, since)
            if overlap > 0:
                shares[kind] += overlap
    return ends, shares, how


def recorded_waits(events, bench):
    """The benchmark's recorded waits as (pid, ms, {holder kind: ms}), attributed as in
    wait_causes(): the CPU the task was switched in on, by who held it meanwhile."""
    held: dict[int, list] = collections.defaultdict(list)
    running: dict[int, tuple] = {}
    runnable: dict[int, int] = {}
    waits = []
    for e in events:
        if e.kind == "sched_switch":
            _close_holding(held, running, e, bench)
            if e.prev_comm in bench and (e.prev_state or "R")[:1] == "R":
                runnable.setdefault(e.prev_pid, e.ts)
            running[e.cpu] = (e.next_pid, e.next_comm, e.ts)
            if e.next_pid in runnable:
                waits.append((e.next_pid, runnable.pop(e.next_pid), e.ts, e.cpu))
        elif (e.kind in ("sched_wakeup", "sched_waking", "sched_wakeup_new")
                and e.target_comm in bench and e.target_pid not in runnable
                and all(e.target_pid != r[0] for r in running.values())):
            runnable[e.target_pid] = e.ts
    out = []
    for pid, since, until, cpu in waits:
        shares: collections.Counter[str] = collections.Counter()
        for start, end, kind in held[cpu]:
            overlap = min(end, until) - max(start, since)
            if overlap > 0:
                shares[kind] += overlap / 1e6
        out.append((pid, (until - since) / 1e6, shares))
    return out


def sides(extra=None):
    """Per recording (default replay): the tasks out of 2x by side, their wait sums recorded /
    replayed, how many of the too-little ones have one recorded wait >= half their sum, and
    (but for the whole-system one) what held the CPU during their recorded waits."""
    for name, comms in RECORDED:
        bench = set(comms.split())
        result = replay(str(TRACES / name), "6.6-eevdf", cpus=2,
                        tunables={"noise_pct": 0, **(extra or {})})
        rows = wait_agreement(result, comms=bench, floor_ms=1.0)
        low = {row[0]: row for row in rows if row[4] < 0.5}
        high = [row for row in rows if row[4] > 2]
        longest: dict[int, float] = collections.defaultdict(float)
        for row in result["real"]["tasks"]:
            if row["comm"] in bench:
                longest[row["pid"]] = max(longest[row["pid"]], row["wait_max_ms"])
        one_long = sum(longest[pid] >= 0.5 * row[2] for pid, row in low.items())
        line = (f"{name[:28]:28} too little {len(low):3} ({one_long:3} with one wait >= half),"
                f" {sum(r[2] for r in low.values()):7.1f} / {sum(r[3] for r in low.values()):6.1f}"
                f" ms; too much {len(high):3} ({sum(r[2] < 1 for r in high):3} under 1 ms"
                f" recorded), {sum(r[2] for r in high):6.1f} / {sum(r[3] for r in high):7.1f} ms")
        if "whole_system" not in name:  # too long for an event list
            held: collections.Counter[str] = collections.Counter()
            for pid, _ms, shares in recorded_waits(schedtrace.open_events(str(TRACES / name)),
                                                   bench):
                if pid in low:
                    held.update(shares)
            line += "; too little's CPU held by " + ", ".join(
                f"{k} {v:.1f}" for k, v in sorted(held.items())) + " ms"
        print(line, flush=True)


def breakdown(extra=None):
    norm = validate({"workload": "threadtest", "kernel": "6.6-eevdf", "cpus": 2,
                     "tunables": {"noise_pct": 0, "busy_contention": 0, **(extra or {})},
                     "params": {"counter": "register"}})
    for name, comms in RECORDED[:-1]:  # the whole-system one: too long for an event list
        path = str(TRACES / name)
        logs = {}
        for autogroup in (True, False):  # the replay's default for these recordings: on
            logs[autogroup] = EventLog()
            simulate(norm, read_trace(path)[0], writer=logs[autogroup], autogroup=autogroup)
        for side, events in (("recorded", schedtrace.open_events(path)),
                             ("replayed", logs[True].events),
                             ("replayed, autogroup off", logs[False].events)):
            ends, shares, how = wait_causes(events, set(comms.split()))
            print(f"{name[:28]:28} {side}: waits after "
                  + ", ".join(f"{k} {v / 1e6:.1f}" for k, v in sorted(ends.items()))
                  + " ms; CPU held by " + ", ".join(f"{k} {v / 1e6:.1f}"
                                                     for k, v in sorted(shares.items()))
                  + " ms; child behind parent ended by "
                  + ", ".join(f"{k} {v}" for k, v in sorted(how.items())), flush=True)


def placements(extra=None):
    """On each quiet recording, the default replay's tasks within 2x, and every benchmark task
    counted by its fork's placement class and its side (within, too little, too much)."""
    for name, comms in QUIET_RECORDED:
        _, found = schedtrace.fork_placements(str(TRACES / name))  # reads the whole trace
        placed = {row.child_pid: row.placement for row in found.placements}
        result = replay(str(TRACES / name), "6.6-eevdf", cpus=2,
                        tunables={"noise_pct": 0, **(extra or {})})
        rows = wait_agreement(result, comms=set(comms.split()), floor_ms=1.0)
        counts: collections.Counter = collections.Counter()
        for pid, _comm, _recorded, _replayed, ratio in rows:
            side = "too little" if ratio < 0.5 else "too much" if ratio > 2 else "within"
            counts[placed.get(pid, "not forked in the trace"), side] += 1
        within = sum(n for (_, side), n in counts.items() if side == "within")
        real, sim = sum(row[2] for row in rows), sum(row[3] for row in rows)
        print(f"{name:40} makespan {result['makespan_ms'] / result['real']['makespan_ms']:.3f}"
              f"  within 2x {within:3}/{len(rows):3}  total wait {sim:6.1f} / {real:6.1f} ms",
              flush=True)
        for (placement, side), n in sorted(counts.items()):
            print(f"    {placement:26} {side:10} {n:4}")


if __name__ == "__main__":
    main()

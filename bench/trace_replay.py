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
6.6-eevdf (2 CPUs) agrees with the recording, with and without spin-waits
(docs/simulator.md, "Spins that wait for another task"), and with RUN_TO_PARITY off: the
makespan ratio, the spin-waits found, and the benchmark's tasks whose wait sum is within 2x of
the recorded one (waits under 1 ms count as 1 ms), with the benchmark's total wait, replayed /
recorded.
"""

import argparse
import io
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import simulator  # noqa: E402
from bench.simulator_speed import bare_loop_rate, best_of  # noqa: E402
from simulator.replay import read_trace, replay, simulate, validate, wait_agreement  # noqa: E402

TRACES = ROOT / "tests" / "fixtures" / "traces"
RECORDED = [("ftrace_threadtest.trace.gz", "threadtest"), ("ftrace_burn.trace", "threadtest_burn"),
            ("perfsched_threadtest.txt.gz", "threadtest"),
            ("tracecmd_threadtest.txt.gz", "threadtest"), ("perf_burn_ns.txt", "threadtest_burn"),
            ("lost_switch_ins/whole_system_threadtest_burn.trace.gz", "threadtest threadtest_burn")]
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
    args = parser.parse_args()
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
        agreement()


def agreement():
    """Each recorded trace on 6.6-eevdf as profiled (RUN_TO_PARITY on), with and without
    spin-waits, then with RUN_TO_PARITY off (the profile before it was modelled)."""
    for name, comms in RECORDED:
        for spin_waits, parity in ((False, 1), (True, 1), (True, 0)):
            result = replay(str(TRACES / name), "6.6-eevdf", cpus=2, spin_waits=spin_waits,
                            tunables={"noise_pct": 0, "run_to_parity": parity})
            rows = wait_agreement(result, comms=set(comms.split()), floor_ms=1.0)
            within = sum(0.5 <= row[4] <= 2 for row in rows)
            real, sim = sum(row[2] for row in rows), sum(row[3] for row in rows)
            found = read_trace(str(TRACES / name), spin_waits)[0].spin_waits
            print(f"{name[:28]:28} spin-waits {'on ' if spin_waits else 'off'} ({found:3}), "
                  f"RUN_TO_PARITY {'on ' if parity else 'off'}: "
                  f"makespan {result['makespan_ms'] / result['real']['makespan_ms']:.3f}  "
                  f"within 2x {within:3}/{len(rows):3}  total wait {sim:7.1f} / {real:7.1f} ms"
                  f" = {sim / real:.2f}", flush=True)


if __name__ == "__main__":
    main()

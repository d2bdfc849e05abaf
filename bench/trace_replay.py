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
from simulator.replay import read_trace, simulate, validate  # noqa: E402

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


if __name__ == "__main__":
    main()

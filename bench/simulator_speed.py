"""Simulator speed: events/s on the chatroom case as a ratio to a bare heapq event loop timed
in the same process (target >= 1.0), 10,000 yielders on 8 CPUs (target >= 1M events/s), RSS of
a 10M-event run, SimSo side by side.

Run from the repository root:  .venv/bin/python bench/simulator_speed.py [--quick]
Rates use process CPU time, best of --runs (default 3), so other load on a shared machine
distorts them as little as possible (wall time is printed beside).  One Python process = one
core.  The bare loop (the issue's reference) pops an event tuple (time, seq, kind, object,
generation) and pushes one follow-up with heapq, over a heap of as many pending events as the
chatroom keeps (one per CPU plus timers): the cost floor of a heapq-based discrete-event
simulator in this interpreter.  The engine's own queue (simulator/eventq.py) is not heapq in the
compiled build but an indexed heap several times faster; for context, every profile is also
given as a ratio to the same bare loop on that queue.

An event is one scheduler event popped from the engine's queue and processed (the run's
`events` counter): a CPU's run segment ending, a timer, a balance tick, a vmstat sample.
Superseded entries of the pure-Python build's lazy heapq queue, skipped when popped, are not
counted.

The simulator measured is whichever build `import simulator` picks: the mypyc-compiled hot
modules when `python -m simulator.build` (make compile) built them and they are current, else
the pure-Python sources; the first line says which (SCHEDBENCH_PURE_PYTHON=1 forces the
sources, to compare).

SimSo is never a dependency of the project: install it into a throwaway virtualenv, e.g.
    python3.11 -m venv /tmp/simso-venv
    /tmp/simso-venv/bin/pip install simso==0.8.5 SimPy==2.3.1
and pass that interpreter with --simso PATH or SIMSO_PYTHON (default
/tmp/simso-venv/bin/python); without it the comparison is skipped with a message.
"""

import argparse
import heapq
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import simulator  # noqa: E402
from simulator import eventq  # noqa: E402

SIMSO_PYTHON = os.environ.get("SIMSO_PYTHON", "/tmp/simso-venv/bin/python")
# 8 periodic tasks (period_ms:wcet_ms), implicit deadlines, on 4 CPUs: utilisation 2.19
EDF_TASKS = "10:3;20:5;40:8;50:10;25:6;100:20;16:8;30:9"
ZERO_OVERHEAD = {"context_switch_ns": 0, "sched_cost_ns": 0, "sched_cost_log_ns": 0,
                 "cache_refill_us": 0, "wakeup_ns": 0,
                 "noise_pct": 0, "vmstat_interval_ms": 0, "idle_wake_ns": 0,
                 "busy_contention": 0}


def best_of(runs, fn):
    """Run ``fn`` (returning a dict with cpu_seconds) ``runs`` times; keep the fastest, the
    usual way to take other load on a shared machine out of a timing."""
    results = [fn() for _ in range(runs)]
    return min(results, key=lambda r: r["cpu_seconds"])


def bare_loop_rate(events, pending=16, runs=3):
    """Events/s of a bare heapq loop: pop the earliest event, push one follow-up."""
    def once():
        heap = [(i, i, 0, None, 0) for i in range(pending)]
        heapq.heapify(heap)
        pop, push = heapq.heappop, heapq.heappush
        seq = pending
        cpu0 = time.process_time()
        for _ in range(events):
            when, _seq, kind, obj, gen = pop(heap)
            seq += 1
            push(heap, (when + 1000 + (seq & 1023), seq, kind, obj, gen))
        return {"cpu_seconds": time.process_time() - cpu0}

    return events / best_of(runs, once)["cpu_seconds"]


def engine_queue_rate(events, runs=3):
    """Events/s of the same bare loop on the engine's own queue (simulator/eventq.py), for
    context: the compiled build's indexed heap is faster than heapq, so part of the ratio to
    the heapq loop is the queue's own speed-up; this shows how much."""
    def once():
        queue = eventq.new_queue()
        cpu0 = time.process_time()
        eventq.bare_loop(queue, events)
        return {"cpu_seconds": time.process_time() - cpu0}

    return events / best_of(runs, once)["cpu_seconds"]


def chatroom_rate(kernel, messages, runs=1):
    spec = {"workload": "chatroom", "kernel": kernel, "cpus": 8,
            "params": {"rooms": 10, "clients": 20, "messages": messages},
            "max_events": 10**9}

    def once():
        cpu0 = time.process_time()
        result = simulator.run(spec)
        return {"cpu_seconds": time.process_time() - cpu0, "result": result}

    best = best_of(runs, once)
    events = best["result"]["counters"]["events"]
    cpu = best["cpu_seconds"]
    return events, best["result"]["wall_seconds"], cpu, events / cpu


YIELDERS_EVENTS = 1_000_000  # a yielders run lasts long enough for about this many events
YIELDERS_MAX_CPU_S = 30.0  # ... unless the probe says that would take longer than this
PROBE_EVENTS = 100_000  # a probe shorter than this is run again, longer ...
PROBE_STRETCH = 400  # ... by at most this factor


def yielders_spec(kernel, duration_ms):
    return {"workload": "yield-loop", "kernel": kernel, "cpus": 8,
            "params": {"tasks": 10_000, "duration_ms": duration_ms, "warmup_ms": 0},
            "tunables": {"vmstat_interval_ms": 0}, "max_events": 10**9}


def _probe(kernel, ms):
    """(events, CPU seconds) of a yielders run of ``ms`` simulated ms."""
    cpu0 = time.process_time()
    events = simulator.run(yielders_spec(kernel, ms))["counters"]["events"]
    return events, time.process_time() - cpu0


def yielders_duration(kernel, probe_ms, events):
    """The simulated time in which ``kernel`` handles about ``events`` yielder events, from a
    probe run: profiles differ 1,000-fold in simulated time per event (2.4 charges its O(n)
    goodness() scan, ~0.1 ms with 10,000 tasks; rsdl-0.31's yields keep the CPU until its
    quota ends), and a run of a few thousand events would time the creation of the 10,000
    tasks, not the events.  A probe of ``probe_ms`` that saw fewer than PROBE_EVENTS events is
    followed by a longer one sized for about that many, so that its CPU time per simulated ms
    (building the tasks included) is not mostly the building: a profile so slow that the run
    would take more than YIELDERS_MAX_CPU_S by that cost gets a shorter one (estimated from
    the 50 ms probe alone, rsdl-0.31's runs were 30x too short)."""
    probe, cpu = _probe(kernel, probe_ms)
    if probe < PROBE_EVENTS:
        probe_ms *= min(PROBE_STRETCH, max(1, PROBE_EVENTS // max(probe, 1)))
        probe, cpu = _probe(kernel, probe_ms)
    want = max(events, 1) * probe_ms / max(probe, 1)
    affordable = YIELDERS_MAX_CPU_S * probe_ms / max(cpu, 1e-6)
    return max(probe_ms, int(min(want, affordable)) + 1)


def yielders_rate(kernel, duration_ms, runs=1):
    """10,000 tasks looping on sched_yield() on 8 CPUs: every event is a pick from a queue of
    ~1,250 tasks (2.4: one queue of 10,000), so a pick that scans the queue shows here (the
    issue's target: 1M events/s)."""
    spec = yielders_spec(kernel, duration_ms)

    def once():
        cpu0 = time.process_time()
        result = simulator.run(spec)
        return {"cpu_seconds": time.process_time() - cpu0, "result": result}

    best = best_of(runs, once)
    events = best["result"]["counters"]["events"]
    return events, best["cpu_seconds"], events / best["cpu_seconds"]


def print_yielders(kernels, probe_ms, target_events, runs):
    rates = []
    for kernel in kernels:
        duration_ms = yielders_duration(kernel, probe_ms, target_events)
        events, cpu, rate = yielders_rate(kernel, duration_ms, runs)
        rates.append(rate)
        print(f"yield-loop 10,000 tasks, 8 CPUs, {duration_ms} ms, {kernel:9}: {events} events, "
              f"{cpu:.2f} CPU-s = {rate:,.0f} events/s")
    print(f"yielders: min {min(rates):,.0f} events/s (target >= 1,000,000: "
          f"{'met' if min(rates) >= 1e6 else 'NOT met'})")


# The child's own peak RSS in kB: VmHWM, its memory's high-water mark since exec.  Not
# ru_maxrss: on Linux exec() folds the forked copy of the parent's memory into it, so the child
# reported the bench's own size (~49 MB after the yielders runs) instead of its 21 MB.
PEAK_RSS_KB = ("next((int(line.split()[1]) for line in open('/proc/self/status') "
               "if line.startswith('VmHWM:')), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")


def rss_child(messages):
    """Run a big chatroom in a child process; report its event count and peak RSS."""
    code = ("import json,resource,simulator;"
            f"r=simulator.run({{'workload':'chatroom','kernel':'2.6.24','cpus':8,"
            f"'params':{{'rooms':10,'clients':20,'messages':{messages}}},"
            "'max_events':10**9,'tunables':{'vmstat_interval_ms':0}});"
            "print(json.dumps([r['counters']['events'],r['wall_seconds'],"
            f"{PEAK_RSS_KB}]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


SIMSO_SCRIPT = r"""
import json, sys, time, io, contextlib
from simso.core import Model
from simso.configuration import Configuration
tasks, cpus, seconds = json.loads(sys.argv[1])
c = Configuration()
c.duration = int(seconds * 1000 * c.cycles_per_ms)
for i, (period, wcet) in enumerate(tasks):
    c.add_task(name="T%d" % i, identifier=i + 1, period=period, activation_date=0,
               wcet=wcet, deadline=period)
for i in range(cpus):
    c.add_processor(name="CPU%d" % i, identifier=i + 1)
c.scheduler_info.clas = "simso.schedulers.EDF"
c.check_all()
model = Model(c)
start, cpu0 = time.perf_counter(), time.process_time()
with contextlib.redirect_stdout(io.StringIO()):
    model.run_model()
wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
jobs = sum(len(t.jobs) for t in model.results.tasks.values())
missed = sum(1 for t in model.results.tasks.values() for j in t.jobs if j.exceeded_deadline)
print(json.dumps({"jobs": jobs, "deadline_misses": missed, "wall_seconds": wall,
                  "cpu_seconds": cpu}))
"""


def run_simso(tasks, cpus, seconds, simso_python):
    if not os.path.exists(simso_python):
        return None, (f"SimSo interpreter {simso_python} not found (a venv with simso==0.8.5 "
                      "SimPy==2.3.1; pass --simso PATH or set SIMSO_PYTHON)")
    arg = json.dumps([[[float(p), float(w)] for p, w in tasks], cpus, seconds])
    proc = subprocess.run([simso_python, "-c", SIMSO_SCRIPT, arg], capture_output=True,
                          text=True, timeout=3600)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"SimSo failed to run: {last}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), None


def edf_ours(seconds):
    cpu0 = time.process_time()
    ours = simulator.run({"workload": "periodic", "kernel": "6.6-eevdf", "cpus": 4,
                          "params": {"tasks": EDF_TASKS, "duration_ms": int(seconds * 1000)},
                          "tunables": ZERO_OVERHEAD, "max_events": 10**9})
    return {"jobs": ours["metrics"]["jobs"][0],
            "deadline_misses": ours["metrics"]["deadline_misses"][0],
            "wall_seconds": ours["wall_seconds"], "cpu_seconds": time.process_time() - cpu0}


def edf_side_by_side(seconds, runs=1, simso_python=SIMSO_PYTHON):
    tasks = [tuple(float(x) for x in t.split(":")) for t in EDF_TASKS.split(";")]
    mine = best_of(runs, lambda: edf_ours(seconds))
    attempts = [run_simso(tasks, 4, seconds, simso_python) for _ in range(runs)]
    good = [t for t, _problem in attempts if t is not None]
    if not good:
        return mine, None, attempts[0][1]
    return mine, min(good, key=lambda t: t["cpu_seconds"]), None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs (smoke test)")
    parser.add_argument("--runs", type=int, default=3,
                        help="repeat each timing and keep the fastest (default 3)")
    parser.add_argument("--simso", default=SIMSO_PYTHON, metavar="PATH",
                        help="the Python of a venv with SimSo 0.8.5 (default $SIMSO_PYTHON or "
                             "/tmp/simso-venv/bin/python)")
    parser.add_argument("--kernels", help="comma-separated profiles (default: every one)")
    args = parser.parse_args()
    messages = 200 if args.quick else 2000
    queue_name = type(eventq.new_queue()).__name__
    print(f"simulator {simulator.__version__} ({simulator._compiled.STATE}), "
          f"Python {sys.version.split()[0]}, best of {args.runs} runs, "
          f"load average {os.getloadavg()[0]:.2f} at start")
    print("events = scheduler events popped from the engine's queue and processed (the "
          "`events` counter; stale entries skipped)")
    # The bare loop is timed again with each profile: this host's speed drifts by a fifth or
    # more within minutes, and one reference for the whole run skewed every ratio with it.
    bare_events = 2_000_000 if not args.quick else 300_000
    print("bare heapq loop (pop + push one follow-up), timed with each profile, run for run; for "
          f"context, the same loop on the engine's own queue ({queue_name}) too")
    ratios, own_ratios = [], []
    kernels = args.kernels.split(",") if args.kernels else list(simulator.catalog()["kernels"])
    for kernel in kernels:
        # the references and the profile interleaved, run by run, so that each best-of
        # comes from the same minutes of the host
        bare = own = 0.0
        best = None
        for _ in range(args.runs):
            bare = max(bare, bare_loop_rate(bare_events, runs=1))
            own = max(own, engine_queue_rate(bare_events, runs=1))
            measured = chatroom_rate(kernel, messages, 1)
            if best is None or measured[3] > best[3]:
                best = measured
        events, wall, cpu, rate = best
        ratios.append(rate / bare)
        own_ratios.append(rate / own)
        print(f"chatroom 10 rooms x 20 clients x {messages} messages, 8 CPUs, {kernel:9}: "
              f"{events} events, {cpu:.2f} CPU-s ({wall:.2f} s wall) = {rate:,.0f} events/s "
              f"= {rate / bare:.3f} of the bare loop ({bare:,.0f} events/s); context: "
              f"{rate / own:.3f} of it on the engine's queue ({own:,.0f} events/s)")
    print(f"ratio to the bare loop: min {min(ratios):.3f}, max {max(ratios):.3f} "
          f"(target >= 1.0: {'met' if min(ratios) >= 1.0 else 'NOT met'}; "
          f"load average now {os.getloadavg()[0]:.2f})")
    print(f"context: ratio to the same bare loop on the engine's own queue: "
          f"min {min(own_ratios):.3f}, max {max(own_ratios):.3f}")
    print_yielders(kernels, 50, YIELDERS_EVENTS // 10 if args.quick else YIELDERS_EVENTS,
                   args.runs)
    big = 2000 if args.quick else 25000
    events, wall, rss_kb = rss_child(big)
    print(f"memory: chatroom x {big} messages: {events} events in {wall:.1f} s, "
          f"peak RSS {rss_kb / 1024:.1f} MB (tracing off)")
    seconds = 10 if args.quick else 100
    mine, theirs, problem = edf_side_by_side(seconds, args.runs, args.simso)
    print(f"global EDF, 8 periodic tasks on 4 CPUs, {seconds} s simulated ({EDF_TASKS}):")
    print(f"  schedbench simulator: {mine['jobs']} jobs, {mine['deadline_misses']} deadline "
          f"misses, {mine['cpu_seconds']:.3f} CPU-s ({mine['wall_seconds']:.3f} s wall)")
    if theirs is None:
        print(f"  SimSo 0.8.5: NOT RUN - {problem}")
        return
    print(f"  SimSo 0.8.5:          {theirs['jobs']} jobs, {theirs['deadline_misses']} deadline "
          f"misses, {theirs['cpu_seconds']:.3f} CPU-s ({theirs['wall_seconds']:.3f} s wall)")
    same = (mine["jobs"], mine["deadline_misses"]) == (theirs["jobs"], theirs["deadline_misses"])
    print(f"  same jobs and misses: {'yes' if same else 'NO'}; speed-up "
          f"{theirs['cpu_seconds'] / max(mine['cpu_seconds'], 1e-9):.1f}x (CPU time)")


if __name__ == "__main__":
    main()

"""Issue 24's "each version its own" directions, as the simulator gives them.

Prints the threadtest table (2 CPUs, 50 iterations, sched_yield() in the spin from 1M loops on,
as the thread's later variant), sched_compat_yield=1 against 0 on 2.6.24, and threadtest-burn at
100 us bursts (2000 iterations) on 2 cores and on the burn machine's HT topology (1x1x2), each
with whether the thread's direction holds.  Simulated times only: nothing here is timed, so the
machine's load does not change the figures (it is printed anyway, as every bench does).

    .venv/bin/python bench/simulator_versions.py [--iterations N] [--loop-memory-ns NS]

--loop-memory-ns prices the counting loop as on another machine (the thread's laptop: 4.72 ns,
from its own 2.6.22 row at 40M loops, 94315 ms / 500 / 40M) and prints the threadtest table per
iteration beside the thread's figures.
--loop-sweep prints, for loop speeds of 2.0 to 6.0 ns in steps of 0.25, at which loop sizes
2.6.23 lands strictly between 2.6.22 and 2.6.24: how much the direction depends on where the
loop's length falls against the 4 ms tick (at 3.0 ns, the default, a 1M loop is exactly 3 ms).
"""

import argparse
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import simulator  # noqa: E402

KERNELS = ("2.6.22", "2.6.23", "2.6.24", "2.6.25")
LOOPS = (10_000, 1_000_000, 2_000_000, 3_000_000, 4_000_000, 5_000_000, 10_000_000)
# the thread's figures (ms for 500 iterations; Feb 2008, 2-CPU Core 2 laptop), for comparison
THREAD_MS = {
    10_000: (3332, 4397, 8953), 1_000_000: (4015, 4581, 10765),
    2_000_000: (7574, 9031, 12844), 3_000_000: (8015, 13053, 16204),
    4_000_000: (10045, 16642, 16910), 5_000_000: (12055, 21024, None),
    10_000_000: (24030, 33082, 34139),
}


TUNABLES: dict = {}  # --loop-memory-ns


def threadtest_ms(kernel, loops, iterations, spin_yields=None, **tunables):
    tunables = {**TUNABLES, **tunables}
    if spin_yields is None:  # the thread's variants: busy spin at 10k, yield from 1M loops on
        spin_yields = loops >= 1_000_000
    params = {"iterations": iterations, "loops": loops, "yield_in_spin": spin_yields}
    return simulator.run({"workload": "threadtest", "kernel": kernel, "cpus": 2,
                          "params": params, "tunables": tunables})["metrics"]["time_ms"][0]


def burn_s(kernel, topology):
    where = {"cpus": 2} if topology is None else {"topology": topology}
    result = simulator.run({"workload": "threadtest-burn", "kernel": kernel,
                            "params": {"iterations": 2000, "burn_us": 100}, **where})
    return result["metrics"]["time_us"][0] / 1e6


def print_threadtest(iterations):
    print(f"threadtest, 2 CPUs, {iterations} iterations (ms)")
    print("| loops | " + " | ".join(KERNELS) + " | 2.6.22 < 2.6.23 < 2.6.24 |")
    for loops in LOOPS:
        times = [threadtest_ms(k, loops, iterations) for k in KERNELS]
        holds = "holds" if times[0] < times[1] < times[2] else "no"
        label = f"{loops // 1_000_000}M" if loops >= 1_000_000 else f"{loops // 1000}k"
        print(f"| {label} | " + " | ".join(f"{t:.0f}" for t in times) + f" | {holds} |")


def print_per_iteration(iterations):
    print(f"threadtest per iteration (ms), {TUNABLES}; the thread's in brackets")
    print("| loops | 2.6.22 | 2.6.23 | 2.6.24 | 2.6.22 < 2.6.23 < 2.6.24 |")
    for loops in LOOPS:
        times = [threadtest_ms(k, loops, iterations) / iterations for k in KERNELS[:3]]
        cells = [f"{t:.2f} ({'-' if ref is None else f'{ref / 500:.2f}'})"
                 for t, ref in zip(times, THREAD_MS[loops], strict=True)]
        holds = "holds" if times[0] < times[1] < times[2] else "no"
        print(f"| {loops} | " + " | ".join(cells) + f" | {holds} |")


def print_compat(iterations):
    for loops in (10_000, 1_000_000):  # sched_yield() in the spin, or compat has no effect
        plain = threadtest_ms("2.6.24", loops, iterations, True)
        compat = threadtest_ms("2.6.24", loops, iterations, True, sched_compat_yield=1)
        print(f"2.6.24 compat_yield at {loops} loops, yield in the spin: {plain:.0f} / "
              f"{compat:.0f} ms = {plain / compat:.2f}x (direction at 1M: >= 3x)")


def print_burn():
    for topology in (None, "1x1x2"):
        old, new = burn_s("2.6.24", topology), burn_s("2.6.25", topology)
        where = "2 cores" if topology is None else f"HT {topology}"
        verdict = "holds" if new * 2 <= old else "no"
        print(f"burn 100 us x 2000, {where}: 2.6.24 {old:.2f} s, 2.6.25 {new:.2f} s, "
              f"2.6.24 / 2.6.25 = {old / new:.2f}x (>= 2x: {verdict})")


def print_loop_sweep(iterations):
    """Per loop speed, the loop sizes where 2.6.22 < 2.6.23 < 2.6.24 does not hold, with
    their per-iteration times."""
    print(f"threadtest direction against the loop speed, 2 CPUs, {iterations} iterations "
          f"(per-iteration ms 2.6.22 / 2.6.23 / 2.6.24 where it does not hold)")
    print("| loop_memory_ns | holds at | does not hold |")
    for step in range(17):
        TUNABLES["loop_memory_ns"] = ns = 2.0 + 0.25 * step
        held, missed = 0, []
        for loops in LOOPS:
            times = [threadtest_ms(k, loops, iterations) / iterations for k in KERNELS[:3]]
            if times[0] < times[1] < times[2]:
                held += 1
            else:
                missed.append(f"{loops:,}: " + " / ".join(f"{t:.2f}" for t in times))
        print(f"| {ns:.2f} | {held} of {len(LOOPS)} | {'; '.join(missed) or '-'} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--loop-memory-ns", type=float, default=None)
    parser.add_argument("--loop-sweep", action="store_true")
    args = parser.parse_args(argv)
    print(f"simulator build: {'compiled' if simulator.COMPILED else 'pure Python'}; "
          f"load average {os.getloadavg()[0]:.2f}")
    if args.loop_sweep:
        print_loop_sweep(args.iterations)
        return
    if args.loop_memory_ns is not None:
        TUNABLES["loop_memory_ns"] = args.loop_memory_ns
        print_per_iteration(args.iterations)
        return
    print_threadtest(args.iterations)
    print_compat(args.iterations)
    print_burn()


if __name__ == "__main__":
    main()

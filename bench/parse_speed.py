"""Parsing speed of the block layouts against the plainest line format, in the same run.

    .venv/bin/python bench/parse_speed.py [--lines 500000]

Parses a per-kernel sweep (kernel headings over `Loop to N: T ms` lines, read by results-file
with its unassigned-block bookkeeping), a sweep table and a kernel table, each of about the same
number of lines and result sets (repeats of a few dozen setups, as real pastes are), and
`N loops time T ms` lines (loops-time, the simplest grammar) as the
reference; then mmtests compare tables and a kernel test robot table (published summaries,
every change checked against its values); then the real tools' output, each a fixture of
tests/fixtures/real/ repeated to about the same number of lines, as a harness --repeat joins
runs (hackbench, perf bench sched pipe, sysbench cpu, schbench with interim reports, stress-ng,
tbench, cyclictest with and without its histogram). Prints lines per second and the ratio to
the reference; no pass/fail.
"""

import argparse
import io
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.parsers import parse_lines  # noqa: E402

LOOPS = ["10k", "100k", "1M", "2M", "10M", "40M"]
REAL = ROOT / "tests" / "fixtures" / "real"
TOOLS = ["hackbench/pipe-thread-g4-l200", "perf/pipe-l10000", "sysbench/cpu-t1",
         "schbench/interim-and-final", "stress-ng/cpu-1-switch-1", "tbench/c2",
         "cyclictest/t2-progress", "cyclictest/t2-q-h100"]


def per_kernel_sweep(lines: int, rng) -> str:
    out, minor = [], 0
    while len(out) < lines:
        minor += 1
        out.append(f"2.6.{minor % 10}.1-smp (run {minor % 3}):")
        out.extend(f"Loop to {loops}: {rng.randint(40, 99999)} ms" for loops in LOOPS)
    return "\n".join(out[:lines]) + "\n"


def sweep_table(lines: int, rng) -> str:
    out, block = [], 0
    while len(out) < lines:
        block += 1
        out.append(f"Loop to {LOOPS[block % 6]}:")
        out.extend(f"2.6.{k}.{block}\t\ttime {rng.randint(40, 99999)} ms" for k in range(20, 30))
    return "\n".join(out[:lines]) + "\n"


def kernel_table(lines: int, rng) -> str:
    out = ["loops   2.6.22   2.6.24   2.6.24 + fix"]
    out.extend(f"{LOOPS[n % 6]}  {rng.randint(40, 9999)}  {rng.randint(40, 9999)}  "
               f"{rng.randint(40, 9999)}" for n in range(1, lines))
    return "\n".join(out) + "\n"


def loops_time(lines: int, rng) -> str:
    return "".join(f"{LOOPS[i % 6]} loops time {rng.randint(40, 99999)} ms\n"
                   for i in range(lines))


def mmtests_tables(lines: int, rng) -> str:
    """compare-kernels.sh blocks of 200 Amean rows (two columns, changes checked)."""
    out, block = [], 0
    while len(out) < lines:
        block += 1
        out += [f"hackbench-process-pipes-{block}", "   6.1.0   6.1.0", " vanilla fix-v2r1"]
        for groups in range(1, 201):
            a, b = rng.randint(1000, 99999) / 10000, rng.randint(1000, 99999) / 10000
            out.append(f"Amean     {groups:<4} {a:.4f} (   0.00%)  {b:.4f} "
                       f"( {(a - b) / a * 100:7.2f}%)")
        out.append("")
    return "\n".join(out[:lines]) + "\n"


def robot_report(lines: int, rng) -> str:
    """One robot table of `lines` rows (values, stddev, checked change, metric)."""
    out = ["compiler/kconfig/tbox_group/testcase:", "  gcc-12/x86_64-rhel/lkp-box/hackbench",
           "", "commit:", '  5a1b2c3d4e ("base")', '  9f8e7d6c5b ("tested")', "",
           "5a1b2c3d4e6f7a8b 9f8e7d6c5b4a3928", "---------------- ----------------",
           "         %stddev     %change         %stddev", "             \\          |     \\"]
    for row in range(lines - len(out)):
        a = rng.randint(1000, 99999)
        b = round(a * (1 + rng.uniform(-0.2, 0.2)))
        out.append(f"  {a:>10} \u00b1  {rng.randint(1, 9)}%  {(b - a) / a * 100:+7.1f}%  "
                   f"{b:>10}        perf-stat.metric{row}")
    return "\n".join(out) + "\n"


def repeated(case: str, lines: int) -> str:
    """A real output joined to itself until it has about `lines` lines."""
    with open(REAL / case / "output.txt", encoding="utf-8", newline="") as handle:
        one = handle.read()
    return one * max(1, lines // max(1, one.count("\n")))


def lines_per_second(text: str, repeat: int = 3) -> tuple[float, str]:
    best, name = float("inf"), ""
    for _ in range(repeat):
        started = time.perf_counter()
        result = parse_lines(io.StringIO(text, newline=""))
        best, name = min(best, time.perf_counter() - started), result.format
    return text.count("\n") / best, name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=500_000)
    args = parser.parse_args()
    rng = random.Random(1)
    reference, _ = lines_per_second(loops_time(args.lines, rng))
    print(f"reference loops-time: {reference:,.0f} lines/s")
    for label, make in (("per-kernel sweep", per_kernel_sweep), ("sweep table", sweep_table),
                        ("kernel table", kernel_table), ("mmtests tables", mmtests_tables),
                        ("robot report", robot_report)):
        speed, name = lines_per_second(make(args.lines, rng))
        print(f"{label} ({name}): {speed:,.0f} lines/s, {speed / reference:.2f} x reference")
    for case in TOOLS:
        speed, name = lines_per_second(repeated(case, args.lines))
        print(f"{case} ({name}): {speed:,.0f} lines/s, {speed / reference:.2f} x reference")


if __name__ == "__main__":
    main()

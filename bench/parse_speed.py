"""Parsing speed of the block layouts against the plainest line format, in the same run.

    .venv/bin/python bench/parse_speed.py [--lines 500000]

Parses a per-kernel sweep (kernel headings over `Loop to N: T ms` lines, read by results-file
with its unassigned-block bookkeeping), a sweep table and a kernel table, each of about the same
number of lines and result sets (repeats of a few dozen setups, as real pastes are), and
`N loops time T ms` lines (loops-time, the simplest grammar) as the
reference. Prints lines per second and the ratio to the reference; no pass/fail.
"""

import argparse
import io
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.parsers import parse_lines  # noqa: E402

LOOPS = ["10k", "100k", "1M", "2M", "10M", "40M"]


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
                        ("kernel table", kernel_table)):
        speed, name = lines_per_second(make(args.lines, rng))
        print(f"{label} ({name}): {speed:,.0f} lines/s, {speed / reference:.2f} x reference")


if __name__ == "__main__":
    main()

"""Regression detection: speed at scale, the incremental task, precision and recall.

    .venv/bin/python bench/regression_detect.py [--series 10000] [--per-cell 200]
        [--part all|speed|accuracy|incremental]

speed       detection over N series of 20 kernels x 5 repeats (in memory), total and per series,
            against a plain numpy mean per kernel over the same arrays, measured in the same run.
accuracy    precision and recall on generated series with known change points, by change size
            and CV (1-10%), 20 kernels x 5 repeats. A finding counts as right when it is at the
            true change ("exact") or one kernel off ("+-1"); printed both ways.
            Target (issue 14): precision >= 0.9 and recall >= 0.8 for changes >= 10%.
incremental a database of 1,000,000 samples (10,000 series x 20 kernels x 5 repeats, PostgreSQL,
            DATABASE_URL default postgres://postgres@127.0.0.1:5432/sb_i14_detect_bench, created
            when missing); one new run stored with run_create, then the detection task for it,
            against the time run_create took for the same run; checks that only its series
            was touched.
bounds      one series each of 10^3, 10^5 and 10^7 samples (--sizes; 20 kernels, +10% from
            kernel 12, CV 3%) in the same database: the detection task for the whole series,
            each in a fresh process, its time and how much it raised the process's peak
            memory, against PostgreSQL reading all of the series' values once (same process).
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from regressions.detect import detect  # noqa: E402

KERNELS, REPEATS = 20, 5


def make_series(rng, *, cv: float, size: float, changes: int, kernels=KERNELS, repeats=REPEATS):
    """Levels stepping by +-size at `changes` kernels (at least 3 kernels apart, 2 from the
    ends), lognormal-ish noise of the given CV. Returns (groups, true change indices)."""
    points: list[int] = []
    while len(points) < changes:
        candidate = int(rng.integers(2, kernels - 1))
        if all(abs(candidate - p) >= 3 for p in points):
            points.append(candidate)
    level = np.full(kernels, 1000.0)
    for point in points:
        level[point:] *= 1 + size * rng.choice([-1, 1])
    groups = [rng.normal(value, cv * value, repeats) for value in level]
    return groups, set(points)


def part_speed(count: int) -> None:
    rng = np.random.default_rng(7)
    data = [make_series(rng, cv=rng.uniform(0.01, 0.10), size=rng.choice([0.05, 0.1, 0.2]),
                        changes=int(rng.integers(0, 3)))[0] for _ in range(count)]
    detect(data[0])  # import scipy and warm caches outside the timing
    started = time.perf_counter()
    found = sum(len(detect(groups)) for groups in data)
    elapsed = time.perf_counter() - started
    started = time.perf_counter()
    for groups in data:
        [group.mean() for group in groups]
    reference = time.perf_counter() - started
    print(f"speed: {count} series x {KERNELS} kernels x {REPEATS} repeats: "
          f"{elapsed:.2f} s total, {elapsed / count * 1e3:.3f} ms per series, {found} change "
          f"points; numpy mean per kernel over the same data {reference:.3f} s "
          f"(detection = {elapsed / reference:.0f}x the plain mean)")


def _score(found: set, truth: set, tolerance: int) -> tuple[int, int, int]:
    hits = {f for f in found if any(abs(f - t) <= tolerance for t in truth)}
    caught = {t for t in truth if any(abs(f - t) <= tolerance for f in found)}
    return len(hits), len(found) - len(hits), len(truth) - len(caught)


def part_accuracy(per_cell: int) -> None:
    """Per CV: `per_cell` series with no change, and `per_cell` series per change size with
    one or two changes. A cell's precision counts the findings in its own series; the pooled
    figure for changes >= 10% also counts every finding in the no-change series as false."""
    rng = np.random.default_rng(11)
    sizes = [0.02, 0.05, 0.10, 0.20, 0.50]
    print(f"accuracy: {KERNELS} kernels x {REPEATS} repeats; per CV {per_cell} series with no "
          f"change and {per_cell} per change size (1-2 changes each)")
    print(f"{'cv':>5} {'change':>7} | {'precision':>9} {'recall':>6} (exact) | "
          f"{'precision':>9} {'recall':>6} (+-1 kernel)")
    pooled = {0: np.zeros(3), 1: np.zeros(3)}
    for cv in (0.01, 0.02, 0.05, 0.10):
        quiet = sum(len(detect(make_series(rng, cv=cv, size=0, changes=0)[0]))
                    for _ in range(per_cell))
        for tolerance in (0, 1):
            pooled[tolerance][1] += quiet
        for size in sizes:
            totals = {0: np.zeros(3), 1: np.zeros(3)}
            for _ in range(per_cell):
                groups, truth = make_series(rng, cv=cv, size=size,
                                            changes=int(rng.integers(1, 3)))
                found = {point.index for point in detect(groups)}
                for tolerance in (0, 1):
                    totals[tolerance] += _score(found, truth, tolerance)
            for tolerance in (0, 1):
                if size >= 0.10:
                    pooled[tolerance] += totals[tolerance]
            print(f"{cv:>5.0%} {size:>7.0%} | " + " | ".join(
                f"{_precision(totals[t]):>9.3f} {_recall(totals[t]):>6.3f}" for t in (0, 1)))
        print(f"{cv:>5.0%} {'none':>7} | {quiet} finding(s) in {per_cell} series without a "
              "change")
    for tolerance, label in ((0, "exact"), (1, "+-1 kernel")):
        totals = pooled[tolerance]
        print(f"changes >= 10%, CV 1-10%, {label}: precision {_precision(totals):.3f}, "
              f"recall {_recall(totals):.3f} (target >= 0.9 and >= 0.8)")


def _precision(totals) -> float:
    hits, false, _ = totals
    return hits / (hits + false) if hits + false else 1.0


def _recall(totals) -> float:
    hits, _, missed = totals
    return hits / (hits + missed) if hits + missed else 1.0


def _database_env() -> None:
    os.environ.setdefault("DATABASE_URL",
                          "postgres://postgres@127.0.0.1:5432/sb_i14_detect_bench")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only")


def part_incremental(series_count: int) -> None:
    _database_env()
    from bench.regression_db import fill, one_run_incremental

    fill(series_count)
    one_run_incremental()


def part_bounds(sizes: list[int]) -> None:
    """Fill in one process, measure each size in a fresh one (peak memory is per process)."""
    import subprocess

    _database_env()
    for size in sorted({1000, *sizes}):  # 10^3 also warms the measuring processes up
        subprocess.run([sys.executable, __file__, "--part", "bounds-fill", "--size",
                        str(size)], check=True)
    for size in sizes:
        subprocess.run([sys.executable, __file__, "--part", "bounds-measure", "--size",
                        str(size)], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=10_000)
    parser.add_argument("--per-cell", type=int, default=200)
    parser.add_argument("--part", default="all", choices=[
        "all", "speed", "accuracy", "incremental", "bounds", "bounds-fill", "bounds-measure"])
    parser.add_argument("--sizes", default="1000,100000,10000000",
                        help="samples per series for --part bounds")
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part in ("bounds-fill", "bounds-measure"):
        _database_env()
        from bench.regression_db import bounds_fill, bounds_measure

        (bounds_fill if args.part == "bounds-fill" else bounds_measure)(args.size)
        return
    if args.part in ("all", "speed"):
        part_speed(args.series)
    if args.part in ("all", "accuracy"):
        part_accuracy(args.per_cell)
    if args.part in ("all", "incremental"):
        part_incremental(args.series)
    if args.part in ("all", "bounds"):
        part_bounds([int(size) for size in args.sizes.split(",")])


if __name__ == "__main__":
    main()

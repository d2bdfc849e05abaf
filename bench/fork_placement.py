"""Where each forked child was placed, and what it cost: per trace, the children of each class
(schedtrace.forks: on an idle CPU, on the parent's CPU while another CPU was idle, on the
parent's CPU while no other CPU was idle, on another CPU that was not idle, unknown), with the
wait from each child's sched_wakeup_new to its first switch-in (median, max, total) and which
of the parent's children (1 = its first fork) the class holds.

Run from the repository root:
  .venv/bin/python bench/fork_placement.py [TRACE ...]        (default: the fork_placement
                                                              fixtures in tests/fixtures/traces)
  .venv/bin/python bench/fork_placement.py --record 3 [--out DIR]

--record N (root, tracefs mounted or mountable) builds threadtest from harness/src with
`gcc -O2 -Wall -pthread` into a temporary folder, records `threadtest -n 500 -l 10k` N times
through a private tracefs instance (the events and buffer of the fixtures' record.sh), keeps
the traces in --out (default: a temporary folder, named at the end) and prints their table.
Without root or tracefs it refuses: one line, exit 2.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "harness"))

import schedbench  # noqa: E402

from schedtrace.forks import CLASSES, fork_placements  # noqa: E402

FIXTURES = sorted((ROOT / "tests" / "fixtures" / "traces" / "fork_placement").glob("*.trace.gz"))
COMMAND = ("-n", "500", "-l", "10k")
INSTANCE = f"sb_fork_placement_{os.getpid()}"
BUFFER_KB = 8192


class Refused(Exception):
    """What --record cannot do here, in one line."""


def positions(placements):
    """Each placement's position among its parent's children (1 = the parent's first): a
    number for the parent that forked most (the benchmark), `comm:n` for the others."""
    counts: dict[int, int] = {}
    for placed in placements:
        counts[placed.parent_pid] = counts.get(placed.parent_pid, 0) + 1
    main = max(counts, key=counts.__getitem__) if counts else None
    seen: dict[int, int] = {}
    named = []
    for placed in placements:
        seen[placed.parent_pid] = seen.get(placed.parent_pid, 0) + 1
        ordinal = str(seen[placed.parent_pid])
        named.append(ordinal if placed.parent_pid == main else f"{placed.parent_comm}:{ordinal}")
    return named


def table(path):
    """The per-class lines of one trace."""
    stream, found = fork_placements(path)
    named = positions(found.placements)
    rows = [f"{path}: {stream.format}, {stream.lines:,} lines, {stream.events:,} events, "
            f"{stream.skipped:,} other tracepoints, {stream.lost_events:,} lost; "
            f"{found.wakeups_new} wakeup_new, {found.without_fork} without their fork",
            f"  {'class':<17} {'count':>5} {'timed':>5} {'median ms':>9} {'max ms':>8} "
            f"{'total ms':>9}  children (1 = the parent's first)"]
    summary = found.summary()
    for name in CLASSES:
        row = summary[name]
        if not row["count"]:
            continue
        which = [n for n, p in zip(named, found.placements, strict=True) if p.placement == name]
        rows.append(f"  {name:<17} {row['count']:>5} {row['timed']:>5} "
                    f"{_ms(row['median_ms']):>9} {_ms(row['max_ms']):>8} "
                    f"{_ms(row['total_ms']):>9}  {_children(which)}")
    rows.extend(f"  warning: {said}" for said in stream.warnings)
    return rows


def _ms(value):
    return "-" if value is None else f"{value:.3f}"


def _children(named):
    """The children's positions, all of them when few, else the first and the last."""
    if len(named) <= 12:
        return ",".join(named)
    mains = [name for name in named if name.isdigit()]
    others = [name for name in named if not name.isdigit()]
    shown = f"{mains[0]}..{mains[-1]}" if mains else ""
    return ", ".join(filter(None, [shown, *others[:3], "..." if len(others) > 3 else ""]))


def record(count, out=None):
    """`threadtest -n 500 -l 10k` recorded `count` times into `out` (None: a new temporary
    folder, made once recording can start); the trace paths."""
    if os.geteuid() != 0:
        raise Refused("--record needs root (tracefs instances)")
    try:
        tracing, _ = schedbench.find_tracefs()
    except schedbench.TraceUnavailable as exc:
        raise Refused(f"--record needs tracefs: {exc}") from None
    if not os.path.isdir(os.path.join(tracing, "instances")):
        raise Refused(f"--record needs tracefs instances: none under {tracing}")
    compiler = shutil.which("gcc")
    if compiler is None:
        raise Refused("--record needs gcc to build harness/src/threadtest.c")
    out = out or Path(tempfile.mkdtemp(prefix="fork_placement_"))
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    with tempfile.TemporaryDirectory(prefix="fork_placement_bin_") as build:
        binary = os.path.join(build, "threadtest")
        subprocess.run([compiler, "-O2", "-Wall", "-pthread", "-o", binary,
                        str(ROOT / "harness" / "src" / "threadtest.c")], check=True)
        for run in range(1, count + 1):
            path = out / f"threadtest_10k_{run}.trace"
            load = os.getloadavg()[0]
            print(f"recording {run}/{count} (load average {load:.2f}) ...", file=sys.stderr,
                  flush=True)
            printed = record_one(tracing, [binary, *COMMAND], path)
            print(f"recorded {run}/{count}: {path} (threadtest printed: {printed})",
                  file=sys.stderr, flush=True)
            paths.append(path)
    return paths


def record_one(tracing, command, path):
    """One run of `command` through a private instance, as record.sh does; what it printed."""
    instance = os.path.join(tracing, "instances", INSTANCE)
    try:
        os.mkdir(instance)
    except OSError as exc:
        raise Refused(f"--record cannot make a tracefs instance: {exc}") from None
    try:
        schedbench.write_tracefs(os.path.join(instance, "buffer_size_kb"), str(BUFFER_KB))
        for event in schedbench.TRACE_EVENTS:
            schedbench.write_tracefs(os.path.join(instance, "events", "sched", event, "enable"),
                                     "1")
        schedbench.write_tracefs(os.path.join(instance, "tracing_on"), "1")
        try:
            done = subprocess.run(command, capture_output=True, text=True, check=True)
        finally:
            schedbench.write_tracefs(os.path.join(instance, "tracing_on"), "0")
        with open(os.path.join(instance, "trace"), "rb") as trace, open(path, "wb") as kept:
            shutil.copyfileobj(trace, kept)
    finally:
        os.rmdir(instance)
    return done.stdout.strip()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="*", type=Path, help="trace files (default: fixtures)")
    parser.add_argument("--record", type=int, metavar="N",
                        help="record threadtest -n 500 -l 10k N times first (root)")
    parser.add_argument("--out", type=Path, help="where --record keeps its traces")
    args = parser.parse_args(argv)
    if args.record is not None and args.record < 1:
        parser.error("--record takes a count of at least 1")
    traces = args.traces
    if args.record:
        try:
            traces = traces + record(args.record, args.out)
        except Refused as exc:
            print(f"fork_placement: {exc}", file=sys.stderr)
            return 2
    for path in traces or FIXTURES:
        print("\n".join(table(path)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

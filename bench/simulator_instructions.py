"""Simulator cost in machine instructions per event (valgrind's callgrind), against the bare
heapq loop of bench/simulator_speed.py counted the same way.

Run from the repository root:
    .venv/bin/python bench/simulator_instructions.py [--messages 150] [--kernels K1,K2]
    .venv/bin/python bench/simulator_instructions.py --in-loop [--messages 2000] [--kernels ...]

On a shared virtual machine the CPU time of the same code moves by a fifth or more between runs
(docs/simulator.md, Speed); an instruction count does not. Each figure is the difference between
two runs of one program at two sizes, so interpreter start-up and imports cancel out. Use it to
compare two versions of the code; simulator_speed.py measures the target. Instructions are not
time (cache misses cost nothing here), so the time ratio is lower than this one.

The chatroom is the speed case (10 rooms x 20 clients, 8 CPUs) at --messages (150: about a
tenth of a second of simulation natively, half a minute under callgrind per profile). Needs
valgrind; the simulator measured is whichever build `import simulator` picks.

--in-loop counts only inside the compiled Engine._event_loop (callgrind's --toggle-collect), one
run per profile, divided by its events: no start-up or set-up to cancel, so one size is enough
and the bench's own (2,000 messages) can be measured. Needs the compiled build.
"""

import argparse
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import simulator  # noqa: E402

BARE = """
import sys
sys.path.insert(0, {root!r})
from bench.simulator_speed import bare_loop_rate
bare_loop_rate({events}, runs=1)
"""
ENGINE_QUEUE = """
import sys
sys.path.insert(0, {root!r})
from simulator import eventq
eventq.bare_loop(eventq.new_queue(), {events})
"""
CHATROOM = """
import json, sys
sys.path.insert(0, {root!r})
import simulator
result = simulator.run({{"workload": "chatroom", "kernel": {kernel!r}, "cpus": 8,
                        "params": {{"rooms": 10, "clients": 20, "messages": {messages}}},
                        "max_events": 10**9}})
print(json.dumps(result["counters"]["events"]))
"""


EVENT_LOOP = "CPyDef_engine___Engine____event_loop"  # the compiled loop's C function


def instructions(code: str, only: str | None = None) -> tuple[int, str]:
    """(instructions executed, stdout) of `python -c code` under callgrind; with ``only``,
    those executed inside that C function (and what it calls)."""
    toggle = [f"--toggle-collect={only}"] if only else []
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *toggle,
         sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from callgrind:\n{proc.stderr[-2000:]}")
    return int(found.group(1)), proc.stdout


def per_event(make_code, small: int, large: int) -> tuple[float, int]:
    """Instructions per event between the two sizes, and the events of the large one."""
    counts = []
    for size in (small, large):
        count, out = instructions(make_code(size))
        counts.append((count, int(out) if out.strip() else size))
    (i_small, e_small), (i_large, e_large) = counts
    return (i_large - i_small) / (e_large - e_small), e_large


def in_loop(kernels: list[str], messages: int) -> None:
    """Instructions per event inside the compiled event loop, one run per profile."""
    if simulator._compiled.STATE.startswith("pure"):
        raise SystemExit("simulator_instructions --in-loop: the simulator is not compiled")
    for kernel in kernels:
        count, out = instructions(
            CHATROOM.format(root=str(ROOT), kernel=kernel, messages=messages), EVENT_LOOP)
        events = int(out)
        print(f"chatroom 10 x 20 x {messages}, 8 CPUs, {kernel:9}: {events} events, "
              f"{count / events:,.1f} instructions/event inside Engine._event_loop")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=150)
    parser.add_argument("--kernels", help="comma-separated profiles (default: every one)")
    parser.add_argument("--in-loop", action="store_true",
                        help="count inside the compiled event loop only (see the docstring)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("simulator_instructions: valgrind is not installed")
    kernels = args.kernels.split(",") if args.kernels else list(simulator.catalog()["kernels"])
    if args.in_loop:
        print(f"simulator {simulator.__version__} ({simulator._compiled.STATE}), instructions "
              "counted by callgrind inside the event loop")
        in_loop(kernels, args.messages)
        return
    print(f"simulator {simulator.__version__} ({simulator._compiled.STATE}), instructions "
          "counted by callgrind; each figure is the difference between two sizes")
    bare, _ = per_event(lambda n: BARE.format(root=str(ROOT), events=n), 10_000, 210_000)
    print(f"bare heapq loop (pop + push one follow-up): {bare:,.0f} instructions/event")
    own, _ = per_event(lambda n: ENGINE_QUEUE.format(root=str(ROOT), events=n), 10_000, 210_000)
    print(f"context: the same loop on the engine's own queue: {own:,.0f} instructions/event")
    for kernel in kernels:
        cost, events = per_event(
            lambda m, k=kernel: CHATROOM.format(root=str(ROOT), kernel=k, messages=m),
            1, args.messages)
        print(f"chatroom 10 x 20 x {args.messages}, 8 CPUs, {kernel:9}: {events} events, "
              f"{cost:,.0f} instructions/event = {bare / cost:.3f} of the bare loop "
              f"({own / cost:.3f} of it on the engine's queue)")


if __name__ == "__main__":
    main()

"""Autogroup in the trace replay (docs/simulator.md, "Autogroup"): each recorded session in its
own task group, the other programs' stand-ins in theirs, kernel threads in the root group."""

import gzip
import io
import json
import pathlib

import pytest

from simulator.cli import main
from simulator.program import nice_to_weight
from simulator.replay import (
    AUTOGROUP_SHARES,
    TaskTrace,
    read_trace,
    recorded_autogroup,
    replay,
    session_group,
    stand_in,
    wait_agreement,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUSY_BURN = ROOT / "tests" / "fixtures" / "traces" / "harness_busy" / "threadtest_burn.trace.gz"
HAND = (pathlib.Path(__file__).parent / "traces" / "hand.txt").read_text()
# The first lines of the busy-host recording: the benchmark's parent (pid 19999) and its
# first threads, with the other programs' placeholders taking both CPUs in between.
CUT_LINES = 400


@pytest.fixture(scope="module")
def busy_cut(tmp_path_factory):
    path = tmp_path_factory.mktemp("autogroup") / "busy_cut.txt"
    with gzip.open(BUSY_BURN, "rt") as f:
        lines = [next(f) for _ in range(CUT_LINES)]
    path.write_text("".join(lines))
    return str(path)


def with_header(tmp_path, header, compress=False):
    text = "# tracer: nop\n#\n" + header + HAND.split("\n", 1)[1]
    if compress:
        path = tmp_path / "hand.txt.gz"
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path = tmp_path / "hand.txt"
        path.write_text(text)
    return str(path)


def test_the_benchmark_forms_one_session_group(busy_cut):
    rebuild, _ = read_trace(busy_cut)
    assert len(rebuild.all) > 3 and rebuild.others  # the parent, its threads, the others
    # the harness forked the parent (its fork line names a placeholder): the session's root
    assert {session_group(t) for t in rebuild.all} == {"autogroup-19999"}


def test_forks_inherit_the_group_and_kernel_threads_stay_in_the_root():
    shell = TaskTrace(100, "bash")
    child = TaskTrace(101, "make", forked_by=shell)
    grandchild = TaskTrace(102, "cc1", forked_by=child)
    kthreadd = TaskTrace(2, "kthreadd")
    worker = TaskTrace(50, "kworker/0:1", forked_by=kthreadd)
    assert session_group(grandchild) == session_group(shell) == "autogroup-100"
    assert session_group(worker) is None and session_group(TaskTrace(9, "ksoftirqd/1")) is None
    assert session_group(TaskTrace(103, "other-program")) == "autogroup-103"


def test_stand_ins_weigh_as_their_sessions_group():
    grouped = stand_in(3, 1, 1_000_000, nice=-4, autogroup=True)
    assert (grouped.group, grouped.group_shares, grouped.nice, grouped.affinity) == (
        "autogroup-others-cpu1", nice_to_weight(-4), 0, (1,))
    flat = stand_in(3, 1, 1_000_000, nice=-4, autogroup=False)
    assert (flat.group_shares, flat.nice, flat.weight) == (0, -4, nice_to_weight(-4))
    assert AUTOGROUP_SHARES == 1024  # NICE_0_LOAD in the simulator's weight units


def test_autogroup_changes_a_benchmark_tasks_waits(busy_cut):
    waits = {}
    for autogroup in (True, False):
        result = replay(busy_cut, "6.6-eevdf", cpus=2, tunables={"noise_pct": 0},
                        autogroup=autogroup)
        assert result["params"]["autogroup"] is autogroup
        rows = wait_agreement(result, comms={"threadtest_burn"}, floor_ms=0.0)
        waits[autogroup] = {pid: replayed for pid, _comm, _rec, replayed, _ratio in rows}
    assert waits[True].keys() == waits[False].keys()
    # with groups, a thread queued behind its parent runs when the others' session preempts
    # the benchmark's group entity; flat, the others' wakeups do not reach it
    assert waits[True] != waits[False]


def test_the_recording_header_decides_the_default(tmp_path):
    note = "# recorded by schedbench.py 1.0.0; tasks outside the benchmark appear as x"
    for value, compress, expected in (("0", False, False), ("1", True, True)):
        (tmp_path / "hand.txt").unlink(missing_ok=True)
        path = with_header(tmp_path, f"{note}; sched_autogroup_enabled={value}\n", compress)
        assert recorded_autogroup(path) is expected
        result = replay(path, "6.6-eevdf", cpus=2, tunables={"noise_pct": 0})
        assert (result["params"]["autogroup"], result["params"]["autogroup_from"]) == (
            expected, "recording")
    old = with_header(tmp_path, note + "\n")  # recorded before the harness wrote it
    assert recorded_autogroup(old) is None
    result = replay(old, "6.6-eevdf", cpus=2, tunables={"noise_pct": 0})
    assert (result["params"]["autogroup"], result["params"]["autogroup_from"]) == (
        True, "default")
    result = replay(old, "6.6-eevdf", cpus=2, tunables={"noise_pct": 0}, autogroup=False)
    assert (result["params"]["autogroup"], result["params"]["autogroup_from"]) == (
        False, "option")


def test_cli_flag(tmp_path):
    path = with_header(tmp_path, "")
    for flag, expected in (("off", False), ("on", True)):
        out = io.StringIO()
        assert main(["replay", "--trace", path, "--kernel", "6.6-eevdf", "--cpus", "2",
                     "--autogroup", flag, "--format", "json"], out, io.StringIO()) == 0
        assert json.loads(out.getvalue())["params"]["autogroup"] is expected

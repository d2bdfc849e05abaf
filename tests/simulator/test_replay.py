"""`python -m simulator replay`: a workload rebuilt from a trace, run under any profile."""

import io
import json
import pathlib

import pytest

from simulator.cli import main
from simulator.errors import SimulatorError
from simulator.replay import replay

# A waits 2 ms of CPU, wakes B (asleep since it ran 1 ms), runs 1 ms more and exits; B then
# runs 3 ms and exits. C sleeps 5 ms on a timer (woken from idle) between two 1 ms bursts.
HAND = (pathlib.Path(__file__).parent / "traces" / "hand.txt").read_text()


@pytest.fixture()
def hand(tmp_path):
    path = tmp_path / "hand.txt"
    path.write_text(HAND)
    return str(path)


def tasks_by_comm(result):
    return {t["comm"]: t for t in result["tasks"]}


def test_replay_keeps_bursts_and_the_recorded_makespan(hand):
    result = replay(hand, "2.6.24", cpus=2, tunables={"noise_pct": 0})
    assert result["real"]["makespan_ms"] == pytest.approx(8.01)
    real = {t["comm"]: t for t in result["real"]["tasks"]}
    assert real["a"]["runtime_ms"] == pytest.approx(3.0)
    sim = tasks_by_comm(result)
    for comm, ms in (("a", 3.0), ("b", 4.0), ("c", 2.0)):
        assert sim[comm]["runtime_ms"] == pytest.approx(ms, rel=0.05), comm
    # c's timer sleep is time, not a dependency: 1 ms + 5 ms + 1 ms at the least
    assert result["makespan_ms"] >= 7.0
    assert set(result) >= {"simulator_version", "kernel", "metrics", "counters", "tasks",
                           "makespan_ms", "topology"}
    assert result["metrics"]["makespan_ms"] == [result["makespan_ms"]]


def test_a_wakeup_dependency_survives_another_schedule(hand):
    # On one CPU, b cannot start its second burst before a has run 2 ms of its own CPU
    # time, however the scheduler interleaves them: b waits, then runs its 3 ms.
    result = replay(hand, "2.4", cpus=1, tunables={"noise_pct": 0})
    sim = tasks_by_comm(result)
    assert sim["b"]["wakeups"] >= 2  # started, then woken by a's POST
    assert result["makespan_ms"] >= 3.0 + 4.0 + 2.0 - 0.01  # one CPU: every burst in turn


def test_replay_of_a_simulated_trace_comes_back_to_its_makespan(tmp_path):
    path = tmp_path / "sim.txt"
    out = io.StringIO()
    assert main(["run", "--workload", "threadtest", "--kernel", "2.6.24", "--param",
                 "iterations=30", "--param", "loops=200000", "--set", "noise_pct=0",
                 "--trace", str(path), "--trace-format", "ftrace", "--format", "json"],
                out, io.StringIO()) == 0
    result = replay(str(path), "2.6.24", cpus=2, tunables={"noise_pct": 0})
    assert result["makespan_ms"] == pytest.approx(result["real"]["makespan_ms"], rel=0.1)
    assert len(result["tasks"]) == 31


@pytest.mark.parametrize("content,needle", [
    (None, "No such file"),
    ("hello world\n", "line 1"),
    ("# tracer: nop\n", "not a scheduler trace"),
])
def test_bad_input_is_exit_2_and_one_line(tmp_path, content, needle):
    path = tmp_path / "t.txt"
    if content is not None:
        path.write_text(content)
    err = io.StringIO()
    status = main(["replay", "--trace", str(path), "--kernel", "2.6.24"], io.StringIO(), err)
    assert status == 2
    assert err.getvalue().count("\n") == 1 and needle in err.getvalue()


def test_unknown_kernel_is_exit_2(hand):
    err = io.StringIO()
    assert main(["replay", "--trace", hand, "--kernel", "9.9"], io.StringIO(), err) == 2
    assert "9.9" in err.getvalue()


def test_cli_json_has_the_contract_shape(hand):
    out = io.StringIO()
    assert main(["replay", "--trace", hand, "--kernel", "6.6-eevdf", "--cpus", "2",
                 "--format", "json"], out, io.StringIO()) == 0
    result = json.loads(out.getvalue())
    keys = {"pid", "comm", "runtime_ms", "switches", "wakeups", "migrations", "wait_sum_ms",
            "wait_max_ms", "wait_avg_ms"}
    assert result["tasks"] and all(set(t) == keys for t in result["tasks"])
    assert isinstance(result["makespan_ms"], float)


def test_replay_errors_are_simulator_errors(hand):
    with pytest.raises(SimulatorError):
        replay(hand, "6.6-eevdf", cpus=0)


def test_a_reused_pid_is_a_second_task():
    path = pathlib.Path(__file__).parent / "traces" / "reuse.txt"
    result = replay(str(path), "2.6.24", cpus=1, tunables={"noise_pct": 0})
    sim = tasks_by_comm(result)
    assert set(sim) == {"a", "b", "p"}
    assert sim["a"]["runtime_ms"] == pytest.approx(1.0, rel=0.05)
    assert sim["b"]["runtime_ms"] == pytest.approx(2.0, rel=0.05)
    # one CPU: a, p (3 ms before the fork, 1 after) and b run in turn
    assert result["makespan_ms"] >= 1.0 + 4.0 + 2.0 - 0.01

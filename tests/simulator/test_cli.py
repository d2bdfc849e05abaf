"""`python -m simulator` list / run / sweep, per the Simulator CLI contract."""

import json
import re
import subprocess
import sys

import pytest

import simulator
from simulator.cli import main


def cli(*args):
    proc = subprocess.run([sys.executable, "-m", "simulator", *args], capture_output=True,
                          text=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def test_list_json_is_the_catalog():
    code, out, err = cli("list", "--format", "json")
    assert code == 0 and not err
    assert json.loads(out) == json.loads(json.dumps(simulator.catalog()))


def test_list_text_shows_params_and_tunables():
    code, out, _ = cli("list")
    assert code == 0
    assert "threadtest" in out and "--param loops=" in out and "--set sched_compat_yield" in out


def test_run_text_prints_what_threadtest_prints():
    code, out, _ = cli("run", "--workload", "threadtest", "--kernel", "2.6.22", "--param",
                       "iterations=5", "--param", "loops=100000", "--repeat", "2")
    assert code == 0
    blocks = out.strip().split("\n\n")
    assert len(blocks) == 2 and all(re.fullmatch(r"time \d+ ms", b) for b in blocks)


def test_run_json_contract():
    code, out, _ = cli("run", "--workload", "threadtest-burn", "--kernel", "2.6.24", "--param",
                       "iterations=3", "--param", "burn_us=500", "--set", "HZ=1000",
                       "--topology", "1x2x2", "--seed", "7", "--format", "json")
    assert code == 0
    result = json.loads(out)
    assert result["topology"] == "1x2x2" and result["seed"] == 7
    assert result["tunables"]["HZ"] == 1000
    assert set(result["metrics"]) == {"time_us", "work_us", "wait_us", "idx"}


def test_sweep_prints_one_json_line_per_point():
    code, out, _ = cli("sweep", "--workload", "threadtest", "--kernel", "2.6.24", "--param",
                       "iterations=3", "--sweep", "loops=10000,100000",
                       "--sweep", "kernel=2.6.22,2.6.24")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(r["params"]["loops"], r["kernel"]) for r in lines] == [
        (10000, "2.6.22"), (10000, "2.6.24"), (100000, "2.6.22"), (100000, "2.6.24")]


@pytest.mark.parametrize("args, needle", [
    (["run", "--workload", "nope", "--kernel", "2.6.24"], "threadtest"),
    (["run", "--workload", "threadtest", "--kernel", "2.6.99"], "2.6.24"),
    (["run", "--workload", "threadtest", "--kernel", "2.6.24", "--param", "loops=-1"], "-1"),
    (["run", "--workload", "threadtest", "--kernel", "2.6.24", "--cpus", "0"], "0"),
    (["run", "--workload", "threadtest", "--kernel", "2.6.24", "--topology", "x"], "x"),
    (["run", "--workload", "threadtest", "--kernel", "2.6.24", "--set", "bogus=1"], "HZ"),
    (["run", "--workload", "chatroom", "--kernel", "2.6.24", "--max-events", "100"],
     "event budget"),
    (["frobnicate"], "invalid choice"),
    (["run", "--kernel", "2.6.24"], "--workload"),
])
def test_bad_input_is_one_line_on_stderr(args, needle):
    code, out, err = cli(*args)
    assert code != 0 and not out
    assert err.count("\n") == 1 and "Traceback" not in err
    assert needle in err


def test_trace_file_is_written(tmp_path):
    trace = tmp_path / "trace.txt"
    with open(tmp_path / "out.txt", "w") as out:
        assert main(["run", "--workload", "threadtest", "--kernel", "2.6.24", "--param",
                     "iterations=2", "--trace", str(trace)], out=out) == 0
    assert "child runs first" in trace.read_text()

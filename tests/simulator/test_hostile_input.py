"""Hostile CLI inputs: each ends with exit status 2 and one line on stderr, quickly.

Every case ran into a traceback, a silent acceptance or a run of minutes before."""

import json
import subprocess
import sys

import pytest


def cli(*args, timeout=30):
    proc = subprocess.run([sys.executable, "-m", "simulator", *args], capture_output=True,
                          text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def rtapp_task(**fields):
    return json.dumps({"global": {"duration": 0.1},
                       "tasks": {"t": {"loop": -1, "run": 100, "sleep": 100, **fields}}})


def nested(depth):
    return '{"tasks": {"t": ' + "[" * depth + "]" * depth + "}}"


HOSTILE = {
    "periodic nan": (["--workload", "periodic", "--param", "tasks=nan:1"], "nan:1"),
    "periodic inf": (["--workload", "periodic", "--param", "tasks=inf:1"], "inf:1"),
    "rtapp run abc": (["--workload", "rtapp", "--param",
                       "config=" + json.dumps({"global": {"duration": 0.1},
                                               "tasks": {"t": {"run": "abc"}}})], "t.run"),
    "rtapp NaN": (["--workload", "rtapp", "--param",
                   'config={"global": {"duration": 0.1}, "tasks": {"t": {"run": NaN}}}'],
                  "t.run"),
    "rtapp 1e400": (["--workload", "rtapp", "--param",
                     'config={"global": {"duration": 0.1}, "tasks": {"t": {"run": 1e400}}}'],
                    "t.run"),
    "rtapp cpus [99]": (["--workload", "rtapp", "--param",
                         "config=" + rtapp_task(cpus=[99])], "t.cpus"),
    "rtapp cpus 5": (["--workload", "rtapp", "--param", "config=" + rtapp_task(cpus=5)],
                     "t.cpus"),
    "rtapp instance x": (["--workload", "rtapp", "--param",
                          "config=" + rtapp_task(instance="x")], "t.instance"),
    "rtapp phases list": (["--workload", "rtapp", "--param",
                           "config=" + rtapp_task(phases=[{"run": 1}])], "t.phases"),
    "rtapp global list": (["--workload", "rtapp", "--param",
                           "config=" + json.dumps({"global": [1], "tasks": {"t": {"run": 1}}})],
                          "global"),
    "rtapp timer period text": (["--workload", "rtapp", "--param",
                                 "config=" + rtapp_task(timer={"period": "soon"})],
                                "timer.period"),
    "rtapp nice text": (["--workload", "rtapp", "--param", "config=" + rtapp_task(nice="low")],
                        "t.nice"),
    "rtapp 50000-deep nesting": (["--workload", "rtapp", "--param", "config=" + nested(50_000)],
                                 "nested"),
    "rtapp instance -5": (["--workload", "rtapp", "--param",
                           "config=" + rtapp_task(instance=-5)], "t.instance"),
    "periodic 1 ns period": (["--workload", "periodic", "--param", "tasks=0.000001:0.000001"],
                             "event budget"),
    "rtapp 10M instances": (["--workload", "rtapp", "--param",
                             "config=" + rtapp_task(instance=10_000_000)], "instance"),
    "vmstat every picosecond": (["--workload", "threadtest", "--set",
                                 "vmstat_interval_ms=0.000001"], "vmstat_interval_ms"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_exits_2_with_one_line(name):
    args, needle = HOSTILE[name]
    code, out, err = cli("run", "--kernel", "3.3", *args)
    assert code == 2, (code, err[-500:])
    assert not out
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err
    assert needle in err, err


def test_vmstat_interval_refused_against_the_budget_even_when_allowed():
    """1 us samples over a 10 s threadtest: 10^7 samples beyond a 10^6 budget, refused at once."""
    code, _out, err = cli("run", "--kernel", "2.6.24", "--workload", "threadtest",
                          "--param", "loops=10000000", "--param", "iterations=300",
                          "--set", "vmstat_interval_ms=0.001", "--max-events", "1000000",
                          timeout=10)
    assert code == 2 and "event budget" in err


def test_machine_file_sets_topology_and_costs(tmp_path):
    path = tmp_path / "machine.json"
    path.write_text(json.dumps({"machine": {"sockets": 1, "cores_per_socket": 4,
                                            "threads_per_core": 1},
                                "calibration": {"loop_ns": 1.25, "loop_memory_ns": 2.0,
                                                "virtualised": True,
                                                "vcpu_wake_us": 30.0}}))
    code, out, err = cli("run", "--kernel", "6.6-eevdf", "--workload", "threadtest",
                         "--param", "iterations=3", "--machine", str(path), "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    assert result["topology"] == "1x4x1" and result["tunables"]["loop_ns"] == 1.25
    assert result["tunables"]["idle_wake_ns"] == 33_000

"""`python -m simulator run/sweep --machine FILE.json`: calibration and topology from a file."""

import io
import json

import pytest

import simulator
from simulator.cli import main
from simulator.machine import MachineModel

CALIBRATE_JSON = {
    "machine": {"name": "box", "cpu_model": "x", "arch": "x86_64", "sockets": 1,
                "cores_per_socket": 4, "threads_per_core": 2, "caches": {}, "memory_mb": 1024,
                "virtualization": "kvm"},
    "kernel": "6.8.0",
    "measured_at": "2026-11-30T18:00:00Z",
    "calibration": {"loop_ns": 0.5, "loop_memory_ns": 1.25, "thread_create_join_us": 30.0,
                    "wakeup_remote_us": 40.0,
                    "wakeup_local_us": 3.0, "context_switch_us": 1.5, "virtualised": True,
                    "idle_exit_us": 0.0, "ipi_us": 20.0, "vcpu_wake_us": 5.0,
                    "contention": 0.05},
}
RUN = ["run", "--workload", "threadtest", "--kernel", "2.6.24", "--param", "loops=1000",
       "--param", "iterations=3", "--format", "json"]


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    return main(list(args), out=out, err=err), out.getvalue(), err.getvalue()


def machine_file(tmp_path, data=None, text=None):
    path = tmp_path / "machine.json"
    path.write_text(text if text is not None else json.dumps(data or CALIBRATE_JSON))
    return str(path)


def test_topology_comes_from_the_machine(tmp_path):
    status, out, err = cli(*RUN, "--machine", machine_file(tmp_path))
    assert status == 0, err
    assert json.loads(out)["topology"] == "1x4x2"


def test_cpus_or_topology_given_wins_over_the_machine(tmp_path):
    path = machine_file(tmp_path)
    assert json.loads(cli(*RUN, "--machine", path, "--cpus", "3")[1])["topology"] == "1x3x1"
    assert json.loads(cli(*RUN, "--machine", path, "--topology", "2x1x1")[1])["topology"] \
        == "2x1x1"


def test_the_calibration_reaches_the_spec(tmp_path):
    spec = {"workload": "threadtest", "kernel": "2.6.24",
            "machine": CALIBRATE_JSON["calibration"]}
    norm = simulator.validate(spec)
    assert MachineModel(**norm["machine"]) == MachineModel.from_calibration(
        CALIBRATE_JSON["calibration"])
    # The whole calibrate JSON is accepted as well as its calibration part.
    assert simulator.validate({**spec, "machine": CALIBRATE_JSON})["machine"] == norm["machine"]


def test_sweep_takes_the_machine_too(tmp_path):
    status, out, err = cli("sweep", "--workload", "threadtest", "--kernel", "2.6.24",
                           "--param", "iterations=2", "--sweep", "loops=100,200",
                           "--machine", machine_file(tmp_path))
    assert status == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["topology"] for line in lines] == ["1x4x2", "1x4x2"]


@pytest.mark.parametrize("data,text,needle", [
    (None, "{not json", "not valid JSON"),
    (None, "[" * 50_000, "not valid JSON"),
    ({"machine": {}}, None, "no \"calibration\" object"),
    ({"calibration": {"loop_ns": 1}}, None, "gives no topology"),
    ({**CALIBRATE_JSON, "calibration": {"loop_ns": "fast"}}, None, "loop_ns"),
    ({**CALIBRATE_JSON, "calibration": {"ipi_us": -3}}, None, "ipi_us"),
    ({**CALIBRATE_JSON, "calibration": {"virtualised": "yes"}}, None, "virtualised"),
])
def test_bad_machine_files_exit_2_with_one_line(tmp_path, data, text, needle):
    status, out, err = cli(*RUN, "--machine", machine_file(tmp_path, data, text))
    assert status == 2 and out == ""
    assert needle in err and err.count("\n") == 1


@pytest.mark.parametrize("text", ["", "\n  \n"])
def test_an_empty_machine_file_says_it_is_empty(tmp_path, text):
    # What `schedbench.py calibrate --dry-run > cal.json` leaves when calibrate refuses.
    status, out, err = cli(*RUN, "--machine", machine_file(tmp_path, text=text))
    assert status == 2 and out == ""
    assert "the file is empty" in err and "refused" in err and err.count("\n") == 1
    assert "not valid JSON" not in err


def test_missing_machine_file(tmp_path):
    status, _, err = cli(*RUN, "--machine", str(tmp_path / "nope.json"))
    assert status == 2 and "nope.json" in err


def _time(calibration, counter, loops=100_000_000):
    # pinned (parent on CPU 0, child on CPU 1): the loops' price, not 2.6.24's balancing delays
    return simulator.run({"workload": "threadtest", "kernel": "2.6.24", "cpus": 2,
                          "params": {"iterations": 2, "loops": loops, "counter": counter,
                                     "pin": True},
                          "tunables": {"noise_pct": 0}, "machine": calibration})


def test_the_counter_picks_the_loop_figure():
    """A counter in memory is priced at loop_memory_ns, one in a register at loop_ns: with the
    memory loop 2.5x slower, the loops (the bulk of the run) take about 2.5x longer."""
    cal = CALIBRATE_JSON["calibration"]
    memory, register = _time(cal, "memory"), _time(cal, "register")
    assert memory["tunables"]["loop_memory_ns"] == 1.25
    assert register["tunables"]["loop_ns"] == 0.5
    ratio = memory["metrics"]["time_ms"][0] / register["metrics"]["time_ms"][0]
    assert 2.2 < ratio < 2.6, ratio


def test_a_calibration_without_the_memory_loop_is_refused_for_a_memory_counter():
    old = {k: v for k, v in CALIBRATE_JSON["calibration"].items() if k != "loop_memory_ns"}
    with pytest.raises(simulator.SimulatorError, match="loop_memory_ns"):
        _time(old, "memory")
    assert _time(old, "register")["metrics"]["time_ms"][0] > 0  # the register loop is known
    given = simulator.run({"workload": "threadtest", "kernel": "2.6.24", "machine": old,
                           "params": {"iterations": 2, "loops": 1000},
                           "tunables": {"loop_memory_ns": 2.0}})
    assert given["tunables"]["loop_memory_ns"] == 2.0


def test_a_noisy_calibration_marks_every_result(tmp_path):
    noisy = {**CALIBRATE_JSON, "calibration": {**CALIBRATE_JSON["calibration"], "noisy": True}}
    status, out, err = cli(*RUN, "--machine", machine_file(tmp_path, noisy))
    assert status == 0 and json.loads(out)["machine"]["noisy"] is True
    assert "marked noisy" in err
    status, out, err = cli(*RUN, "--machine", machine_file(tmp_path))
    assert json.loads(out)["machine"]["noisy"] is False and err == ""
    with pytest.raises(simulator.SimulatorError, match="noisy"):
        simulator.validate({"workload": "threadtest", "kernel": "2.6.24",
                            "machine": {"noisy": "yes"}})

"""`schedbench.py calibrate`: real micro-measurements on this machine, and how they become the
calibration object (the machine-model half of docs/calibration.md)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from simulator.errors import InvalidValueError
from simulator.machine import MachineModel

from .conftest import SCRIPT

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
FIELDS = ("loop_ns", "loop_memory_ns", "thread_create_join_us", "wakeup_remote_us",
          "wakeup_local_us", "context_switch_us", "virtualised", "idle_exit_us", "ipi_us",
          "vcpu_wake_us", "halt_poll_us", "contention", "noisy")


def harness(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=timeout, env=env, check=False)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """One real calibration of this machine, kept short (--scale 0.1, 3 repeats), kept even
    when the machine is busy (marked noisy then: tests/harness/test_calibrate_load.py)."""
    out = tmp_path_factory.mktemp("calbin")
    built = harness("build", "--out", str(out))
    assert built.returncode == 0, built.stderr
    result = harness("calibrate", "--dry-run", "--bin", str(out), "--scale", "0.1",
                     "--repeat", "3", "--accept-noisy")
    assert result.returncode == 0, result.stderr
    return result


@needs_gcc
def test_dry_run_prints_only_the_submission_json(measured):
    payload = json.loads(measured.stdout)  # progress went to stderr, stdout is pure JSON
    assert set(payload) == {"machine", "kernel", "measured_at", "calibration", "details"}
    assert list(payload["calibration"]) == list(FIELDS)
    assert payload["kernel"] == os.uname().release
    assert payload["measured_at"].endswith("Z") and payload["measured_at"][:2] == "20"
    assert "calibrate: counting loop" in measured.stderr
    assert "schedbench: calibration:" in measured.stderr


@needs_gcc
def test_the_machine_is_recorded_as_runs_record_it(measured, sb):
    # Same description, so the portal's fingerprint puts the calibration on the runs' machine.
    assert json.loads(measured.stdout)["machine"] == sb.collect_environment("/")["machine"]


@needs_gcc
def test_real_figures_are_in_sane_ranges(measured):
    cal = json.loads(measured.stdout)["calibration"]
    assert 0.01 < cal["loop_ns"] < 100  # a register loop: a few cycles at most
    assert 0.01 < cal["loop_memory_ns"] < 100
    assert isinstance(cal["noisy"], bool)
    assert 0.5 < cal["thread_create_join_us"] < 20_000
    assert 0.05 < cal["wakeup_local_us"] < 20_000
    assert 0.05 < cal["context_switch_us"] < 20_000
    if len(os.sched_getaffinity(0)) > 1:
        assert 0.05 < cal["wakeup_remote_us"] < 100_000
        assert cal["ipi_us"] >= 0 and cal["contention"] >= 0
        assert cal["idle_exit_us"] >= 0 and cal["vcpu_wake_us"] >= 0
    else:
        assert cal["wakeup_remote_us"] is None


@needs_gcc
def test_virtualised_agrees_with_the_hypervisor_flag(measured):
    cal = json.loads(measured.stdout)["calibration"]
    with open("/proc/cpuinfo") as f:
        flagged = "hypervisor" in f.read().split()
    assert isinstance(cal["virtualised"], bool)
    if flagged:
        assert cal["virtualised"] is True
    # A guest cannot tell its idle exit from the host waking its vCPU: one of them is zero.
    if cal["vcpu_wake_us"] is not None:
        assert (cal["idle_exit_us"] if cal["virtualised"] else cal["vcpu_wake_us"]) == 0.0


@needs_gcc
def test_the_simulator_accepts_the_measured_calibration(measured):
    model = MachineModel.from_calibration(json.loads(measured.stdout)["calibration"])
    assert model.loop_ns == json.loads(measured.stdout)["calibration"]["loop_ns"]


@needs_gcc
def test_helper_is_compiled_on_the_fly_when_not_built(tmp_path):
    result = harness("calibrate", "--dry-run", "--bin", str(tmp_path), "--scale", "0.02",
                     "--repeat", "1", "--accept-noisy")
    assert result.returncode == 0, result.stderr
    assert "compiling" in result.stderr and "calibrate.c" in result.stderr
    assert json.loads(result.stdout)["calibration"]["loop_ns"] > 0


def test_without_helper_or_compiler_the_error_says_what_to_do(tmp_path):
    env = dict(os.environ, CC="/nonexistent/cc")
    result = harness("calibrate", "--dry-run", "--bin", str(tmp_path), env=env)
    assert result.returncode == 1
    assert "schedbench.py build" in result.stderr and "virtualisation" in result.stderr
    assert result.stdout == ""


def test_submitting_needs_a_url_and_token():
    result = harness("calibrate")
    assert result.returncode == 2 and "no portal URL" in result.stderr


def test_submitting_an_empty_file_says_it_is_empty(tmp_path):
    # What `calibrate --dry-run > cal.json` leaves when calibrate refuses (exit 4).
    empty = tmp_path / "cal.json"
    empty.write_text("")
    result = harness("calibrate", "--url", "http://127.0.0.1:9", "--token", "t",
                     "--submit", str(empty))
    assert result.returncode == 2
    assert "the file is empty" in result.stderr and "refused" in result.stderr
    assert "Expecting value" not in result.stderr


@pytest.mark.parametrize("args", [["--repeat", "0"], ["--scale", "0"], ["--scale", "1000"]])
def test_bad_options_are_usage_errors(args):
    result = harness("calibrate", "--dry-run", *args)
    assert result.returncode == 2 and "error:" in result.stderr


HELPER_OUTPUT = """cpu_a 0 0 0 1
cpu_b 2 2 2 1
loop_ns 0.5 0.4 0.6 5
thread_create_join_us 20 19 25 5
wakeup_local_us 3 2.5 3.5 5
context_switch_us 1.5 1.4 1.6 5
wakeup_remote_us 30 28 40 5
wakeup_remote_busy_us 10 9 11 5
wakeup_idle_us 25 20 30 5
loop_alone_ns 0.5 0.5 0.5 5
loop_busy_ns 0.6 0.6 0.7 5
loaded_cpus 2 2 2 1
bogus line
weird nan 1 2 3
"""


def test_helper_output_parsing(sb):
    figures, missing = sb.parse_helper_output(HELPER_OUTPUT + "ipi_us none no reason\n")
    assert figures["loop_ns"] == {"median": 0.5, "min": 0.4, "max": 0.6, "runs": 5}
    assert "weird" not in figures and "bogus" not in figures
    assert missing == {"ipi_us": "no reason"}


def test_derivation_on_bare_metal(sb):
    cal = sb.derive_calibration(sb.parse_helper_output(HELPER_OUTPUT)[0], "none")
    assert cal["virtualised"] is False
    assert cal["ipi_us"] == 7.0  # busy remote wakeup minus the local one
    assert cal["idle_exit_us"] == 15.0 and cal["vcpu_wake_us"] == 0.0
    assert cal["contention"] == pytest.approx(0.1)  # 20% slower with 2 other CPUs busy


def test_derivation_in_a_guest_puts_the_idle_part_on_the_vcpu(sb):
    cal = sb.derive_calibration(sb.parse_helper_output(HELPER_OUTPUT)[0], "kvm")
    assert cal["virtualised"] is True
    assert cal["vcpu_wake_us"] == 15.0 and cal["idle_exit_us"] == 0.0


def test_single_cpu_box_leaves_remote_figures_unmeasured(sb):
    lines = [line for line in HELPER_OUTPUT.splitlines()
             if not line.startswith(("wakeup_remote", "wakeup_idle", "loop_busy", "cpu_b"))]
    cal = sb.derive_calibration(sb.parse_helper_output("\n".join(lines))[0], None)
    assert cal["wakeup_remote_us"] is None and cal["ipi_us"] is None
    assert cal["idle_exit_us"] is None and cal["contention"] is None
    assert cal["virtualised"] is False
    assert MachineModel.from_calibration(cal).wakeup_remote_us == MachineModel().wakeup_remote_us


def test_missing_core_figures_refuse_to_calibrate(sb):
    lines = [line for line in HELPER_OUTPUT.splitlines() if not line.startswith("loop_ns")]
    with pytest.raises(sb.CommandFailed, match="loop_ns"):
        sb.derive_calibration(sb.parse_helper_output("\n".join(lines))[0], "none")


def test_remote_cpu_and_loaders_avoid_smt_siblings(sb, tmp_path):
    for cpu, siblings in ((0, "0,2"), (1, "1,3"), (2, "0,2"), (3, "1,3")):
        topo = tmp_path / f"sys/devices/system/cpu/cpu{cpu}/topology"
        topo.mkdir(parents=True)
        (topo / "thread_siblings_list").write_text(siblings + "\n")
    assert sb.choose_cpus(str(tmp_path), [0, 1, 2, 3]) == (0, 1, [1, 3])
    assert sb.choose_cpus(str(tmp_path), [0, 2]) == (0, 2, [])  # only a sibling left
    assert sb.choose_cpus(str(tmp_path), [3]) == (3, None, [])


@pytest.mark.parametrize("text,expected", [("0-3,8", [0, 1, 2, 3, 8]), ("5", [5]),
                                           ("", []), ("x", []), (None, [])])
def test_parse_cpu_list(sb, text, expected):
    assert sb.parse_cpu_list(text) == expected


def test_machine_model_validation_names_the_field():
    with pytest.raises(InvalidValueError, match="loop_ns"):
        MachineModel.from_calibration({"loop_ns": "fast"})
    with pytest.raises(InvalidValueError, match="virtualised"):
        MachineModel.from_calibration({"virtualised": 1})
    with pytest.raises(InvalidValueError, match="ipi_us"):
        MachineModel.from_calibration({"ipi_us": float("nan")})
    with pytest.raises(InvalidValueError, match="context_switch_us"):
        MachineModel.from_calibration({"context_switch_us": -1})
    with pytest.raises(InvalidValueError, match="loop_ns"):
        MachineModel.from_calibration({"loop_ns": 0})
    with pytest.raises(InvalidValueError):
        MachineModel.from_calibration(["loop_ns", 1])
    model = MachineModel.from_calibration({"loop_ns": 2, "virtualised": True, "extra": "x"})
    assert model.loop_ns == 2.0 and model.virtualised is True
    assert model.context_switch_us == MachineModel.default().context_switch_us

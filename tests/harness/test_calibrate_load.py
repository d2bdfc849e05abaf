"""calibrate judges itself: the load around the measurement (other runnable tasks, steal) and
the spread of each figure's repeats. A busy machine is refused (exit 4) or, with
--accept-noisy, kept and marked noisy; `run` records the load at its start and warns."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from .conftest import SCRIPT

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


def harness(*args, timeout=300):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.fixture()
def busy_loops():
    """Two busy loops per CPU, for the whole test: the machine is deliberately loaded."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range(2 * len(os.sched_getaffinity(0)))]
    yield loops
    for proc in loops:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("calbin")
    built = harness("build", "--out", str(out))
    assert built.returncode == 0, built.stderr
    return out


@needs_gcc
def test_a_loaded_machine_is_refused(bin_dir, busy_loops):
    result = harness("calibrate", "--dry-run", "--bin", str(bin_dir), "--scale", "0.05",
                     "--repeat", "3")
    assert result.returncode == 4, result.stderr
    assert result.stdout == ""  # nothing printed, nothing sent
    assert "calibration refused" in result.stderr and "--accept-noisy" in result.stderr
    assert "other tasks runnable on average before measuring" in result.stderr


@needs_gcc
def test_a_loaded_machine_with_accept_noisy_is_marked(bin_dir, busy_loops):
    result = harness("calibrate", "--dry-run", "--bin", str(bin_dir), "--scale", "0.05",
                     "--repeat", "3", "--accept-noisy")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    quality = payload["details"]["quality"]
    assert payload["calibration"]["noisy"] is True and quality["noisy"] is True
    before = quality["load"]["before"]
    # our own busy loops are runnable the whole time: at least one per CPU beyond the reader
    assert before["runnable_others"] >= len(os.sched_getaffinity(0)), before
    assert any("runnable" in reason for reason in quality["reasons"])
    assert set(quality["spread"]) >= {"loop_ns", "loop_memory_ns", "wakeup_local_us"}
    assert "marked noisy" in result.stderr


def fake_proc(tmp_path, running, steal=(0, 0)):
    """A /proc with procs_running `running` and the cpu line's steal moving by steal[1]-[0]."""
    proc = tmp_path / "proc"
    proc.mkdir(exist_ok=True)
    (proc / "loadavg").write_text("0.10 0.20 0.30 1/100 1234\n")
    (proc / "stat").write_text(f"cpu  1000 0 100 5000 0 0 0 {steal[0]} 0 0\n"
                               f"procs_running {running}\nprocs_blocked 0\n")
    return str(tmp_path)


def test_sample_load_counts_tasks_beyond_the_reader(sb, tmp_path):
    load = sb.sample_load(fake_proc(tmp_path, running=4), samples=2, interval=0)
    assert load["runnable_others"] == 3 and load["runnable_others_max"] == 3
    assert load["loadavg"] == [0.1, 0.2, 0.3] and load["steal_pct"] is None  # no jiffies moved
    assert sb.busy_reasons(load)[0].startswith("3 other tasks runnable")
    quiet = sb.sample_load(fake_proc(tmp_path, running=1), samples=2, interval=0)
    assert quiet["runnable_others"] == 0 and sb.busy_reasons(quiet) == []


def test_steal_share_between_two_cpu_lines(sb):
    before = [1000, 0, 100, 5000, 0, 0, 0, 0]
    after = [1100, 0, 110, 5050, 0, 0, 0, 40]  # 200 jiffies passed, 40 stolen
    assert sb.steal_pct(before, after) == 20.0
    assert sb.busy_reasons({"runnable_others": 0, "steal_pct": 20.0})[0].startswith("steal")
    assert sb.steal_pct(None, after) is None and sb.steal_pct(after, after) is None


FIGURES = {"loop_ns": {"median": 0.5, "min": 0.49, "max": 0.52, "runs": 5},
           "wakeup_local_us": {"median": 3.0, "min": 2.5, "max": 4.0, "runs": 5},
           "cpu_a": {"median": 0, "min": 0, "max": 0, "runs": 1}}
QUIET = {"runnable_others": 0.1, "runnable_others_max": 1, "steal_pct": 0.0}


def test_a_quiet_machine_with_agreeing_repeats_is_not_noisy(sb):
    quality = sb.assess_calibration(FIGURES, QUIET, QUIET, 0.5)
    assert quality["noisy"] is False and quality["reasons"] == []
    assert quality["spread"] == {"loop_ns": 0.06, "wakeup_local_us": 0.5}


def test_a_loop_that_moved_is_noisy_even_on_a_quiet_machine(sb):
    moved = {**FIGURES, "loop_ns": {"median": 0.5, "min": 0.3, "max": 2.1, "runs": 5}}
    quality = sb.assess_calibration(moved, QUIET, QUIET, None)
    assert quality["noisy"] is True
    assert quality["reasons"] == ["loop_ns spread 360% over 5 repeats (0.3 to 2.1; limit 25%)"]
    assert sb.assess_calibration(FIGURES, QUIET, QUIET, 12.0)["reasons"][0].startswith("steal")


def test_run_records_the_load_and_warns_when_busy(tmp_path, busy_loops):
    result = harness("run", "--benchmark", "sleeper", "--dry-run", "--", "sh", "-c",
                     "echo 'time 1 ms'")
    assert result.returncode == 0, result.stderr
    load = json.loads(result.stdout)["environment"]["load"]
    assert load["busy"] is True and load["runnable_others"] >= len(os.sched_getaffinity(0))
    assert "warning: the machine is busy" in result.stderr

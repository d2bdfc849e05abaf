"""--trace against tracefs: the state is left as found, also on Ctrl-C, SIGTERM and a crash.

The top-level fallback (kernels without tracing instances) runs on a fake tracefs tree whose
trace_pipe is a FIFO; the rest runs as root on the real tracefs and is skipped elsewhere.
"""

import gzip
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.harness.conftest import SCRIPT

TRACING = "/sys/kernel/tracing"
needs_tracefs = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.isdir(os.path.join(TRACING, "instances")),
    reason="needs root and tracefs with instances")
LINE = ("      threadtest-{pid:<6} [000] d..2.  5.{us:06d}: sched_switch: prev_comm=threadtest "
        "prev_pid={pid} prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 "
        "next_prio=120\n")
BEFORE = {"tracing_on": "1\n", "current_tracer": "function\n",
          "buffer_size_kb": "7 (expanded: 1408)\n", "set_event": "irq:irq_handler_entry\n",
          "set_event_pid": "123\n", "options/event-fork": "0\n"}


@pytest.fixture()
def fake_root(tmp_path):
    tracing = tmp_path / "root" / "sys" / "kernel" / "tracing"
    (tracing / "options").mkdir(parents=True)
    for name, text in BEFORE.items():
        (tracing / name).write_text(text)
    os.mkfifo(tracing / "trace_pipe")
    return tmp_path / "root", tracing


def feed(pipe, lines):
    fd = os.open(pipe, os.O_WRONLY)
    os.write(fd, "".join(lines).encode())
    os.close(fd)


def after(tracing):
    return {name: (tracing / name).read_text() for name in BEFORE}


def test_top_level_state_is_restored_after_a_crash(sb, fake_root, tmp_path):
    root, tracing = fake_root
    recorder = sb.TraceRecorder(1 << 20, str(tmp_path), root=str(root))
    recorder.start()
    assert recorder.top_state is not None  # no instances/ directory: the top level it is
    assert (tracing / "set_event_pid").read_text() == f"0 {os.getpid()}"
    assert "sched:sched_switch" in (tracing / "set_event").read_text()
    assert (tracing / "current_tracer").read_text() == "nop"
    recorder.add_root(4242)
    feed(tracing / "trace_pipe", [LINE.format(pid=4242, us=i) for i in range(5)])
    with pytest.raises(RuntimeError):
        try:
            raise RuntimeError("the benchmark crashed")
        finally:
            recorder.cleanup()
    restored = after(tracing)
    assert restored["set_event"].split() == ["irq:irq_handler_entry"]
    assert restored["set_event_pid"].split() == ["123"]
    assert restored["current_tracer"] == "function" and restored["tracing_on"] == "1"
    assert restored["buffer_size_kb"] == "1408"  # it was never used; ours expanded it
    assert restored["options/event-fork"] == "0"
    summary = recorder.write(str(tmp_path / "t.gz"))
    assert summary["events"] == 5


def test_the_cap_stops_recording_and_says_so(sb, fake_root, tmp_path, capsys):
    root, tracing = fake_root
    recorder = sb.TraceRecorder(2000, str(tmp_path), root=str(root))
    recorder.start()
    recorder.add_root(4242)
    writer = threading.Thread(target=feed, args=(
        tracing / "trace_pipe", [LINE.format(pid=4242, us=i) for i in range(200)]))
    writer.start()
    deadline = time.monotonic() + 10
    while not recorder.capped and time.monotonic() < deadline:
        time.sleep(0.02)
    recorder.cleanup()
    writer.join(timeout=5)
    assert recorder.capped
    err = capsys.readouterr().err
    assert err.count("cap") == 1 and "untraced" in err
    summary = recorder.write(str(tmp_path / "t.gz"))
    assert summary["capped"] and 0 < summary["events"] < 200


def harness(*args, **kwargs):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, timeout=120, **kwargs)


def test_without_tracefs_it_says_so_once_and_runs_untraced(tmp_path):
    result = harness("run", "--benchmark", "x", "--dry-run", "--trace", "--root",
                     str(tmp_path), "--", sys.executable, "-c", "print('time 1 ms')")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "trace" in line]
    assert len(lines) == 1 and "untraced" in lines[0]
    assert "trace" not in json.loads(result.stdout)


@pytest.mark.skipif(os.geteuid() != 0 or not os.access("/usr/bin/python3", os.X_OK),
                    reason="drops root (to nobody, with the system python) for the message")
def test_without_root_it_says_so_and_runs_untraced():
    result = subprocess.run(
        ["/usr/bin/python3", str(SCRIPT), "run", "--benchmark", "x", "--dry-run", "--trace",
         "--", "/usr/bin/python3", "-c", "print('time 1 ms')"],
        capture_output=True, text=True, timeout=120, cwd="/", env={"HOME": "/nonexistent"},
        preexec_fn=lambda: (os.setgid(65534), os.setuid(65534)))
    assert result.returncode == 0, result.stderr
    assert "trace: not recorded (tracing needs root); running untraced" in result.stderr


def top_level():
    state = {}
    for name in ("tracing_on", "set_event", "current_tracer", "set_event_pid"):
        with open(os.path.join(TRACING, name)) as f:
            state[name] = f.read()
    return state


def own_instances():
    return [name for name in os.listdir(os.path.join(TRACING, "instances"))
            if name.startswith("schedbench-")]


@needs_tracefs
def test_records_the_benchmark_tree_in_an_instance_of_its_own(tmp_path):
    top = top_level()
    out = tmp_path / "t.trace.gz"
    script = "import threading; t = threading.Thread(target=sum, args=([1] * 10 ** 6,)); " \
             "t.start(); t.join(); print('time 1 ms')"
    result = harness("run", "--benchmark", "x", "--dry-run", "--trace", "--trace-file",
                     str(out), "--", sys.executable, "-c", script)
    assert result.returncode == 0, result.stderr
    trace = json.loads(result.stdout)["trace"]
    root = trace["roots"][0]
    with gzip.open(out, "rt") as f:
        text = f.read()
    assert f"child_pid={root}" in text and f"next_pid={root} " in text
    thread = [line for line in text.splitlines() if f"comm=python3 pid={root} child" in line
              or f"pid={root} child_comm" in line and f"child_pid={root}" not in line]
    assert thread, "the benchmark's thread (a fork of the root) was followed"
    assert trace["events"] > 5 and not trace["capped"]
    assert not [n for n in own_instances() if n.startswith(f"schedbench-{os.getpid()}")]
    assert top_level() == top


def wait_for_instance(proc):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if any(n.startswith(f"schedbench-{proc.pid}") for n in own_instances()):
            return True
        time.sleep(0.05)
    return False


@needs_tracefs
@pytest.mark.parametrize("how,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_run_removes_its_instance(how, status, tmp_path):
    proc = subprocess.Popen([sys.executable, str(SCRIPT), "run", "--benchmark", "x",
                             "--dry-run", "--trace", "--", "sleep", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert wait_for_instance(proc)
    time.sleep(0.3)
    proc.send_signal(how)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == status, err
    assert not [n for n in own_instances() if n.startswith(f"schedbench-{proc.pid}")]


@needs_tracefs
def test_a_crashing_benchmark_leaves_nothing_behind():
    result = harness("run", "--benchmark", "x", "--dry-run", "--trace", "--", "sh", "-c",
                     "kill -SEGV $$")
    assert result.returncode != 0
    assert not any(n.startswith("schedbench-") and n.split("-")[1].isdigit()
                   and not os.path.exists(f"/proc/{n.split('-')[1]}") for n in own_instances())

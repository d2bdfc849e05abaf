"""Replay of a trace recorded on this machine by the harness (threadtest, small loops) on the
6.6-eevdf profile with this machine's calibration: the makespan comes back within 30%
(the median of three recordings).

Needs root, tracefs with instances and gcc; skipped elsewhere. On a machine shared with other
work the recording holds their CPU time as "other", which the replay puts back.

The replay places tasks as upstream 6.6 does. A recording whose kernel left a woken task
queued behind a busy CPU while another CPU sat idle (seen on this project's CI guests: a
6.18 kernel booted with a vCPU-packing parameter no upstream source has, where 3-5 % of
threadtest's children wait a whole 4 ms tick on their parent's CPU) holds waits the modelled
kernel does not make; such recordings are measured (`stranded_ns`) and set aside, and the
test skips, naming the figures, when fewer than two clean ones come out of six.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

import schedtrace
from simulator.replay import replay
from tests.harness.conftest import SCRIPT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/sys/kernel/tracing/instances")
                       or not shutil.which("gcc"), reason="needs root, tracefs and gcc"),
]


def harness(*args):
    result = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_recorded_threadtest_replays_within_30_percent(tmp_path):
    bin_dir = tmp_path / "bin"
    harness("build", "--out", str(bin_dir))
    machine = tmp_path / "machine.json"
    # kept even when calibrate finds the shared machine busy: the recordings meet the same load
    machine.write_text(harness("calibrate", "--dry-run", "--bin", str(bin_dir), "--scale",
                               "0.3", "--repeat", "3", "--accept-noisy"))
    calibration = json.loads(machine.read_text())
    topology = "x".join(str(calibration["machine"][k]) for k in
                        ("sockets", "cores_per_socket", "threads_per_core"))
    # Up to six recordings, three clean ones kept and their median compared: on a machine
    # shared with other busy work one recording can meet a burst of competition the others
    # did not, and a recording stranded by its kernel's placement is not the modelled kernel's.
    ratios, stranded = [], []
    for attempt in range(6):
        trace = tmp_path / f"threadtest-{attempt}.trace.gz"
        harness("run", "--benchmark", "threadtest", "--dry-run", "--trace", "--trace-file",
                str(trace), "--", str(bin_dir / "threadtest"), "-n", "100", "-l", "100000")
        result = replay(str(trace), "6.6-eevdf", topology=topology,
                        machine=calibration["calibration"])
        real, sim = result["real"]["makespan_ms"], result["makespan_ms"]
        lost_ms = stranded_ns(schedtrace.open_events(str(trace))) / 1e6
        print(f"\nrecorded {real:.1f} ms ({lost_ms:.1f} ms stranded), replayed on 6.6-eevdf "
              f"{sim:.1f} ms ({100 * (sim / real - 1):+.1f}%), load average "
              f"{os.getloadavg()[0]:.1f}")
        if lost_ms > STRANDED_SHARE * real:
            stranded.append((round(real, 1), round(lost_ms, 1)))
            continue
        ratios.append(sim / real)
        if len(ratios) == 3:
            break
    if len(ratios) < 2:
        pytest.skip(f"the recording kernel ({os.uname().release}) stranded woken tasks behind a "
                    f"busy CPU while another idled in {len(stranded)} of 6 recordings "
                    f"(makespan ms, stranded ms: {stranded}); the replay models upstream 6.6")
    median = sorted(ratios)[len(ratios) // 2]
    assert abs(median - 1) <= 0.30, ratios


# A recording whose stranded time exceeds this share of its makespan is not compared: a clean
# recording on this project's machines strands well under 1 % (a waking task's own wake
# latency on its idle CPU is not counted); one stalled tick in a 60 ms run is already 7 %.
STRANDED_SHARE = 0.05


def stranded_ns(events):
    """Time during which some CPU is idle while a woken task waits on another, busy CPU: the
    waits a kernel whose wakeups pick an idle CPU (upstream 6.6's select_idle_sibling() and
    find_idlest_group()) would not have made."""
    running, waiting = {}, {}  # cpu -> pid on it (0 idle); pid -> cpu it is queued on
    total, last = 0, None
    for event in events:
        if last is not None and _stranded(running, waiting):
            total += event.ts - last
        last = event.ts
        kind = event.kind
        if kind == "sched_switch":
            running[event.cpu] = event.next_pid or 0
            waiting.pop(event.next_pid, None)
            if event.prev_pid and (event.prev_state or "").startswith("R"):
                waiting[event.prev_pid] = event.cpu
        elif kind in ("sched_wakeup", "sched_wakeup_new") and event.target_pid:
            cpu = event.target_cpu
            waiting[event.target_pid] = event.cpu if cpu is None else cpu
        elif kind == "sched_migrate_task" and event.target_pid in waiting:
            waiting[event.target_pid] = event.dest_cpu
        elif kind == "sched_process_exit":
            waiting.pop(event.target_pid, None)
    return total


def _stranded(running, waiting):
    idle = {cpu for cpu, pid in running.items() if pid == 0}
    return bool(idle) and any(running.get(cpu, 0) != 0 for cpu in waiting.values()
                              if cpu not in idle)


def test_stranded_time_counts_a_wait_behind_a_busy_cpu_beside_an_idle_one():
    """The measure on written events: a child woken onto its parent's busy CPU 0 while CPU 1
    idles is stranded until it runs; woken onto idle CPU 1 it is not (its own wake latency)."""
    def switch(ts, cpu, prev, state, nxt):
        return schedtrace.Event(ts, cpu, "sched_switch", prev, "t", 1, prev_pid=prev,
                                prev_comm="t", prev_state=state, next_pid=nxt, next_comm="t")

    def wake(ts, cpu, pid, target):
        return schedtrace.Event(ts, cpu, "sched_wakeup_new", 10, "t", 1, target_pid=pid,
                                target_comm="t", target_cpu=target)

    base = [switch(0, 0, 0, "R", 10), switch(0, 1, 20, "S", 0)]
    packed = base + [wake(1_000, 0, 11, 0), switch(5_001_000, 0, 10, "S", 11),
                     switch(5_002_000, 1, 0, "R", 11)]
    spread = base + [wake(1_000, 0, 11, 1), switch(21_000, 1, 0, "R", 11)]
    assert stranded_ns(packed) == 5_000_000
    assert stranded_ns(spread) == 0

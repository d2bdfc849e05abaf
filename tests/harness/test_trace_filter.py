"""--trace: which recorded lines are kept, and how tasks outside the benchmark are renamed."""

import gzip
import io

import pytest

from tests.harness.conftest import FIXTURES

RECORDED = FIXTURES / "traces" / "recorded.txt"


@pytest.fixture()
def kept(sb):
    out = io.StringIO()
    filtered = sb.filter_trace(RECORDED.read_text().splitlines(), [1000], out)
    lines = out.getvalue().splitlines()
    return filtered, [line for line in lines if not line.startswith("#")]


def test_benchmark_tasks_and_forks_are_followed(kept):
    _, lines = kept
    text = "\n".join(lines)
    assert "child_pid=1000" in text and "child_pid=1001" in text  # root and its thread
    assert "next_pid=1001" in text and "pid=1001 prio=120 group_dead=false" in text


def test_others_become_one_placeholder_per_cpu(sb, kept):
    _, lines = kept
    text = "\n".join(lines)
    assert "Web Content" not in text and "kworker" not in text
    assert "comm=python pid=900" not in text  # the harness itself (the root is "python" until exec)
    cpu0, cpu1 = sb.OTHER_PID_BASE, sb.OTHER_PID_BASE + 1
    # The harness forking the root, on CPU 1: the parent is CPU 1's "other".
    assert f"comm=other pid={cpu1} child_comm=python child_pid=1000" in lines[0]
    assert lines[0].split()[0] == f"other-{cpu1}"
    # The same outside task on CPU 0 is CPU 0's placeholder, as prefix and as switch side.
    switch_out = next(line for line in lines if "prev_pid=1000" in line and "prev_state=S" in line)
    assert switch_out.endswith(f"next_comm=other next_pid={cpu0} next_prio=120")
    wakeup = next(line for line in lines if "sched_wakeup: comm=threadtest pid=1000" in line)
    assert wakeup.split()[0] == f"other-{cpu0}"


def test_idle_is_kept_as_idle(kept):
    _, lines = kept
    assert lines[2].split()[0] == "<idle>-0"
    assert "prev_comm=swapper/0 prev_pid=0" in lines[2]
    assert lines[-1].endswith("next_comm=swapper/1 next_pid=0 next_prio=120")


def test_events_only_about_others_are_dropped(kept):
    filtered, lines = kept
    text = "\n".join(lines)
    assert "pid=77" not in text  # its migration, and the switch between two outside tasks
    assert "sched_wakeup: comm=other" not in text  # the benchmark waking a kworker
    assert "not a trace event" not in text
    assert "CPU:1 [LOST 3 EVENTS]" in lines  # lost events stay: a parser must know
    assert "comm=threadtest pid=1000 prio=120 orig_cpu=0 dest_cpu=1" in text
    assert filtered.kept == len(lines) - 1


def test_a_reused_pid_after_exit_is_not_the_benchmark(sb, kept):
    _, lines = kept
    # 1001 exited and switched out dead; the later "bash-1001" is someone else.
    assert not any("bash" in line for line in lines)
    reused = [line for line in lines if "prev_state=R ==> next_comm=other" in line
              and "100.000800" in line]
    assert reused and f"next_pid={sb.OTHER_PID_BASE + 1}" in reused[0]
    dead = next(line for line in lines if "prev_pid=1001" in line and "prev_state=X" in line)
    assert dead.split()[0] == "threadtest-1001"  # its own last switch keeps its name


def test_placeholder_cannot_collide_with_a_real_pid(sb):
    # PID_MAX_LIMIT on 64-bit: pid_max can be raised to it but pids stay below it.
    assert sb.OTHER_PID_BASE >= 4194304


def test_two_channels_merge_in_time_order(sb, tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    lines = RECORDED.read_text().splitlines()
    a.write_text("\n".join(line for line in lines if "migrate" not in line) + "\n")
    b.write_text("\n".join(line for line in lines if "migrate" in line) + "\n")
    merged = list(sb.merge_recordings([str(a), str(b)]))
    stamps = [sb.trace_timestamp(line, None) for line in merged]
    known = [s for s in stamps if s is not None]
    assert known == sorted(known) and len(merged) == len(lines)


def test_the_written_file_is_gzip_text(sb, tmp_path):
    recorder = sb.TraceRecorder(1 << 20, str(tmp_path))
    (tmp_path / "raw-0.txt").write_text(RECORDED.read_text())
    recorder.channels = [type("C", (), {"raw_path": str(tmp_path / "raw-0.txt")})()]
    recorder.roots = [1000]
    summary = recorder.write(str(tmp_path / "t.trace.gz"))
    with gzip.open(tmp_path / "t.trace.gz", "rt") as f:
        text = f.read()
    assert text.startswith("# tracer: nop") and summary["events"] == text.count(": sched_")


def test_others_leaving_or_taking_an_idle_cpu_count_only_while_the_benchmark_lives(sb, kept):
    _, lines = kept
    idle = [line for line in lines if "swapper" in line and "comm=other" in line]
    # CPU 0's other went idle in the middle: kept, so its CPU time ends there
    assert len(idle) == 1 and "100.000605" in idle[0]
    assert idle[0].startswith(f"           other-{sb.OTHER_PID_BASE}")
    assert not any("sshd" in line or "99.999000" in line or "100.002000" in line
                   for line in lines)


def test_the_header_records_whether_autogroup_was_on(sb, tmp_path):
    out = io.StringIO()
    sb.filter_trace(RECORDED.read_text().splitlines(), [1000], out, autogroup="1")
    header = [line for line in out.getvalue().splitlines() if line.startswith("#")]
    assert header[-1].endswith("; sched_autogroup_enabled=1")
    unknown = io.StringIO()
    sb.filter_trace(RECORDED.read_text().splitlines(), [1000], unknown)
    assert "sched_autogroup_enabled" not in unknown.getvalue()
    # what the recorder reads: the sysctl; a kernel without CONFIG_SCHED_AUTOGROUP has none
    kernel = tmp_path / "proc" / "sys" / "kernel"
    kernel.mkdir(parents=True)
    assert sb.autogroup_setting(str(tmp_path)) == "0"
    (kernel / "sched_autogroup_enabled").write_text("1\n")
    assert sb.autogroup_setting(str(tmp_path)) == "1"
    assert sb.autogroup_setting(str(tmp_path / "nowhere")) is None

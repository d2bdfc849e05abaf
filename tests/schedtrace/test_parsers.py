"""schedtrace parsers on traces recorded on a real machine and on hand-written edge cases."""

import gzip
import io
import lzma
from collections import Counter
from pathlib import Path

import pytest

import schedtrace
from schedtrace import TraceError, open_events

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"

RECORDED = [
    ("ftrace_threadtest.trace.gz", "ftrace", 4982),
    ("ftrace_burn.trace", "ftrace", 1342),
    ("ftrace_yieldloop.trace.xz", "ftrace", 3000),
    ("tracecmd_threadtest.txt.gz", "trace-cmd", 2585),
    ("perfsched_threadtest.txt.gz", "perf", 3384),
    ("perf_burn_ns.txt", "perf", 484),
]


def lines_of(name):
    raw = (FIXTURES / name).read_bytes()
    if name.endswith(".gz"):
        raw = gzip.decompress(raw)
    elif name.endswith(".xz"):
        raw = lzma.decompress(raw)
    return raw.decode().splitlines()


@pytest.mark.parametrize(("name", "fmt", "events"), RECORDED)
def test_recorded_traces_parse_completely(name, fmt, events):
    stream = open_events(FIXTURES / name)
    kinds = Counter(event.kind for event in stream)
    assert stream.format == fmt
    assert stream.events == events == sum(kinds.values())
    assert kinds["sched_switch"] > 200
    assert kinds["sched_process_fork"] >= 3
    assert stream.warnings == []


@pytest.mark.parametrize(("name", "fmt", "events"), RECORDED)
def test_every_event_line_is_read_and_every_switch_field_matches_the_text(name, fmt, events):
    """Independent check: each sched_switch's pids appear in its own line's text."""
    text = lines_of(name)
    switches = [event for event in open_events(FIXTURES / name) if event.kind == "sched_switch"]
    assert len(switches) == sum("sched_switch:" in line for line in text)
    for event in switches[:300]:
        line = text[event.line - 1]
        assert f"{event.prev_pid}" in line and f"{event.next_pid}" in line
        assert event.prev_comm in line and event.next_comm in line


def test_events_come_out_in_timestamp_order_with_nanoseconds():
    stream = list(open_events(FIXTURES / "perf_burn_ns.txt"))
    stamps = [event.ts for event in stream]
    assert stamps == sorted(stamps)
    assert stream[0].ts == 4215_933280680  # `4215.933280680` exactly, no float rounding


def test_ftrace_fields():
    first = next(iter(open_events(FIXTURES / "ftrace_burn.trace")))
    assert (first.kind, first.cpu, first.line) == ("sched_process_fork", 0, 13)
    assert (first.comm, first.pid, first.ts) == ("rec.sh", 13480, 4184_344466000)
    assert (first.parent_pid, first.child_pid, first.child_comm) == (13480, 13482, "rec.sh")


def test_trace_cmd_plugin_spelling_and_instance_prefix():
    events = list(open_events(FIXTURES / "tracecmd_threadtest.txt.gz"))
    wakeup_new = next(event for event in events if event.kind == "sched_wakeup_new")
    assert (wakeup_new.target_comm, wakeup_new.target_pid, wakeup_new.target_cpu) == \
        ("rec_tc.sh", 18016, 1)
    assert wakeup_new.comm == "rec_tc.sh"  # the `sb_i13_traces:` instance name is not the comm
    switch = next(event for event in events if event.kind == "sched_switch")
    assert (switch.prev_pid, switch.prev_state, switch.next_comm) == (18013, "D", "postgres")


def test_perf_unknown_task_prefix_is_none():
    events = list(open_events(FIXTURES / "perf_burn_ns.txt"))
    assert any(event.pid is None for event in events)  # perf's `:-1 -1`


def test_perf_sched_script_uses_sched_waking_and_skips_stat_runtime():
    stream = open_events(FIXTURES / "perfsched_threadtest.txt.gz")
    kinds = Counter(event.kind for event in stream)
    assert kinds["sched_waking"] == 1225
    assert stream.skipped == 2593  # sched_stat_runtime lines


def test_comm_with_spaces_and_brackets():
    events = list(open_events(FIXTURES / "edge_cases.trace"))
    assert events[0].next_comm == "Web Content"
    assert events[1].next_comm == "[kworker 0:1]"
    fork = [event for event in events if event.kind == "sched_process_fork"][1]
    assert (fork.child_comm, fork.child_pid) == ("a b [c]-d", 600)
    odd = [event for event in events if event.comm == "a b [c]-d"]
    assert [event.pid for event in odd] == [600]


def test_lost_events_marker_becomes_an_event_and_a_warning():
    stream = open_events(FIXTURES / "edge_cases.trace")
    lost = [event for event in stream if event.kind == schedtrace.LOST]
    assert [(event.cpu, event.lost) for event in lost] == [(1, 17)]
    assert stream.lost_events == 17
    assert any("17 events were lost" in warning for warning in stream.warnings)


def test_cpus_out_of_order_are_put_in_order():
    events = [event for event in open_events(FIXTURES / "edge_cases.trace")
              if event.kind != schedtrace.LOST]
    assert [event.ts for event in events] == sorted(event.ts for event in events)
    lines = [event.line for event in events]
    assert lines.index(22) < lines.index(21)  # 100.009400 printed after 100.009500


def test_out_of_order_beyond_the_window_is_counted_not_fatal():
    text = "".join(
        f"  t-{pid} [000] d..2. 1.{stamp:06d}: sched_wakeup: comm=x pid=9 prio=120 "
        f"target_cpu=000\n"
        for pid, stamp in ((1, 500), (2, 600), (3, 700), (4, 100)))
    stream = open_events(io.BytesIO(text.encode()), reorder_window=2)
    stamps = [event.ts for event in stream]
    assert stream.late_events == 1
    assert len(stamps) == 4
    assert any("out of timestamp order" in warning for warning in stream.warnings)


def test_truncated_last_line_is_accepted_with_a_warning():
    stream = open_events(FIXTURES / "truncated.trace")
    events = list(stream)
    assert len(events) == 8
    assert stream.warnings == [
        "the trace ends in the middle of line 21; read up to the last whole event (line 20)"]


def test_truncated_gzip_stream_is_accepted_up_to_its_last_line():
    raw = gzip.compress((FIXTURES / "ftrace_burn.trace").read_bytes())
    stream = open_events(io.BytesIO(raw[: len(raw) // 2]))
    events = list(stream)
    assert 100 < len(events) < 1342
    assert any("ends early" in warning or "middle of line" in warning
               for warning in stream.warnings)


def test_gzip_and_xz_give_the_same_events_as_plain_text():
    plain = (FIXTURES / "ftrace_burn.trace").read_bytes()
    def key(source):
        return [(e.ts, e.cpu, e.kind, e.pid) for e in open_events(io.BytesIO(source))]
    assert key(plain) == key(gzip.compress(plain)) == key(lzma.compress(plain))


def test_a_bad_line_in_the_middle_names_its_line():
    text = (FIXTURES / "ftrace_burn.trace").read_text().splitlines(keepends=True)
    text[99] = "this is not a trace line\n"
    with pytest.raises(TraceError) as caught:
        list(open_events(io.BytesIO("".join(text).encode())))
    assert caught.value.line == 100


def test_known_event_with_unreadable_fields_names_its_line():
    text = (FIXTURES / "ftrace_burn.trace").read_text().splitlines(keepends=True)
    text[49] = "  x-1 [000] d..2. 4184.344600: sched_switch: prev_comm=x prev_pid=oops\n"
    with pytest.raises(TraceError) as caught:
        list(open_events(io.BytesIO("".join(text).encode())))
    assert caught.value.line == 50
    assert "sched_switch" in caught.value.message


@pytest.mark.parametrize("text", [b"", b"hello\nworld\n", b"\x00\x01binary"])
def test_not_a_trace(text):
    with pytest.raises(TraceError):
        list(open_events(io.BytesIO(text)))


def test_forced_format_and_unknown_format():
    with pytest.raises(TraceError):
        open_events(FIXTURES / "ftrace_burn.trace", format="nope")
    with pytest.raises(TraceError) as caught:
        list(open_events(FIXTURES / "ftrace_burn.trace", format="perf"))
    assert caught.value.line == 13


def test_other_tracepoints_are_skipped():
    text = (b"  t-1 [000] d..2. 1.000001: sched_stat_runtime: comm=t pid=1 runtime=5 [ns]\n"
            b"  t-1 [000] d..2. 1.000002: sched_wakeup: comm=u pid=2 prio=120 target_cpu=000\n")
    stream = open_events(io.BytesIO(text))
    assert [event.kind for event in stream] == ["sched_wakeup"]
    assert stream.skipped == 1


def test_schedtrace_is_a_plain_library():
    import subprocess
    import sys

    code = ("import sys, schedtrace; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'rest_framework', "
            "'benchmarks', 'simulator'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[2]).stdout
    assert out.strip() == "[]"

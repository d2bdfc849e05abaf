"""time-ms, loops-time, kernel-time, burn and results-file on fixtures and edge cases."""

import pytest

from benchmarks.parsers import PARSERS, ParseError

from .helpers import parse_fixture, summary


def test_time_ms_fixture_keeps_every_repeat_and_skips_quotes_and_banner():
    result = parse_fixture("time-ms", "time_ms.txt")
    assert result.format == "time-ms" and result.version == 1
    assert summary(result) == [(2, None, {}, {"time_ms": [5210, 5198, 5302, 4877.5]})]
    only = result.results[0]
    assert only.benchmark == "threadtest"
    assert only.units == {"time_ms": "ms"} and only.higher_is_better == {"time_ms": False}
    # "500 iterations, loops=10000" describes the setup but says not which runs: not read
    assert result.warnings == [
        "line 1: skipped setup description (it states iterations 500, loops 10000: not read, as "
        "nothing says which runs it describes; give it with the upload or in the preview if it "
        "applies)", "line 4: skipped quoted line"]


def test_loops_time_groups_by_loop_count_with_suffixes():
    result = parse_fixture("loops-time", "loops_time.txt")
    assert summary(result) == [
        (2, None, {"loops": 10000}, {"time_ms": [3332, 3401]}),
        (4, None, {"loops": 1000000}, {"time_ms": [4015]}),
        (5, None, {"loops": 10000000}, {"time_ms": [14321, 14390]}),
    ]
    assert "line 6: skipped quoted line" in result.warnings


def test_kernel_time_groups_by_kernel_verbatim():
    result = parse_fixture("kernel-time", "kernel_time.txt")
    assert summary(result) == [
        (3, "2.6.22", {}, {"time_ms": [3332, 3340]}),
        (4, "2.6.23", {}, {"time_ms": [4397]}),
        (5, "2.6.24", {}, {"time_ms": [8953]}),
        (7, "2.6.24-git19", {}, {"time_ms": [8986]}),
    ]


def test_burn_lines_with_sweep_headings():
    result = parse_fixture("burn", "burn.txt")
    first, second, third = result.results
    assert first.benchmark == "threadtest-burn"
    assert first.params == {"iterations": 10, "burn_us": 1_000_000}
    assert second.params == {"iterations": 100, "burn_us": 100_000}
    assert third.params == {"iterations": 100_000, "burn_us": 100}
    assert list(first.metrics["time_us"]) == [10612345, 10598001]
    assert list(first.metrics["idx"]) == [1.88, 1.89]
    assert list(second.metrics["wait_us"]) == [650000]  # tab-separated fields
    assert first.higher_is_better == {"time_us": False, "work_us": False, "wait_us": False,
                                      "idx": True}
    assert first.units["idx"] == "" and first.units["work_us"] == "us"
    assert (first.line, second.line, third.line) == (4, 8, 11)
    assert "line 9: skipped quoted line" in result.warnings


def test_results_file_kernels_programs_and_tunables():
    result = parse_fixture("results-file", "results_file.txt")
    assert summary(result) == [
        (4, "2.6.22.17-smp", {}, {"time_ms": [798, 780, 702]}),
        (9, "2.6.24.1-smp", {}, {"time_ms": [815, 820, 771]}),
        (17, "2.6.24.1-smp", {}, {"time_ms": [29, 61]}),
        # After the wrapped chatter on line 19 the heading no longer surely holds: unassigned.
        (20, None, {}, {"time_ms": [72]}),
    ]
    first, second, third, unsure = result.results
    assert unsure.missing == ["kernel"] and unsure.kernel_line is None
    assert (third.kernel_line, third.source_lines) == (16, [17, 18])
    assert first.labels == {"program": "./threadtest"}
    assert first.tunables == {"sched_child_runs_first": 1}
    assert second.tunables == {"sched_child_runs_first": 1}
    assert third.labels == {"program": "./threadtest-yield"}
    assert third.tunables == {"sched_child_runs_first": 1, "sched_compat_yield": 0}
    assert result.warnings == ["line 11: skipped quoted line",
                               "line 19: skipped prose (no numbers)"]


def test_results_file_mixes_line_kinds_and_sysctl():
    text = ("root@box:~# sysctl -w kernel.sched_compat_yield=1\n"
            "2.6.25-rc1\n"
            "1M loops time 4015 ms\n"
            "time: 100 (us)  work: 150  wait: 5  idx: 1.5\n")
    result = PARSERS["results-file"].parse(text.splitlines())
    loops, burn = result.results
    assert loops.kernel == burn.kernel == "2.6.25-rc1"
    assert loops.params == {"loops": 1_000_000} and loops.tunables == {"sched_compat_yield": 1}
    assert burn.benchmark == "threadtest-burn" and list(burn.metrics["idx"]) == [1.5]


@pytest.mark.parametrize(("format_name", "text", "line"), [
    ("time-ms", "time 5 ms\ntime five ms\n", 2),
    ("time-ms", "time 5 ms\n10 loops time 5 ms\n", 2),
    ("loops-time", "10 loops time 5 ms\n\n\n10 loops time x ms\n", 4),
    ("kernel-time", "2.6.22: 5 ms\n2.6.23: lots ms\n", 2),
    ("burn", "time: 1 (us)  work: 2  wait: 3  idx: 1\ntime: 5 (us) work: ?\n", 2),
    ("results-file", "2.6.22\ntime 5 ms\ntime 5.5.5 ms\n", 3),
])
def test_malformed_result_lines_name_their_line(format_name, text, line):
    with pytest.raises(ParseError) as caught:
        PARSERS[format_name].parse(text.splitlines(keepends=True))
    assert caught.value.line == line


@pytest.mark.parametrize("format_name", ["time-ms", "loops-time", "kernel-time", "burn",
                                         "results-file"])
def test_no_results_is_a_parse_error(format_name):
    with pytest.raises(ParseError, match="no .* results found"):
        PARSERS[format_name].parse(["just chatter\n", "> time 5 ms\n", "\n"])


def test_line_endings_and_whitespace_do_not_matter():
    lines = ["  time 1 ms\r\n", "\ttime\t2\tms   \n", "time 3ms", "TIME 4 MS\r\n"]
    result = PARSERS["time-ms"].parse(lines)
    assert list(result.results[0].metrics["time_ms"]) == [1, 2, 3, 4]


def test_bytes_lines_are_decoded():
    result = PARSERS["time-ms"].parse([b"time 7 ms\n", b"time 8 ms\r\n"])
    assert list(result.results[0].metrics["time_ms"]) == [7, 8]


def test_results_file_commands_pasted_without_prompt():
    text = ("echo 0 > /proc/sys/kernel/sched_compat_yield\n./threadtest -y\n"
            "2.6.24\ntime 5 ms\n")
    (only,) = PARSERS["results-file"].parse(text.splitlines()).results
    assert only.tunables == {"sched_compat_yield": 0}
    assert only.labels == {"program": "./threadtest -y"} and only.kernel == "2.6.24"


def test_results_in_a_mail_reply_ignore_quotes_prose_and_signature():
    result = parse_fixture("results-file", "results_mail.txt")
    assert summary(result) == [
        (15, "2.6.23.15-smp", {}, {"time_ms": [254, 254, 293]}),
        (21, "2.6.23.15-smp", {}, {"time_ms": [212, 230]}),
    ]
    assert result.results[1].tunables == {"sched_compat_yield": 1}
    assert [w for w in result.warnings if "quoted" in w] == [
        f"line {n}: skipped quoted line" for n in range(2, 8)]


@pytest.mark.parametrize(("command", "policy"), [
    ("chrt -f 50 ./threadtest", "SCHED_FIFO"),
    ("chrt --batch 0 ./threadtest", "SCHED_BATCH"),
    ("chrt 10 ./threadtest", "SCHED_RR"),
    ("./threadtest", None),
])
def test_results_file_policy_from_chrt(command, policy):
    text = f"box:~ # {command}\n2.6.24\ntime 5 ms\n"
    (only,) = PARSERS["results-file"].parse(text.splitlines()).results
    assert only.policy == policy and only.labels == {"program": command}

"""sweep, vmstat, normalized and param-table on fixtures and edge cases."""

import pytest

from benchmarks.parsers import PARSERS, ParseError

from .helpers import parse_fixture, summary


def test_sweep_turns_loop_headings_into_params_and_records_holes():
    result = parse_fixture("sweep", "sweep.txt")
    assert summary(result) == [
        (4, "2.6.22", {"loops": 1_000_000}, {"time_ms": [4015]}),
        (5, "2.6.23", {"loops": 1_000_000}, {"time_ms": [4581]}),
        (6, "2.6.24", {"loops": 1_000_000}, {"time_ms": [10765]}),
        (7, "2.6.24-git19", {"loops": 1_000_000}, {"time_ms": [8286]}),
        (10, "2.6.22", {"loops": 2_000_000}, {"time_ms": [7574]}),
        (11, "2.6.23", {"loops": 2_000_000}, {"time_ms": [9031]}),
        (13, "2.6.24-git19", {"loops": 2_000_000}, {"time_ms": [10959]}),
        (16, "2.6.22", {"loops": 40_000_000}, {"time_ms": [94315]}),
        (18, "2.6.23", {"loops": 40_000_000}, {"time_ms": [107930]}),
    ]
    assert result.warnings == ["line 1: skipped prose (no numbers)",
                               "line 12: hole: missed 2.6.24 here",
                               "line 17: skipped quoted line"]


def test_sweep_row_before_any_heading_is_unassigned_not_guessed():
    result = PARSERS["sweep"].parse(["2.6.22\t\ttime 5 ms", "Loop to 1M:", "2.6.22 time 7 ms"])
    unsure, sure = result.results
    assert (unsure.kernel, unsure.params, unsure.missing) == ("2.6.22", {}, ["param.loops"])
    assert (sure.params, sure.missing, sure.kernel_line) == ({"loops": 1_000_000}, [], 3)


@pytest.mark.parametrize(("text", "line", "message"), [
    ("Loop to 10k:\n2.6.22 time lots ms\n", 2, "malformed"),
])
def test_sweep_errors(text, line, message):
    with pytest.raises(ParseError, match=message) as caught:
        PARSERS["sweep"].parse(text.splitlines())
    assert caught.value.line == line


def test_vmstat_blocks_under_headings():
    result = parse_fixture("vmstat", "vmstat.txt")
    first, second = result.results
    assert first.benchmark == second.benchmark == "vmstat"
    assert (first.kernel, second.kernel) == ("2.6.24", "2.6.22.17-cfs-v24.1-smp")
    assert (first.line, second.line) == (1, 7)
    assert first.labels == {"heading": "2.6.24, volanomark 10 rooms:"}
    series = first.series["vmstat"]
    assert series["columns"][:3] == ["r", "b", "swpd"] and series["columns"][-1] == "st"
    assert series["rows"][0][:2] == [212, 0] and series["rows"][1][11] == 1012345
    # A repeated header row inside a block is vmstat reprinting it, not a new block.
    assert len(second.series["vmstat"]["rows"]) == 3
    assert list(second.metrics["cs_per_s"]) == [23456, 21002, 22010]
    assert list(first.metrics["runnable"]) == [212, 198]


def test_vmstat_time_column_and_headerless_block():
    result = parse_fixture("vmstat", "vmstat_time.txt")
    timed, headerless = result.results
    assert timed.series["vmstat"]["columns"][:2] == ["time_s", "r"]
    assert timed.series["vmstat"]["rows"] == [
        [1.0, 5, 0, 0, 500000, 1000, 20000, 0, 0, 0, 0, 900, 5000, 90, 10, 0, 0, 0],
        [2.0, 6, 0, 0, 500000, 1000, 20000, 0, 0, 0, 0, 905, 5100, 91, 9, 0, 0, 0],
    ]
    assert timed.kernel is None and timed.labels["heading"] == "rsdl-0.33 with rr_interval=6"
    assert headerless.kernel == "2.6.23"
    assert headerless.series["vmstat"]["columns"][0] == "time_s"
    assert list(headerless.metrics["idle_pct"]) == [40, 35]


def test_vmstat_without_anything_but_rows():
    row = "1 0 0 100 10 20 0 0 0 0 50 60 1 2 97 0"
    result = PARSERS["vmstat"].parse([row, row])
    assert result.results[0].series["vmstat"]["columns"][-1] == "wa"  # 16 columns: no st


@pytest.mark.parametrize(("text", "line"), [
    ("r b swpd free buff cache si so bi bo in cs us sy id wa st\n1 2 3\n", 2),
    ("x\n" + " ".join(["1"] * 12) + "\n", 2),
])
def test_vmstat_errors(text, line):
    with pytest.raises(ParseError) as caught:
        PARSERS["vmstat"].parse(text.splitlines())
    assert caught.value.line == line


def test_normalized_one_result_set_per_row_and_column():
    result = parse_fixture("normalized", "normalized.txt")
    cells = [(r.line, r.benchmark, r.kernel, list(r.metrics["normalized"])) for r in
             result.results]
    assert cells == [
        (5, "hackbench", "tip", [1]), (5, "hackbench", "tip + patch", [0.955]),
        (6, "tbench 16 clients", "tip", [1]), (6, "tbench 16 clients", "tip + patch", [1.02]),
        (7, "sysbench", "tip", [1]), (7, "sysbench", "tip + patch", [0.91]),
        (9, "volanomark", "tip", [1]),  # "-" is a missing value
    ]
    hackbench_patch = result.results[1]
    assert hackbench_patch.labels == {"column": "tip + patch", "row": "hackbench",
                                      "note": "4.5% degradation"}
    assert result.results[4].labels["variant"] == "threads=64"
    assert hackbench_patch.higher_is_better == {"normalized": True}
    assert result.warnings == ["line 1: ignored unrecognised line", "line 8: skipped quoted line"]


def test_normalized_before_after_with_tabs_and_crlf():
    result = parse_fixture("normalized", "normalized_before_after.txt")
    assert [(r.benchmark, r.kernel, r.labels.get("note")) for r in result.results] == [
        ("Trade", "Before patch", None), ("Trade", "After patch", "3% improvement"),
        ("httperf", "Before patch", None), ("httperf", "After patch", None),
    ]


def test_normalized_header_may_name_the_label_column():
    text = "benchmark    base    patched\nhackbench    1    0.9\n"
    result = PARSERS["normalized"].parse(text.splitlines())
    assert [r.kernel for r in result.results] == ["base", "patched"]


def test_normalized_row_with_too_few_values():
    text = "a    b    c\nhackbench 1\n"
    with pytest.raises(ParseError, match="expected 3 values") as caught:
        PARSERS["normalized"].parse(text.splitlines())
    assert caught.value.line == 2


def test_param_table_runqueue_cost():
    result = parse_fixture("param-table", "runqueue.txt")
    assert summary(result) == [
        (5, "2.4.36", {"runqueue_length": 1}, {"schedule_us": [0.41]}),
        (6, "2.4.36", {"runqueue_length": 2}, {"schedule_us": [0.44]}),
        (7, "2.4.36", {"runqueue_length": 16}, {"schedule_us": [1.32]}),
        (8, "2.4.36", {"runqueue_length": 64}, {"schedule_us": [4.8]}),
        (12, "2.6.22.17-smp", {"runqueue_length": 1}, {"schedule_us": [0.52]}),
        (13, "2.6.22.17-smp", {"runqueue_length": 16}, {"schedule_us": [0.53]}),
        (15, "2.6.22.17-smp", {"runqueue_length": 64}, {"schedule_us": [0.55]}),
    ]
    assert {r.benchmark for r in result.results} == {"runqueue-cost"}
    assert result.results[0].units == {"schedule_us": "us"}


def test_param_table_metric_named_from_header():
    text = "tasks    time (ms)\n2    10\n4    12\n"
    result = PARSERS["param-table"].parse(text.splitlines())
    assert summary(result) == [(2, None, {"tasks": 2}, {"time_ms": [10]}),
                               (3, None, {"tasks": 4}, {"time_ms": [12]})]


@pytest.mark.parametrize(("text", "line"), [
    ("1    2\n", 1),
    ("runqueue length    microseconds\n1 2 3\n", 2),
])
def test_param_table_errors(text, line):
    with pytest.raises(ParseError) as caught:
        PARSERS["param-table"].parse(text.splitlines())
    assert caught.value.line == line


def test_vmstat_t_timestamps_are_dropped():
    text = (
        "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- "
        "-----timestamp-----\n"
        " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st"
        "                 UTC\n"
        " 1  0      0 7000 100 2000    0    0     3    10  120  230  2  1 97  0  0"
        " 2026-11-30 05:15:00\n")
    (only,) = PARSERS["vmstat"].parse(text.splitlines()).results
    assert only.series["vmstat"]["columns"][-1] == "st"
    assert only.series["vmstat"]["rows"] == [[1, 0, 0, 7000, 100, 2000, 0, 0, 3, 10, 120, 230,
                                              2, 1, 97, 0, 0]]


def test_sweep_hole_after_a_kernel_name():
    text = "Loop to 10k:\n2.6.22\ttime 5 ms\n2.6.24\t<missed it>\n"
    result = PARSERS["sweep"].parse(text.splitlines())
    assert [r.kernel for r in result.results] == ["2.6.22"]
    assert result.warnings == ["line 3: hole: missed it"]


def test_param_table_single_spaced_header():
    result = PARSERS["param-table"].parse(["nr_running usec", "4 0.5"])
    assert summary(result) == [(2, None, {"nr_running": 4}, {"schedule_us": [0.5]})]
    assert result.results[0].benchmark == "runqueue-cost"


def test_sweep_kernel_names_may_contain_blanks():
    text = "Loop to 10k:\n2.6.24 + patch\t\ttime 5 ms\ntip: 6 ms\n"
    result = PARSERS["sweep"].parse(text.splitlines())
    assert [(r.kernel, list(r.metrics["time_ms"])) for r in result.results] == [
        ("2.6.24 + patch", [5]), ("tip", [6])]


def test_vmstat_a_different_header_starts_a_new_block():
    text = ("2.6.22.17-smp\n" + " ".join(["1"] * 17) + "\n"
            "Time (sec) r b swpd free buff cache si so bi bo in cs us sy id wa st\n"
            "0.5 " + " ".join(["2"] * 17) + "\n")
    first, second = PARSERS["vmstat"].parse(text.splitlines()).results
    assert first.kernel == "2.6.22.17-smp" and first.series["vmstat"]["columns"][0] == "r"
    assert second.line == 3 and second.series["vmstat"]["columns"][0] == "time_s"
    assert second.series["vmstat"]["rows"] == [[0.5, *([2] * 17)]]

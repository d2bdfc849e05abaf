"""Registry: formats, auto-detection across every fixture, forcing, and bad input."""

import io
import json

import pytest

from benchmarks.parsers import (
    PARSERS,
    ParseError,
    ParseResult,
    UnknownFormat,
    choose,
    detect,
    formats,
    parse_lines,
    parse_text,
)

from .helpers import FIXTURES, fixture_lines, fixture_text

EXPECTED_FORMAT = {
    "time_ms.txt": "time-ms",
    "loops_time.txt": "loops-time",
    "metric_lines.txt": "metric-lines",
    "yieldloop.txt": "metric-lines",
    "pipeline.txt": "metric-lines",
    "kernel_time.txt": "kernel-time",
    "kernel_table.txt": "kernel-table",
    "results_file.txt": "results-file",
    "results_mail.txt": "results-file",
    "burn.txt": "burn",
    "sweep.txt": "sweep",
    "vmstat.txt": "vmstat",
    "vmstat_time.txt": "vmstat",
    "normalized.txt": "normalized",
    "normalized_before_after.txt": "normalized",
    "runqueue.txt": "param-table",
    "perf_messaging.txt": "perf-bench-sched",
    "perf_pipe.txt": "perf-bench-sched",
    "hackbench.txt": "hackbench",
    "schbench.txt": "schbench",
    "schbench_old.txt": "schbench",
    "sysbench_cpu.txt": "sysbench",
    "sysbench_threads.txt": "sysbench",
    "hyperfine.json": "hyperfine-json",
    "schedbench.csv": "schedbench-csv",
    "reference_threadtest_2cpu_core2.csv": "schedbench-csv",
    "reference_threadtest_p4ht.csv": "schedbench-csv",
    "schedbench.json": "schedbench-json",
    "simulator.json": "schedbench-json",
    "simulator_sweep.ndjson": "schedbench-json",
    "mmtests.txt": "mmtests",
    "robot_report.txt": "robot",
    "lkp_stats.json": "lkp-stats",
    "lkp_output.txt": "lkp-output",
    "stress_ng.txt": "stress-ng",
    "tbench.txt": "dbench",
    "cyclictest.txt": "cyclictest",
}
# Formats that frame another tool's output: the inner tool's detector scores high too, and the
# framing wins by ranking first (see parsers.lkp), not by a margin.
WRAPPERS = {"lkp-output"}


def test_every_fixture_is_listed():
    assert sorted(path.name for path in FIXTURES.iterdir()) == sorted(EXPECTED_FORMAT)


def test_every_format_has_a_fixture_and_metadata():
    assert set(EXPECTED_FORMAT.values()) == set(formats())
    for name, parser in PARSERS.items():
        assert parser.name == name
        assert isinstance(parser.version, int) and parser.version >= 1
        assert parser.description


@pytest.mark.parametrize(("fixture", "expected"), sorted(EXPECTED_FORMAT.items()))
def test_every_fixture_detected_as_its_own_format(fixture, expected):
    ranked = detect(fixture_text(fixture))
    assert ranked[0][0] == expected
    # A clear winner: no other format within 0.15 of it.
    assert expected in WRAPPERS or \
        all(score < ranked[0][1] - 0.15 for _, score in ranked[1:]), ranked


@pytest.mark.parametrize(("fixture", "expected"), sorted(EXPECTED_FORMAT.items()))
def test_parse_text_and_parse_lines_agree(fixture, expected):
    from_text = parse_text(fixture_text(fixture))
    from_lines = parse_lines(fixture_lines(fixture), head=fixture_text(fixture)[:65536])
    sniffed = parse_lines(fixture_lines(fixture))
    assert isinstance(from_text, ParseResult) and from_text.format == expected
    assert from_text == from_lines == sniffed
    json.dumps(from_text.to_dict())  # preview/API-ready without further conversion


def test_detect_is_sorted_best_first():
    scores = [score for _, score in detect(fixture_text("results_file.txt"))]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores)


def test_forced_format_wins_over_detection():
    result = parse_text("time 5 ms\n", format="results-file")
    assert result.format == "results-file"
    assert choose("anything", "vmstat") is PARSERS["vmstat"]


def test_unknown_forced_format_lists_formats():
    with pytest.raises(UnknownFormat) as caught:
        parse_text("time 5 ms", format="excel")
    assert caught.value.formats == formats() and caught.value.best_guess == "time-ms"
    assert isinstance(caught.value, ParseError)


def test_unrecognised_text_gives_unknown_format_with_best_guess():
    with pytest.raises(UnknownFormat) as caught:
        parse_text("Dear list,\nthe numbers are in the attachment.\n")
    assert caught.value.formats == formats()
    assert caught.value.best_guess is None
    with pytest.raises(UnknownFormat) as caught:
        parse_text('{"hello": 1}')
    assert caught.value.best_guess == "schedbench-json"  # JSON, but too unsure to pick it


@pytest.mark.parametrize("text", ["", "   \n\r\n\t\n"])
def test_empty_input(text):
    with pytest.raises(ParseError, match="empty"):
        parse_text(text)
    for name in formats():
        with pytest.raises(ParseError):
            PARSERS[name].parse(io.StringIO(text))


def test_binary_junk():
    junk = "time 5 ms\n\x00\x01\x02\xff\n"
    with pytest.raises(ParseError):
        parse_text(junk)
    for name in formats():
        with pytest.raises(ParseError) as caught:
            PARSERS[name].parse(io.StringIO(junk))
        if "NUL" in caught.value.message:
            assert caught.value.line == 2


def test_non_text_input():
    with pytest.raises(ParseError):
        parse_text(b"time 5 ms")
    with pytest.raises(ParseError):
        PARSERS["time-ms"].parse([1, 2, 3])
    with pytest.raises(ParseError):
        PARSERS["time-ms"].parse(None)


def test_warnings_are_capped():
    lines = ["time 5 ms", *(["chatter"] * 1000)]
    result = PARSERS["time-ms"].parse(lines)
    assert len(result.warnings) == 201 and result.warnings[-1] == "... and 800 more warnings"


def test_parse_error_attributes():
    error = ParseError("bad", line=3)
    assert (error.message, error.line, str(error)) == ("bad", 3, "line 3: bad")
    assert ParseError("bad").line is None and str(ParseError("bad")) == "bad"


@pytest.mark.parametrize("fixture", ["reference_threadtest_p4ht.csv", "schedbench.json",
                                     "hyperfine.json", "time_ms.txt"])
def test_byte_order_mark_is_ignored(fixture):
    text = fixture_text(fixture)
    assert parse_text("\ufeff" + text) == parse_text(text)


def test_old_mac_line_endings():
    result = parse_text("2.6.22\rtime 5 ms\rtime 6 ms\r")
    assert result.format == "results-file"
    assert list(result.results[0].metrics["time_ms"]) == [5, 6] and result.results[0].line == 2

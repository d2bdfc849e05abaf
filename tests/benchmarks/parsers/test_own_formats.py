"""schedbench CSV (including the shared reference files verbatim) and schedbench JSON."""

import json
from pathlib import Path

import pytest

from benchmarks.parsers import PARSERS, ParseError, parse_text

from .helpers import fixture_text, parse_fixture, summary

SHARED_REFERENCE = Path("/work/shared/reference")


def test_reference_core2_sweep_csv():
    result = parse_fixture("schedbench-csv", "reference_threadtest_2cpu_core2.csv")
    assert len(result.results) == 35 and result.warnings == []
    first = result.results[0]
    assert (first.line, first.kernel, first.params) == (
        8, "2.6.22", {"loops": 10000, "iterations": 500, "cpus": 2})
    assert list(first.metrics["time_ms"]) == [3332]
    assert first.benchmark is None and first.tunables == {}
    last = result.results[-1]
    assert (last.kernel, last.params["loops"], list(last.metrics["time_ms"])) == (
        "2.6.24-git19", 40_000_000, [110360])
    # 2.6.24 has no 5M row in the reference: the hole stays a hole.
    five_million = [r.kernel for r in result.results if r.params["loops"] == 5_000_000]
    assert five_million == ["2.6.22", "2.6.23", "2.6.24-git19"]


def test_reference_p4ht_csv_groups_runs_into_samples():
    result = parse_fixture("schedbench-csv", "reference_threadtest_p4ht.csv")
    assert summary(result) == [
        (5, "2.6.22.17-smp", {}, {"time_ms": [798, 780, 702]}),
        (8, "2.6.22.17-cfs-v24.1-smp", {}, {"time_ms": [562, 551, 551]}),
        (11, "2.6.23.15-smp", {}, {"time_ms": [254, 254, 293]}),
        (14, "2.6.23.15-cfs-v24-smp", {}, {"time_ms": [764, 791, 780]}),
        (17, "2.6.24.1-smp", {}, {"time_ms": [815, 820, 771]}),
        (20, "2.6.25-smp", {}, {"time_ms": [29, 61, 72]}),
    ]


@pytest.mark.skipif(not SHARED_REFERENCE.is_dir(), reason="shared reference data not present")
@pytest.mark.parametrize("name", ["threadtest_2cpu_core2.csv", "threadtest_p4ht.csv"])
def test_shared_reference_files_auto_detect_unchanged(name):
    result = parse_text((SHARED_REFERENCE / name).read_text())
    assert result.format == "schedbench-csv"


def test_own_csv_dimensions_tunables_labels_and_holes():
    result = parse_fixture("schedbench-csv", "schedbench.csv")
    assert [(r.line, r.kernel, r.tunables, list(r.metrics["time_ms"])) for r in
            result.results] == [
        (4, "2.6.23", {"sched_compat_yield": 0}, [4581, 4602]),
        (6, "2.6.23", {"sched_compat_yield": 1}, [3990]),
        (9, "2.6.24", {"sched_compat_yield": 1}, [10765]),
    ]
    first = result.results[0]
    assert (first.benchmark, first.machine, first.params) == (
        "threadtest", "core2-laptop", {"loops": 1_000_000})
    assert first.labels == {"note": "yield-in-spin"}
    assert result.warnings == ["line 8: row without any metric value"]


def test_csv_explicit_prefixes_and_param_suffix_exception():
    text = "policy,burn_us,param.mode,tunable.HZ,metric.score,label.who,ops_per_s\n" \
           "SCHED_BATCH,100,fast,250,7,me,1e3\n"
    (only,) = PARSERS["schedbench-csv"].parse(text.splitlines()).results
    assert only.policy == "SCHED_BATCH"
    assert only.params == {"burn_us": 100, "mode": "fast"}
    assert only.tunables == {"HZ": 250} and only.labels == {"who": "me"}
    assert list(only.metrics["score"]) == [7] and list(only.metrics["ops_per_s"]) == [1000]
    assert only.units["ops_per_s"] == "1/s" and only.higher_is_better["ops_per_s"] is True


@pytest.mark.parametrize(("text", "line", "message"), [
    ("kernel,loops\n2.6.22,5\n", 1, "no metric column"),
    ("kernel,time_ms,time_ms\n", 1, "duplicate"),
    ("kernel,time ms\n", 1, "header cells"),
    ("# c\nkernel,time_ms\n2.6.22,5\n2.6.23,5,6\n", 4, "expected 2 fields"),
    ("kernel,time_ms\n2.6.22,fast\n", 2, "value for time_ms"),
    ("kernel,time_ms\n2.6.22,nan\n", 2, "value for time_ms"),
    ("kernel,run,time_ms\n2.6.22,first,5\n", 2, "repeat index"),
    ('kernel,time_ms\n"2.6.22,5\n', 2, "expected 2 fields"),
])
def test_csv_errors(text, line, message):
    with pytest.raises(ParseError, match=message) as caught:
        PARSERS["schedbench-csv"].parse(text.splitlines(keepends=True))
    assert caught.value.line == line


def test_own_json_runs():
    result = parse_fixture("schedbench-json", "schedbench.json")
    burn, plain = result.results
    assert (burn.benchmark, burn.kernel, burn.machine, burn.policy) == (
        "threadtest-burn", "2.6.24-git19", "core2-laptop", "SCHED_OTHER")
    assert burn.params == {"iterations": 100, "burn_us": 100000}
    assert burn.tunables == {"sched_child_runs_first": 1}
    assert list(burn.metrics["idx"]) == [1.83, 1.84] and burn.higher_is_better["idx"] is True
    assert burn.series == {"vmstat": {"columns": ["r", "cs"], "rows": [[2, 5000], [3, 5100]]}}
    assert plain.machine == "p4-ht" and list(plain.metrics["time_ms"]) == [798, 780, 702]


def test_simulator_json_object():
    (only,) = parse_fixture("schedbench-json", "simulator.json").results
    assert (only.benchmark, only.kernel) == ("threadtest", "2.6.24")
    assert only.params == {"loops": 10000, "iterations": 500}
    assert list(only.metrics["time_ms"]) == [8953.0, 8990.5]
    assert only.labels["simulator_version"] == "0.1.0" and only.labels["seed"] == "42"
    assert only.series["vmstat"]["columns"] == ["r", "b", "cs", "us", "sy", "id"]
    assert only.series["counters"] == {
        "columns": ["events", "context_switches", "migrations", "wakeups"],
        "rows": [[120000, 4012, 500, 1000]]}
    assert only.series["groups"]["rows"][1] == ["child", 40.25, 3990.0]


def test_simulator_sweep_ndjson_keeps_line_numbers():
    result = parse_fixture("schedbench-json", "simulator_sweep.ndjson")
    assert [(r.line, r.kernel, r.params["loops"]) for r in result.results] == [
        (1, "2.6.22", 10000), (2, "2.6.22", 1000000), (4, "2.6.24", 10000)]


def test_json_list_of_runs_and_single_run():
    run = {"benchmark": "b", "kernel": "6.6.0", "metrics": {"time_ms": 5}}
    assert len(PARSERS["schedbench-json"].parse([json.dumps([run, run])]).results) == 2
    (only,) = PARSERS["schedbench-json"].parse(json.dumps(run, indent=2).splitlines()).results
    assert list(only.metrics["time_ms"]) == [5]


@pytest.mark.parametrize(("document", "message"), [
    ({"format": "other", "runs": []}, "unsupported format"),
    ({"runs": {}}, "must be a list"),
    ({"runs": [{"kernel": 2.6, "metrics": {"t_ms": [1]}}]}, "kernel must be a string"),
    ({"runs": [{"metrics": {"t_ms": ["1"]}}]}, "must be a number"),
    ({"runs": [{"metrics": {"t_ms": {"values": [1], "unit": 3}}}]}, "unit must be a string"),
    ({"runs": [{"metrics": {"t_ms": [1]}, "params": {"x": [1]}}]}, "must be a number or"),
    ({"runs": [{"metrics": {"t_ms": [1]}, "params": []}]}, "must be an object"),
    ({"runs": [{"metrics": {"t_ms": [1]},
                "series": {"vmstat": {"columns": ["r"], "rows": [[1, 2]]}}}]}, "a row has 2"),
    ({"runs": [{"metrics": {}}]}, "no metric values"),
    ({"runs": []}, "no .* results found"),
    ({"runs": [{"metrics": {"t_ms": [10 ** 400]}}]}, "must be a number"),
])
def test_json_wrong_types(document, message):
    with pytest.raises(ParseError, match=message):
        PARSERS["schedbench-json"].parse(json.dumps(document).splitlines())


@pytest.mark.parametrize(("lines", "line"), [
    (['{"metrics": {"t_ms": [1]}}', '{"metrics": {"t_ms": [NaN]}}'], 2),
    (['{"metrics": {"t_ms": [1]}}', "", '{"metrics": '], 3),
    (["{", '  "runs": [', "    {,}", "  ]", "}"], 3),
])
def test_json_errors_name_their_line(lines, line):
    with pytest.raises(ParseError) as caught:
        PARSERS["schedbench-json"].parse(lines)
    assert caught.value.line == line


def test_quoted_json_lines_are_skipped():
    text = fixture_text("schedbench.json").replace('"format"', '"format"', 1)
    lines = ["> quoted preface\n", *text.splitlines(keepends=True)]
    result = PARSERS["schedbench-json"].parse(lines)
    assert result.warnings == ["line 1: skipped quoted line"]

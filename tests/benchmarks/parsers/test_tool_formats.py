"""perf bench sched, hackbench, schbench, sysbench and hyperfine JSON."""

import pytest

from benchmarks.parsers import PARSERS, ParseError

from .helpers import parse_fixture, summary


def test_perf_messaging_repeats_share_a_result_set():
    result = parse_fixture("perf-bench-sched", "perf_messaging.txt")
    (only,) = result.results
    assert only.benchmark == "perf-bench-sched-messaging"
    assert only.params == {"fds": 20, "groups": 10, "tasks": 400}
    assert only.labels == {"mode": "processes"}
    assert list(only.metrics["total_time_s"]) == [0.158, 0.162]
    assert only.line == 1


def test_perf_pipe_metrics():
    (only,) = parse_fixture("perf-bench-sched", "perf_pipe.txt").results
    assert only.benchmark == "perf-bench-sched-pipe"
    assert only.params == {"ops": 1_000_000}
    assert {m: list(v) for m, v in only.metrics.items()} == {
        "total_time_s": [5.855], "op_us": [5.855061], "ops_per_s": [170792]}
    assert only.higher_is_better == {"total_time_s": False, "op_us": False, "ops_per_s": True}


def test_perf_sched_all_gives_both_benchmarks():
    text = (open_fixture("perf_messaging.txt") + open_fixture("perf_pipe.txt"))
    result = PARSERS["perf-bench-sched"].parse(text.splitlines())
    assert [r.benchmark for r in result.results] == ["perf-bench-sched-messaging",
                                                     "perf-bench-sched-pipe"]


def open_fixture(name):
    from .helpers import fixture_text

    return fixture_text(name)


def test_hackbench_runs_grouped_by_setup():
    result = parse_fixture("hackbench", "hackbench.txt")
    process, threaded = result.results
    assert process.params == {"mode": "process", "groups": 10, "fds": 40, "tasks": 400,
                              "loops": 100, "message_bytes": 100}
    assert threaded.params["mode"] == "thread" and process.labels == {}
    # The banner never says pipe or socket: that comes from the upload, else it is unassigned.
    assert process.missing == ["param.transport"] == threaded.missing
    assert list(process.metrics["time_s"]) == [0.512, 0.498]
    assert list(threaded.metrics["time_s"]) == [1.204]
    assert (process.line, threaded.line) == (3, 9)


def test_hackbench_classic_output_and_bad_time():
    result = PARSERS["hackbench"].parse(["Running with 10*40 (== 400) tasks.", "Time: 1.5"])
    assert result.results[0].params == {"groups": 10, "fds": 40, "tasks": 400}
    with pytest.raises(ParseError) as caught:
        PARSERS["hackbench"].parse(["Time: 1.5", "Time: soon"])
    assert caught.value.line == 2


def test_schbench_sections_become_prefixed_metrics():
    (only,) = parse_fixture("schbench", "schbench.txt").results
    metrics = {m: list(v) for m, v in only.metrics.items()}
    assert metrics["wakeup_p50_us"] == [7] and metrics["wakeup_p99_9_us"] == [33]
    assert metrics["request_p99_us"] == [10100] and metrics["request_max_us"] == [13001]
    assert metrics["rps_p50"] == [3468] and metrics["average_rps"] == [3467.2]
    assert only.units["wakeup_p90_us"] == "us" and only.units["average_rps"] == "1/s"
    assert only.higher_is_better["rps_p50"] is True
    assert only.higher_is_better["wakeup_p99_us"] is False
    assert only.params == {"runtime_s": 30, "worker_threads": 16} and only.line == 2


def test_schbench_old_layout():
    (only,) = parse_fixture("schbench", "schbench_old.txt").results
    assert list(only.metrics) == ["p50_us", "p75_us", "p90_us", "p95_us", "p99_us", "p99_5_us",
                                  "p99_9_us", "min_us", "max_us"]
    assert list(only.metrics["p99_us"]) == [90]


def test_schbench_percentile_before_heading():
    with pytest.raises(ParseError) as caught:
        PARSERS["schbench"].parse(["hello", "\t50.0th: 7"])
    assert caught.value.line == 2


def test_sysbench_cpu():
    (only,) = parse_fixture("sysbench", "sysbench_cpu.txt").results
    assert only.params == {"threads": 4, "prime_limit": 10000, "test": "cpu"}
    assert only.labels == {} and only.missing == []
    assert {m: list(v) for m, v in only.metrics.items()} == {
        "events_per_s": [4581.2], "total_time_s": [10.0012], "events": [45819],
        "latency_min_ms": [0.78], "latency_avg_ms": [0.87], "latency_max_ms": [20.11],
        "latency_p95_ms": [1.10], "latency_sum_ms": [39994.57]}
    assert only.higher_is_better["events_per_s"] is True


def test_sysbench_old_threads_test_reads_what_it_printed():
    (only,) = parse_fixture("sysbench", "sysbench_threads.txt").results
    assert only.params == {"threads": 64, "test": "threads", "yields": 1000, "locks": 8}
    assert list(only.metrics["latency_p95_ms"]) == [80.12]
    assert "events_per_s" not in only.metrics  # not printed: never computed into a result


def test_sysbench_two_runs_same_setup_are_two_samples():
    text = open_fixture("sysbench_cpu.txt") * 2
    (only,) = PARSERS["sysbench"].parse(text.splitlines()).results
    assert list(only.metrics["events_per_s"]) == [4581.2, 4581.2]


def test_hyperfine_export():
    result = parse_fixture("hyperfine-json", "hyperfine.json")
    first, second = result.results
    assert first.benchmark == "threadtest"
    assert first.labels == {"command": "./threadtest 10000"}
    assert first.params == {"loops": 10000}
    assert list(first.metrics["time_s"]) == [3.332, 3.337, 3.349]
    assert list(second.metrics["time_s"]) == [4.015]


@pytest.mark.parametrize(("text", "message"), [
    ('{"results": {}}', "must be a list"),
    ('{"results": [{"command": 5, "times": [1]}]}', "must be a string"),
    ('{"results": [{"command": "x", "times": ["1"]}]}', "must be a number"),
    ('{"results": [{"command": "x", "times": [true]}]}', "must be a number"),
    ('{"results": []}', "no .* results found"),
    ('[1, 2]', "must be an object"),
    ('{"results": [\n  {"command": "x",,}\n]}', "invalid JSON"),
])
def test_hyperfine_bad_documents(text, message):
    with pytest.raises(ParseError, match=message):
        PARSERS["hyperfine-json"].parse(text.splitlines())


def test_hyperfine_syntax_error_line():
    with pytest.raises(ParseError) as caught:
        PARSERS["hyperfine-json"].parse(['{"results": [', '  {"command": "x",,}', "]}"])
    assert caught.value.line == 2


def test_perf_malformed_total_time():
    lines = ["# Running 'sched/messaging' benchmark:", "", "     Total time: soon [sec]"]
    with pytest.raises(ParseError) as caught:
        PARSERS["perf-bench-sched"].parse(lines)
    assert caught.value.line == 3


def test_metric_lines_as_the_simulator_prints_them():
    result = parse_fixture("metric-lines", "metric_lines.txt")
    repeats = result.results[0]
    assert summary(result) == [
        (1, None, {}, {"throughput_ops_per_s": [70590.798, 70591.746],
                       "latency_us": [15.97, 15.97]}),
        (9, None, {"loops": 10000}, {"time_ms": [12.5]}),
    ]
    assert repeats.units == {"throughput_ops_per_s": "1/s", "latency_us": "us"}
    assert repeats.higher_is_better == {"throughput_ops_per_s": True, "latency_us": False}
    assert result.warnings == ["line 7: ignored unrecognised line", "line 8: skipped quoted line"]


def test_metric_lines_reject_infinite_values():
    with pytest.raises(ParseError) as caught:
        PARSERS["metric-lines"].parse(["time_ms: 5", "time_ms: 1e999"])
    assert caught.value.line == 2


def test_several_pairs_per_line_as_the_harness_yieldloop_prints_them():
    result = parse_fixture("metric-lines", "yieldloop.txt")
    assert [(r.params, r.line) for r in result.results] == [
        ({"tasks": 3, "cpus": 2}, 1), ({"tasks": 1, "cpus": 2}, 4)]
    three_tasks, one_task = result.results
    assert list(three_tasks.metrics["switches_per_s"]) == [312146, 309667]
    assert three_tasks.units["yields_per_s"] == "1/s"
    assert list(one_task.metrics["context_switches"]) == [12]  # fewer tasks than CPUs


def test_units_in_parentheses_and_word_values_as_the_pipeline_demo_prints_them():
    result = parse_fixture("metric-lines", "pipeline.txt")
    [repeats] = result.results
    assert list(repeats.metrics["time_ms"]) == [21100, 20950]
    assert repeats.units["time_ms"] == "ms"
    assert repeats.params == {"stages": 4, "input_mb": 16, "compressor": "bzip2"}

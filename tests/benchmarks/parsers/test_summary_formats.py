"""mmtests compare tables, kernel test robot reports and LKP result files (written fixtures,
see tests/fixtures/written/README.md): read right quoted or not, or refused with the line."""

from pathlib import Path

import pytest

from benchmarks.parsers import ParseError, parse_text

WRITTEN = Path(__file__).resolve().parents[2] / "fixtures" / "written"


def text_of(name: str) -> str:
    # As an upload is read: UTF-8, undecodable bytes (a latin-1 ±) replaced.
    return (WRITTEN / name).read_bytes().decode("utf-8", errors="replace")


def by_column(result) -> dict:
    return {(r.kernel, r.label, tuple(sorted(r.params.items()))): r for r in result.results}


@pytest.mark.parametrize("name", ["mmtests/hackbench_two_configs.txt",
                                  "mmtests/hackbench_quoted.txt"])
def test_mmtests_columns_are_kernel_and_config_with_summaries(name):
    result = parse_text(text_of(name))
    assert result.format == "mmtests"
    sets = by_column(result)
    fix4 = sets[("6.1.0", "fix-v2r1", (("groups", 4),))]
    assert fix4.benchmark == "hackbench-process-pipes"
    assert fix4.summaries["time_s.amean"] == {
        "statistic": "amean", "value": 0.625, "stddev_pct": 0.61, "n": None,
        "significant": True}
    assert fix4.summaries["time_s.min"]["value"] == 0.6201
    assert fix4.summaries["time_s.max"]["significant"] is False
    assert not fix4.metrics  # never expanded into samples
    base1 = sets[("6.1.0", "vanilla", (("groups", 1),))]
    assert base1.baseline and base1.summaries["time_s.amean"]["significant"] is None
    assert base1.summaries["time_s.bamean-95"] == {
        "statistic": "bamean-95", "value": 0.235, "stddev_pct": None, "n": None,
        "significant": None}
    assert base1.higher_is_better["time_s.amean"] is False
    # the Duration block: one measurement per column, of the benchmark above it
    durations = sets[("6.1.0", "fix-v2r1", ())]
    assert durations.benchmark == "hackbench-process-pipes"
    assert list(durations.metrics["duration_system_s"]) == [1801.56]
    assert len(result.results) == 10


def test_mmtests_three_tab_separated_columns():
    sets = by_column(parse_text(text_of("mmtests/hackbench_three_columns_tabs.txt")))
    assert sets[("6.7.0-rc1", "vanilla", (("groups", 8),))].summaries["time_s.amean"][
        "value"] == 1.21
    eevdf = sets[("6.6.0", "eevdf-v1", (("groups", 8),))].summaries["time_s.amean"]
    assert (eevdf["significant"], eevdf["stddev_pct"]) == (True, 0.47)


def test_mmtests_several_blocks_direction_from_the_table():
    sets = by_column(parse_text(text_of("mmtests/two_blocks.txt")))
    tbench = sets[("6.1.0", "fix-v2r1", (("clients", 4),))]
    assert tbench.benchmark == "tbench4"
    assert tbench.summaries["throughput_mb_per_s.hmean"]["value"] == 1712.8
    assert tbench.higher_is_better["throughput_mb_per_s.hmean"] is True
    assert len(sets) == 12


@pytest.mark.parametrize(("name", "line"), [
    ("mmtests/bad_cell_count.txt", 5), ("mmtests/bad_change.txt", 5),
    ("mmtests/bad_unexplained.txt", 5), ("mmtests/bad_no_header.txt", 2),
    ("mmtests/mail_two_blocks.txt", 3),  # prose with numbers: only a mail import skips it
    ("robot/bad_qp_leftover.txt", 58), ("robot/bad_change.txt", 59),
    ("robot/bad_torn_row.txt", 62),
])
def test_malformed_tables_are_refused_with_the_line(name, line):
    with pytest.raises(ParseError) as caught:
        parse_text(text_of(name))
    assert caught.value.line == line


@pytest.mark.parametrize("name", ["robot/hackbench_report.txt",
                                  "robot/hackbench_report_latin1.txt",
                                  "robot/hackbench_report_qp.txt",
                                  "robot/hackbench_report_quoted.txt"])
def test_robot_report_reads_right_in_every_encoding(name):
    result = parse_text(text_of(name))
    assert result.format == "robot"
    runs = {(r.benchmark, r.kernel): r for r in result.results}
    assert len(runs) == 4
    base = runs[("hackbench", "5a1b2c3d4e")]
    tested = runs[("hackbench", "9f8e7d6c5b")]
    assert base.baseline and not tested.baseline
    assert tested.commit == {"id": "9f8e7d6c5b",
                             "subject": "sched/fair: Rework wakeup preemption"}
    assert base.summaries["hackbench.throughput"] == {
        "statistic": "mean", "value": 123456.0, "stddev_pct": 2.0, "n": 6,
        "significant": None}
    assert tested.summaries["hackbench.throughput"]["stddev_pct"] is None
    assert tested.summaries["hackbench.time.voluntary_context_switches"]["value"] == 1.109e8
    assert tested.summaries["mpstat.cpu.all.irq%"]["value"] == 0.30
    assert tested.units["mpstat.cpu.all.irq%"] == "%"
    assert tested.summaries["sched_debug.cpu.nr_switches.stddev"]["stddev_pct"] == 5.0
    assert tested.higher_is_better["hackbench.throughput"] is True  # from the headline
    assert tested.params["mode"] == "process" and tested.params["nr_threads"] == "100%"
    assert "tbox_group" not in tested.params and "testcase" not in tested.params
    assert tested.machine == {"name": "lkp-skl-fpga01", "sockets": 2, "memory_mb": 196608,
                              "cpu_model": "Intel(R) Xeon(R) Platinum 8170 CPU @ 2.10GHz "
                                           "(Skylake)"}
    assert any("download.01.org/0day-ci" in link for link in tested.provenance["links"])
    wis = runs[("will-it-scale", "9f8e7d6c5b")]
    assert wis.machine["name"] == "lkp-icl-2sp2" and wis.params["test"] == "sched_yield"
    assert wis.summaries["will-it-scale.per_thread_ops"]["n"] is None  # no fail:runs there
    assert not any(r.metrics for r in result.results)


def test_lkp_stats_json_samples_and_testcase():
    result = parse_text(text_of("lkp/stats.json"))
    (run,) = result.results
    assert result.format == "lkp-stats" and run.benchmark == "hackbench"
    assert list(run.metrics["hackbench.time.voluntary_context_switches"]) == [
        110854123.0, 111012345.0]


def test_lkp_instances_are_kept_apart_iterations_are_repeats():
    result = parse_text(text_of("lkp/hackbench_instances.txt"))
    assert result.format == "lkp-output"
    by_instance = {r.params["instance"]: list(r.metrics["time_s"]) for r in result.results}
    assert by_instance == {0: [0.512, 0.498], 1: [0.731, 0.744]}


def test_lkp_stats_json_refuses_non_numbers():
    with pytest.raises(ParseError, match="hackbench.throughput"):
        parse_text('{"hackbench.throughput": "fast", "mpstat.cpu.all.irq%": 0.3}',
                   format="lkp-stats")

"""The run page's verdicts are read with SQL (regressions/page_reads.py) and from the summaries
the page has already read; a submission's with the ORM (verdicts.py). Both must give the same
verdicts, and so the same section, over runs of every kind: several metrics, withdrawn runs in
the series and a withdrawn run's own page, bisection runs and kernels between releases left
out, params in another key order, a benchmark's own thresholds, subsampled values, published
tables, and runs with nothing older (no verdict: nothing read beyond the series)."""

import pytest
from django.template.loader import render_to_string
from django.utils import timezone

from benchmarks.models import Run
from benchmarks.services.catalog import (
    benchmark_get_or_create,
    kernel_get_or_create,
    machine_get_or_create,
)
from benchmarks.services.runs import MetricInput, Provenance, run_create
from bisection.models import Bisection, BisectRun
from regressions import page_reads, sections, verdicts
from regressions.models import BenchmarkThresholds
from regressions.series import SeriesId
from regressions.services import thresholds_for
from tests.benchmarks.test_published_summaries import upload
from tests.factories import CORE2

pytestmark = pytest.mark.django_db

KERNELS = ("2.6.20", "2.6.21", "2.6.22-rc1-00042-gabcdef123456", "2.6.22", "2.6.23", "2.6.24")


def _run(kernel, level, *, repeats=5, params=None, tunables=None, benchmark="hackbench"):
    """A run with two metrics: time (lower is better) and throughput (higher is better)."""
    spread = [(i % 5 - 2) * 0.004 for i in range(repeats)]
    return run_create(
        benchmark=benchmark_get_or_create(name=benchmark),
        kernel=kernel_get_or_create(version=kernel),
        machine=machine_get_or_create(spec=CORE2),
        metrics={"time_ms": MetricInput([level * (1 + d) for d in spread], "ms"),
                 "ops": MetricInput([1e6 / level * (1 - d) for d in spread], "ops/s", True)},
        provenance=Provenance(source="api"), policy="",
        params=params if params is not None else {"groups": 4, "loops": 100},
        tunables=tunables or {})


@pytest.fixture
def series(django_user_model):
    """Release kernels 2.6.20-2.6.24 (2.6.23 and on 20% slower), and around them what a
    series must leave out or keep."""
    runs = {kernel: _run(kernel, 1200.0 if kernel >= "2.6.23" else 1000.0,
                         params={"loops": 100, "groups": 4} if kernel == "2.6.21" else None)
            for kernel in KERNELS}  # 2.6.21's params in another key order: the same setup
    owner = django_user_model.objects.create_user("owner")
    withdrawn = _run("2.6.22", 5000.0, repeats=6)
    Run.objects.filter(pk__in=[withdrawn.pk, runs["2.6.24"].pk]).update(
        withdrawn=timezone.now())
    bisection = Bisection.objects.create(owner=owner, good="2.6.20", bad="2.6.23",
                                         good_ref="v2.6.20", bad_ref="v2.6.23")
    joined = _run("2.6.20", 9000.0, repeats=7)
    BisectRun.objects.create(bisection=bisection, run=joined, commit="v2.6.20", side="good")
    others = [_run("2.6.23", 1100.0, tunables={"sched_migration_cost_ns": 1}),
              _run("2.6.23", 1150.0, params={"groups": 8, "loops": 100}),
              _run("2.6.25", 1300.0, repeats=2500),  # its own values subsampled (stride 2)
              _run("2.6.22", 1000.0, repeats=2600, benchmark="pipetest"),
              _run("2.6.23", 1250.0, repeats=3, benchmark="pipetest"),
              _run("2.6.9", 1000.0, benchmark="pipetest")]  # before 2.6.22 (not as text)
    return [*runs.values(), withdrawn, joined, *others]


def _page_run(run):
    return Run.objects.with_detail_relations().get(pk=run.pk)


def _section_html(entries, run) -> str:
    rows = [sections._row(entry) for entry in entries]
    return render_to_string("regressions/_run_verdicts.html",
                            {"section": {"run": run, "verdicts": rows}})


def _assert_same_verdicts(runs):
    for run in runs:
        fast = verdicts.run_page_verdicts(_page_run(run))
        plain = verdicts.runs_verdicts([run])
        assert fast == plain, run.kernel.version
        assert _section_html(fast, run) == _section_html(plain, run)


def test_the_page_gives_a_submissions_verdicts_over_varied_runs(series):
    _assert_same_verdicts(series)
    by_kernel = {run.kernel.version: verdicts.run_page_verdicts(_page_run(run))
                 for run in series[:6]}
    assert by_kernel["2.6.20"] == []  # nothing older
    withdrawn_page = by_kernel["2.6.24"]  # a withdrawn run's own page still judges it
    assert {(e["metric"], e["against"]) for e in withdrawn_page} == {
        (metric, kernel) for metric in ("ops", "time_ms") for kernel in ("2.6.20", "2.6.23")}
    assert [e["metric"] for e in withdrawn_page] == ["ops", "ops", "time_ms", "time_ms"]
    assert any(e["regression"] for e in by_kernel["2.6.23"])
    tested = {e["against"]: e for e in by_kernel["2.6.23"] if e["metric"] == "time_ms"}
    assert tested["2.6.22"]["n_against"] == 5  # the withdrawn 2.6.22 run is not counted
    assert tested["2.6.20"]["n_against"] == 5  # nor the bisection's 2.6.20 run
    assert sorted(tested["2.6.20"]["against_runs"]) == [series[0].pk]
    assert "2.6.22-rc1-00042-gabcdef123456" not in {e["against"] for e in by_kernel["2.6.23"]}
    assert tested["2.6.22"]["thresholds"]["source"] == "default"


def test_kernels_are_in_natural_order(series):
    newest = next(run for run in series if run.kernel.version == "2.6.23"
                  and run.benchmark.name == "pipetest")
    entries = verdicts.run_page_verdicts(_page_run(newest))
    assert {(e["role"], e["against"]) for e in entries} == {("baseline", "2.6.9"),
                                                            ("previous", "2.6.22")}


def test_a_benchmarks_own_thresholds_and_subsampled_values(series):
    hackbench = series[0].benchmark
    BenchmarkThresholds.objects.create(benchmark=hackbench, min_change=0.5, alpha=0.01,
                                       min_effect=0.2, min_repeats=3, verdict_alpha=0.1)
    _assert_same_verdicts(series)
    newest = next(run for run in series if run.kernel.version == "2.6.25")
    entries = verdicts.run_page_verdicts(_page_run(newest))
    assert {e["thresholds"]["source"] for e in entries} == {"benchmark"}
    assert not any(e["regression"] for e in entries)  # a 20% change is under min_change 0.5
    assert {e["n"] for e in entries} == {2500}
    assert {tuple(e["n_tested"]) for e in entries} == {(1250, 5)}  # every second own value


def test_a_published_table_gets_the_same_summary_verdicts(api_client):
    body = upload(api_client, "mmtests/hackbench_two_configs.txt").json()
    runs = list(Run.objects.filter(pk__in=[r["id"] for r in body["runs"]]))
    _assert_same_verdicts(runs)
    assert any(e.get("summary") for run in runs
               for e in verdicts.run_page_verdicts(_page_run(run)))


def test_each_sql_read_reads_what_its_orm_read_reads(series):
    BenchmarkThresholds.objects.create(benchmark=series[0].benchmark, min_change=0.05,
                                       alpha=0.002, min_effect=0.3, min_repeats=4,
                                       verdict_alpha=0.05)
    for run in series:
        page_run = _page_run(run)
        assert page_reads.run_sizes([page_run]) == verdicts._orm_sizes([run])
        assert page_reads.run_sizes([run]) == verdicts._orm_sizes([run])  # not prefetched
        assert page_reads.thresholds(run.benchmark_id) == thresholds_for(run.benchmark_id)
        for summary in page_run.summaries.all():
            one = SeriesId.of(benchmark_id=run.benchmark_id, machine_id=run.machine_id,
                              metric_id=summary.metric_id, policy=run.policy,
                              params=run.params, tunables=run.tunables)
            groups = page_reads.series_kernels(one, exclude_run=run.pk)
            assert groups == verdicts._series_kernels(one, exclude_run=run.pk)
            for stride in (1, 2, 3):
                strides = {run_id: stride for group in groups for run_id in group.run_ids}
                strides[run.pk] = 1
                assert page_reads.read_values(summary.metric_id, strides) == \
                    verdicts._read_values(summary.metric_id, strides)


def test_query_counts(series, django_assert_num_queries):
    oldest, judged = _page_run(series[0]), _page_run(series[4])  # 2.6.20, 2.6.23
    with django_assert_num_queries(2):  # per metric the series' kernels, and nothing else
        assert sections.run_verdicts_section(oldest) is None
    # the thresholds once, then per metric the series' kernels and the values of the run and
    # of the kernels it is tested against (one stride)
    with django_assert_num_queries(5):
        section = sections.run_verdicts_section(judged)
    assert len(section.context["verdicts"]) == 4
    bare = Run.objects.select_related("kernel").get(pk=judged.pk)
    with django_assert_num_queries(6):  # without the page's summaries: read once
        assert sections.run_verdicts_section(bare).context == section.context

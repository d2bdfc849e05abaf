"""The run page shows the run's detection verdicts with their inputs (which runs, which test,
n, thresholds) and a button freezing the comparison that reproduces each, through the run page
section regressions registers (the core's page imports no feature)."""

import re

import numpy as np
import pytest
from django.test import Client

from benchmarks.models import Comparison, Run, Sample
from regressions import detect
from regressions.series import SeriesId, series_groups
from regressions.verdicts import run_page_verdicts, runs_verdicts
from tests.benchmarks.test_published_summaries import upload
from tests.regressions.conftest import step_series

pytestmark = pytest.mark.django_db


def verdict_rows(html: str) -> list[str]:
    section = re.search(r'<section class="panel" id="run-verdicts">.*?</section>', html, re.S)
    assert section, "no verdict section"
    return re.findall(r"<tr class=\"verdict-[^\"]+\">.*?</tr>", section.group(0), re.S)


def test_a_run_page_shows_its_verdicts_and_reproduces_one():
    runs = step_series()  # 2.6.20 .. 2.6.25, 30% slower from 2.6.24
    run = next(r for r in runs if r.kernel.version == "2.6.24")
    previous = next(r for r in runs if r.kernel.version == "2.6.23")
    verdicts = {v["role"]: v for v in runs_verdicts([run])}
    assert verdicts["previous"]["regression"] and verdicts["previous"]["against"] == "2.6.23"

    client = Client()
    rows = verdict_rows(client.get(run.get_absolute_url()).content.decode())
    assert len(rows) == 2  # against the baseline (2.6.20) and the previous kernel (2.6.23)
    row = next(r for r in rows if "2.6.23" in r)
    assert 'class="verdict-regression"' in row and ">regression<" in row
    assert verdicts["previous"]["test"] in row
    assert "n=5 against n=5" in row
    assert f'href="/runs/{previous.pk}/"' in row  # the runs it was tested against
    assert "change ≥" in row  # the thresholds that applied

    reply = client.post(f"/regressions/runs/{run.pk}/compare/",
                        {"metric": "time_ms", "against": "2.6.23"})
    assert reply.status_code == 302
    comparison = Comparison.objects.get()
    assert reply["Location"] == comparison.get_absolute_url()
    assert sorted(comparison.run_ids) == sorted([run.pk, previous.pk])
    assert comparison.spec["baseline"] == {"dim": "kernel", "value": "2.6.23"}
    assert comparison.spec["metric"] == "time_ms"
    assert f"{run.pk}/compare/" in row and 'name="against" value="2.6.23"' in row


def test_a_run_with_nothing_older_has_no_verdict_section(client):
    run = step_series(kernels=("2.6.20",))[0]
    assert 'id="run-verdicts"' not in client.get(run.get_absolute_url()).content.decode()


def test_a_published_column_says_summary_only_and_compares_by_label(api_client):
    body = upload(api_client, "mmtests/hackbench_two_configs.txt").json()
    fix4 = next(r["id"] for r in body["runs"]
                if r["label"] == "fix-v2r1" and r["params"] == {"groups": 4})
    vanilla4 = next(r["id"] for r in body["runs"]
                    if r["label"] == "vanilla" and r["params"] == {"groups": 4})
    html = Client().get(Run.objects.get(pk=fix4).get_absolute_url()).content.decode()
    row = next(r for r in verdict_rows(html) if ">time_s.amean<" in r)
    assert "summary only, no test" in row and f'href="/runs/{vanilla4}/"' in row
    reply = Client().post(f"/regressions/runs/{fix4}/compare/", {
        "metric": "time_s.amean", "against": "6.1.0", "against_label": "vanilla",
        "summary": "1"})
    assert reply.status_code == 302
    comparison = Comparison.objects.get()
    assert sorted(comparison.run_ids) == sorted([fix4, vanilla4])
    assert comparison.spec["x"] == "label"
    assert comparison.spec["baseline"] == {"dim": "label", "value": "vanilla"}


def test_an_unknown_metric_is_a_404(client):
    run = step_series(kernels=("2.6.20", "2.6.21"))[1]
    reply = client.post(f"/regressions/runs/{run.pk}/compare/",
                        {"metric": "nosuch", "against": "2.6.20"})
    assert reply.status_code == 404


def test_a_verdict_tests_the_values_the_series_read_gives(django_assert_num_queries):
    """The run page reads only the two kernels it tests against, subsampled as series_groups
    subsamples them (here 1,000 values a kernel, every second one kept): the same inputs, so
    the same verdicts as detection's own read of the whole series."""
    runs = step_series(repeats=1000, cv=0.05, factor=1.03)
    run = next(r for r in runs if r.kernel.version == "2.6.24")
    page_run = Run.objects.with_detail_relations().get(pk=run.pk)
    # the thresholds, the series' kernels and sizes (one statement on both databases), the
    # run's values (all) and both kernels' (every second: one query per stride); its metrics
    # with their sizes came with the page's run
    with django_assert_num_queries(4):
        entries = run_page_verdicts(page_run)
    assert entries == runs_verdicts([run])
    metric = run.summaries.get().metric
    series = SeriesId.of(benchmark_id=run.benchmark_id, machine_id=run.machine_id,
                         metric_id=metric.pk, policy=run.policy, params=run.params,
                         tunables=run.tunables)
    groups = {g.version: g for g in series_groups(series, exclude_run=run.pk)}
    own = np.array(sorted(Sample.objects.filter(run=run).values_list("index", "value")))[:, 1]
    assert {e["against"]: e["role"] for e in entries} == {"2.6.20": "baseline",
                                                         "2.6.23": "previous"}
    for entry in entries:
        group = groups[entry["against"]]
        assert group.array().size == 500  # stride 2: the kernel's values are subsampled
        expected = detect.verdict(own, group.array(), higher_is_better=False,
                                  sizes=(1000, group.size))
        assert (entry["change"], entry["p_value"], entry["regression"], entry["n_tested"]) == (
            expected.change, expected.p_value, expected.worse, list(expected.n_tested))
        assert entry["against_runs"] == group.run_ids

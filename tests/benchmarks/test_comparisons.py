"""Comparisons: statistics, natural order, exports that agree, frozen permalinks, clear 400s."""

import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

from benchmarks.analysis import stats
from benchmarks.comparisons.compute import compute
from benchmarks.comparisons.spec import SpecError, parse_spec
from benchmarks.models import Run
from benchmarks.templatetags.schedbench import num
from tests.factories import make_run

pytestmark = pytest.mark.django_db

OLD = [3332.0, 3350.0, 3301.0, 3390.0, 3345.0, 3360.0]
NEW = [8953.0, 9001.0, 8870.0, 8990.0, 9100.0, 8940.0]


@pytest.fixture
def sweep():
    """Two kernels by three loop sizes, six repeats each: a small regression hunt."""
    runs = {}
    for kernel, base in (("2.6.24", NEW), ("2.6.22", OLD)):
        for loops, factor in ((1_000_000, 1), (10_000_000, 3), (40_000_000, 10)):
            runs[(kernel, loops)] = make_run(kernel, [v * factor for v in base],
                                             params={"loops": loops, "iterations": 500})
    return runs


def spec(**overrides):
    return parse_spec({"filters": {"benchmark": "threadtest"}, "x": "param.loops",
                       "series": "kernel", **overrides})


def cell(result, x, series):
    return next(c for c in result["cells"] if c["x"] == x and c["series"] == series)


def test_cell_statistics_are_exact(sweep):
    result = compute(spec())
    old = cell(result, "1000000", "2.6.22")
    assert old["n"] == 6 and old["median"] == 3347.5
    assert old["mean"] == pytest.approx(3346.333, 1e-6)
    assert old["stdev"] == pytest.approx(np.std(OLD, ddof=1))
    assert old["min"] == 3301 and old["max"] == 3390 and old["value"] == old["median"]
    assert old["flags"] == []


def test_bootstrap_ci_is_seeded_and_brackets_the_median(sweep):
    first = compute(spec(error="ci95"))
    again = compute(spec(error="ci95"))
    low, high = cell(first, "1000000", "2.6.24")["ci95"]
    assert cell(again, "1000000", "2.6.24")["ci95"] == [low, high]
    assert min(NEW) <= low <= np.median(NEW) <= high <= max(NEW)
    # Reproduce it by hand from the same seed: the same resampling, the same percentiles.
    rng = np.random.default_rng(1234)
    draws = np.asarray(NEW)[rng.integers(0, 6, size=(2000, 6))]
    expected = np.percentile(np.median(draws, axis=1), [2.5, 97.5])
    assert stats.bootstrap_ci(np.asarray(NEW), "median", seed=1234) == pytest.approx(expected)


def test_baseline_ratio_mann_whitney_and_geomean(sweep):
    result = compute(spec(baseline={"dim": "kernel", "value": "2.6.22"}))
    new = cell(result, "1000000", "2.6.24")
    assert new["normalized"] == pytest.approx(np.median(NEW) / np.median(OLD))
    expected = scipy_stats.mannwhitneyu(NEW, OLD, alternative="two-sided").pvalue
    assert new["test"] == "mann-whitney-u" and new["p_value"] == pytest.approx(expected)
    assert new["effect"] == {"name": "rank-biserial", "value": 1.0}
    assert cell(result, "1000000", "2.6.22")["normalized"] == 1.0
    [geomean] = result["summary"]["geomean"]
    assert geomean["variant"] == "2.6.24" and geomean["cells"] == 3
    assert geomean["value"] == pytest.approx(np.median(NEW) / np.median(OLD))
    assert any("Mann-Whitney" in reason for reason in result["summary"]["tests"])


def test_tiny_samples_use_welch_and_say_so():
    make_run("2.6.22", [10.0, 11.0, 12.0])
    make_run("2.6.24", [20.0, 22.0, 21.0])
    result = compute(parse_spec({"filters": {"benchmark": "threadtest"},
                                 "baseline": {"dim": "kernel", "value": "2.6.22"}}))
    new = cell(result, "2.6.24", None)
    expected = scipy_stats.ttest_ind([20, 22, 21], [10, 11, 12], equal_var=False).pvalue
    assert new["test"] == "welch-t" and new["p_value"] == pytest.approx(expected)
    assert "n < 5, needs more runs" in new["flags"]
    assert any("Welch" in reason for reason in result["summary"]["tests"])


def test_noisy_cells_are_flagged():
    make_run("2.6.25", [29, 61, 72, 50, 40])
    result = compute(parse_spec({"filters": {"benchmark": "threadtest"}}))
    assert "CV above 5%: noisy" in result["cells"][0]["flags"]


def test_kernels_are_in_version_order_everywhere():
    for kernel in ("2.6.25", "2.6.9", "2.6.24-rc1", "2.6.24.1", "2.6.24", "2.6.24-git19"):
        make_run(kernel, [1.0, 2.0])
    order = ["2.6.9", "2.6.24-rc1", "2.6.24", "2.6.24-git19", "2.6.24.1", "2.6.25"]
    result = compute(parse_spec({"filters": {"benchmark": "threadtest"}}))
    assert [c["x"] for c in result["cells"]] == order
    assert result["figure"]["layout"]["xaxis"]["categoryarray"] == order
    assert result["figure"]["data"][0]["x"] == order


def test_loop_sizes_on_a_true_linear_or_log_axis(sweep):
    linear = compute(spec())["figure"]
    assert linear["layout"]["xaxis"]["type"] == "linear"
    assert linear["data"][0]["x"] == [1e6, 1e7, 4e7]
    assert compute(spec(x_scale="log"))["figure"]["layout"]["xaxis"]["type"] == "log"


@pytest.mark.parametrize("chart, trace_type", [("bar", "bar"), ("box", "box"),
                                               ("heatmap", "heatmap"), ("table", "table")])
def test_every_chart_type(sweep, chart, trace_type):
    figure = compute(spec(chart=chart))["figure"]
    assert {t["type"] for t in figure["data"]} == {trace_type}
    if chart == "box":  # every repeat is drawn
        assert sum(len(t["y"]) for t in figure["data"]) == 36


def test_facets_make_one_panel_each(sweep):
    figure = compute(parse_spec({"filters": {"benchmark": "threadtest"}, "x": "kernel",
                                 "facet": "param.loops"}))["figure"]
    assert figure["layout"]["grid"]["rows"] == 3
    # the first panel's axes are Plotly's default ones, left out of the figure
    assert {t.get("yaxis", "y") for t in figure["data"]} == {"y", "y2", "y3"}


@pytest.mark.parametrize(
    "data, field, message",
    [
        ({"runs": [99999, 99998]}, "runs", "no run(s) with id 99999, 99998"),
        ({"filters": {"kernel": "9.9"}}, "filters", "no kernel '9.9'"),
        ({"filters": {"benchmark": "threadtest"}, "metric": "latency_us"}, "metric",
         "not measured"),
        ({"filters": {"benchmark": "threadtest"}, "x": "colour"}, "x", "not a dimension"),
        ({"filters": {"benchmark": "threadtest"}, "statistic": "mode"}, "statistic", "mode"),
        ({"filters": {"benchmark": "threadtest"}, "baseline": {"dim": "kernel",
          "value": "1.0"}}, "baseline", "no runs with kernel"),
        ({}, "runs", "give run ids or filters"),
        ({"filters": {"benchmark": "threadtest"}, "x": "kernel", "series": "kernel"}, "series",
         "different"),
    ],
)
def test_bad_specs_name_the_problem(sweep, data, field, message):
    with pytest.raises(SpecError) as raised:
        compute(parse_spec(data))
    assert raised.value.field == field and message in raised.value.message


def test_runs_lacking_the_metric_or_mixing_units_are_refused(sweep):
    other = make_run("2.6.24", [1.0], benchmark="hackbench", metric="time_s", unit="s")
    with pytest.raises(SpecError, match=f"runs {other.pk} do not measure"):
        compute(parse_spec({"runs": [sweep[("2.6.24", 1_000_000)].pk, other.pk],
                            "metric": "time_ms"}))
    mixed = make_run("2.6.24", [1.0], benchmark="other", metric="time_ms", unit="us")
    with pytest.raises(SpecError, match="mixes units"):
        compute(parse_spec({"runs": [sweep[("2.6.24", 1_000_000)].pk, mixed.pk]}))


# ----------------------------------------------------------------------- permalinks & exports

def save(api_client, **overrides):
    body = {"filters": {"benchmark": "threadtest"}, "x": "param.loops", "series": "kernel",
            "baseline": {"dim": "kernel", "value": "2.6.22"}, "title": "2.6.22 vs 2.6.24",
            **overrides}
    response = api_client.post("/api/v1/comparisons/", body, content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()["slug"]


def test_permalink_never_changes_after_more_uploads(sweep, api_client, client):
    slug = save(api_client)
    before = client.get(f"/c/{slug}.json").content
    make_run("2.6.24", [1.0] * 6, params={"loops": 1_000_000, "iterations": 500})
    make_run("2.6.23", [5.0] * 6, params={"loops": 1_000_000, "iterations": 500})
    assert client.get(f"/c/{slug}.json").content == before
    body = json.loads(before)
    assert set(body) >= {"slug", "title", "spec", "content_hash", "runs", "cells", "figure"}
    other = save(api_client)
    assert json.loads(client.get(f"/c/{other}.json").content)["content_hash"] != \
        body["content_hash"]


def test_deleted_run_keeps_the_frozen_numbers(sweep, api_client, client):
    slug = save(api_client)
    before = client.get(f"/c/{slug}.json").content
    gone = sweep[("2.6.24", 40_000_000)]
    Run.objects.filter(pk=gone.pk).delete()
    assert client.get(f"/c/{slug}.json").content == before
    page = client.get(f"/c/{slug}/").content.decode()
    assert f"#{gone.pk}" in page and "deleted since" in page


def test_exports_carry_the_same_numbers(sweep, api_client, client):
    slug = save(api_client)
    cells = client.get(f"/c/{slug}.json").json()["cells"]
    rows = list(csv.DictReader(io.StringIO(client.get(f"/c/{slug}.csv").content.decode())))
    assert [(r["x"], r["series"], float(r["median"])) for r in rows] == \
        [(c["x"], c["series"], c["median"]) for c in cells]
    text = client.get(f"/c/{slug}.txt").content.decode()
    page = client.get(f"/c/{slug}/").content.decode()
    for c in cells:
        assert f"{c['value']:.0f} ±" in text
        assert f'<td class="num">{num(c["median"])}</td>' in page


def test_text_report_layout(sweep, api_client, client):
    slug = save(api_client)
    text = client.get(f"/c/{slug}.txt").content.decode()
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("param.loops"))
    assert header.split() == ["param.loops", "2.6.22", "2.6.24"]
    rows = [line for line in lines if line[:1].isdigit() and not line.startswith("2.6")]
    assert [row.split()[0] for row in rows] == ["1000000", "10000000", "40000000"]
    column = header.index("2.6.24")
    assert all(row[column - 2:column] == "  " for row in rows)  # columns line up
    assert "8972 ±76 +168.0% p=0.0022 (6)" in text  # 8971.5 / 3347.5 = 2.680
    assert "10042 ±89 (6)" in text  # 3347.5 x 3, rounded half to even
    geomean = next(line for line in lines if line.startswith("geomean"))
    assert geomean.split() == ["geomean", "+168.0%"]
    assert f"/c/{slug}/" in lines[-1] and all(len(line) < 120 for line in lines)


def test_bad_spec_over_the_api_is_a_400(client, api_client, sweep):
    response = api_client.post("/api/v1/comparisons/", {"runs": [424242]},
                               content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"error": "runs: no run(s) with id 424242", "field": "runs",
                               "line": None}
    assert client.post("/api/v1/comparisons/", {"runs": [1]},
                       content_type="application/json").status_code == 401


def test_preview_and_options_need_no_account(client, sweep):
    body = {"filters": {"benchmark": "threadtest"}}
    options = client.post("/api/v1/comparisons/options/", body, content_type="application/json")
    assert options.json()["varying"] == ["kernel", "param.loops"]
    assert options.json()["values"]["kernel"] == ["2.6.22", "2.6.24"]
    preview = client.post("/api/v1/comparisons/preview/", body, content_type="application/json")
    assert preview.status_code == 200 and len(preview.json()["cells"]) == 2


def test_permalink_page_query_count(sweep, api_client, client, django_assert_max_num_queries):
    slug = save(api_client)
    client.get(f"/c/{slug}/")
    with django_assert_max_num_queries(1):  # at most the deletion version: the page is cached
        assert client.get(f"/c/{slug}/").status_code == 200


def test_permalink_page_escapes_and_embeds(sweep, api_client, client):
    slug = save(api_client, title="<script>alert(1)</script>")
    page = client.get(f"/c/{slug}/").content.decode()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
    embed = client.get(f"/c/{slug}/embed")
    assert embed.status_code == 200 and "X-Frame-Options" not in embed
    # Other sites may frame the embed (the CSP's frame-ancestors would otherwise forbid it)
    # while it keeps running only the site's own scripts; the permalink page stays unframable.
    embed_policy = embed["Content-Security-Policy"]
    assert "frame-ancestors *" in embed_policy and "frame-ancestors 'self'" not in embed_policy
    assert "script-src 'self'" in embed_policy
    assert "frame-ancestors 'self'" in client.get(f"/c/{slug}/")["Content-Security-Policy"]
    assert client.get("/c/nosuchslug/").status_code == 404


def test_environment_diff_leaves_out_the_compared_dimensions():
    old = make_run("2.6.22", [1.0, 2.0], tunables={"sched_compat_yield": 0})
    new = make_run("2.6.24", [3.0, 4.0], tunables={"sched_compat_yield": 1})
    result = compute(parse_spec({"filters": {"benchmark": "threadtest"}}))
    assert [(row["section"], row["key"]) for row in result["environment_diff"]] == [
        ("tunables", "sched_compat_yield")]
    assert result["environment_diff"][0]["values"] == {"0": [old.pk], "1": [new.pk]}


def test_threads_about_a_comparison_come_as_a_fragment(sweep, api_client, api_user, client):
    from discussions.services import thread_create
    from discussions.targets import target_resolve

    slug = save(api_client)
    page = client.get(f"/c/{slug}/").content.decode()
    assert f'data-fragment="/threads/about/comparison/{slug}/"' in page
    fragment = client.get(f"/threads/about/comparison/{slug}/").content.decode()
    assert "No discussion about this comparison yet" in fragment
    thread_create(user=api_user, subject="2.6.24 <regression>", body="see the chart",
                  target=target_resolve("comparison", slug))
    fragment = client.get(f"/threads/about/comparison/{slug}/").content.decode()
    assert "2.6.24 &lt;regression&gt;" in fragment
    assert f"?quote=1&amp;draft=comparison:{slug}" in fragment  # a reply carrying the report
    assert client.get(f"/c/{slug}/").content.decode() == page  # the cached page is unchanged
    assert client.get("/threads/about/comparison/nosuch/").status_code == 404
    reply_url = re.search(r'href="([^"]+draft=comparison[^"]+)"', fragment).group(1)
    client.force_login(api_user)
    draft = client.get(reply_url.replace("&amp;", "&")).content.decode()
    assert f"/c/{slug}/" in draft and "param.loops" in draft


def test_stored_summaries_and_samples_give_the_same_numbers(sweep):
    make_run("2.6.24", [8000.0, 8100.0], params={"loops": 1_000_000, "iterations": 500})
    from_summaries = compute(spec())["cells"]  # one-run cells use the stored summaries
    from_samples = compute(spec(chart="box"))["cells"]  # every cell reads its samples
    keys = ("n", "median", "mean", "stdev", "min", "max", "value")
    for a, b in zip(from_summaries, from_samples, strict=True):
        assert {k: a[k] for k in keys} == pytest.approx({k: b[k] for k in keys})
    merged = cell({"cells": from_summaries}, "1000000", "2.6.24")  # two runs: samples pooled
    assert merged["n"] == 8 and merged["median"] == np.median(NEW + [8000.0, 8100.0])


def test_a_legend_only_while_it_can_be_read():
    for number in range(45):
        make_run(f"5.{number}", [1.0, 2.0], params={"loops": 10})
    wide = compute(parse_spec({"filters": {"benchmark": "threadtest"}, "x": "param.loops",
                               "series": "kernel"}))["figure"]
    assert len(wide["data"]) == 45 and wide["layout"]["showlegend"] is False
    assert all(trace["name"].startswith("5.") for trace in wide["data"])  # hover names them


def test_a_comparison_reads_the_same_few_queries_whatever_its_size(
        sweep, django_assert_num_queries):
    # the filter's benchmark, the runs, their benchmarks, kernels and machines; metric counts
    # (summaries and published ones in one); stored summaries of the metric and of context
    # switches (cells, recipes, not-exercised check); published summaries; vmstat series
    with django_assert_num_queries(9):
        small = compute(spec())
    for number in range(30):
        make_run(f"5.{number}", [1.0, 2.0, 3.0], params={"loops": 10 ** (number % 3 + 6)})
    with django_assert_num_queries(9):
        large = compute(spec())
    assert len(small["cells"]) == 6 and len(large["cells"]) == 36


def test_many_lines_are_drawn_with_webgl_and_carry_only_what_the_chart_uses():
    for number in range(45):
        make_run(f"5.{number}", [10.0 + number, 11.0 + number], params={"loops": 10})
    figure = compute(parse_spec({"filters": {"benchmark": "threadtest"}, "x": "param.loops",
                                 "series": "kernel"}))["figure"]
    assert {trace["type"] for trace in figure["data"]} == {"scattergl"}
    first = figure["data"][0]
    # no legend, one panel: no legend group, no axis names; hover-only numbers are rounded
    assert not {"legendgroup", "showlegend", "xaxis", "yaxis"} & set(first)
    assert first["customdata"] == [[2, 10.5, 10.5, float(f"{np.std([10.0, 11.0], ddof=1):.6g}")]]
    assert "customdata[4]" not in first["hovertemplate"]  # no error bar was cut


def test_few_lines_stay_svg(sweep):
    figure = compute(spec())["figure"]
    assert {trace["type"] for trace in figure["data"]} == {"scatter"}
    assert all(trace["showlegend"] for trace in figure["data"])


def test_the_chart_table_and_name_come_with_the_page(sweep, api_client, client):
    slug = save(api_client, title="by <loops>")
    page = client.get(f"/c/{slug}/").content.decode()
    chart = re.search(r'<div id="comparison-chart"[^>]*>', page).group(0)
    assert 'role="figure"' in chart and 'aria-describedby="comparison-chart-data"' in chart
    assert 'aria-label="by &lt;loops&gt; (chart; its numbers are in the table below it)"' in chart
    table = re.search(r'<details id="comparison-chart-data".*?</details>', page).group(0)
    assert "Chart data as a table (6 rows)" in table
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1])
    first = re.findall(r"<td>(.*?)</td>", rows[0])
    # series, x, the plotted value (normalised to 2.6.22), as charts.js would have built it
    assert first[:3] == ["2.6.22", "1000000", "1"] and len(rows) == 6
    newer = re.findall(r"<td>(.*?)</td>", rows[3])
    assert newer[:3] == ["2.6.24", "1000000", f"{np.median(NEW) / np.median(OLD):.6g}"]
    embed = client.get(f"/c/{slug}/embed").content.decode()
    assert '<details id="comparison-chart-data"' in embed


def test_a_large_comparison_folds_its_statistics_into_a_fragment(api_client, client):
    for number in range(31):
        for loops in (10, 100):
            make_run(f"5.{number}", [1.0 + number, 2.0 + number], params={"loops": loops})
    slug = save(api_client, baseline=None, title="62 cells")
    page = client.get(f"/c/{slug}/").content.decode()
    assert 'class="data cells"' not in page and f'data-fragment="/c/{slug}/cells"' in page
    fragment = client.get(f"/c/{slug}/cells").content.decode()
    assert fragment.count("<tr>") == 62 + 1 and "<html" not in fragment  # header and cells
    small = save(api_client, baseline=None, filters={"benchmark": "threadtest", "kernel": "5.1"})
    assert 'class="data cells"' in client.get(f"/c/{small}/").content.decode()
    assert client.get("/c/nosuch/cells").status_code == 404


def test_the_runs_read_by_one_array_are_those_of_the_id_lists(sweep, api_client, monkeypatch):
    """On PostgreSQL a comparison's reads by run id bind the ids as one array
    (comparisons.among); both ways give the same comparison, byte for byte (on SQLite both
    are the id list)."""
    from benchmarks.comparisons import among
    from benchmarks.services.catalog import (
        benchmark_get_or_create,
        kernel_get_or_create,
        machine_get_or_create,
    )
    from benchmarks.services.runs import MetricInput, Provenance, run_create
    from tests.factories import CORE2

    make_run("2.6.30", [1.0, 2.0], params={"loops": 1_000_000, "iterations": 500},
             series={"vmstat": {"columns": ["r", "cs"], "rows": [[2, 1200], [3, 1500]]}})
    run_create(benchmark=benchmark_get_or_create(name="threadtest"),
               kernel=kernel_get_or_create(version="2.6.31"),
               machine=machine_get_or_create(spec=CORE2),
               metrics={"time_ms": MetricInput([5.0, 6.0], "ms"),
                        "context_switches": MetricInput([3.0, 4.0], "count")},
               provenance=Provenance(source="api"), params={"loops": 1_000_000})
    with open(Path(__file__).parent.parent / "fixtures" / "written" / "mmtests" /
              "hackbench_two_configs.txt", "rb") as upload:
        body = api_client.post("/api/v1/uploads/", {"file": upload}).json()
    published = [r["id"] for r in body["runs"] if r["params"] == {"groups": 4}]
    specs = [spec(), spec(chart="box", baseline={"dim": "kernel", "value": "2.6.22"}),
             parse_spec({"runs": published, "metric": "time_s.amean", "x": "label",
                         "baseline": {"dim": "label", "value": "vanilla"}})]
    one_array = [json.dumps(compute(s), sort_keys=True) for s in specs]
    monkeypatch.setattr(among, "one_array", lambda: False)
    id_lists = [json.dumps(compute(s), sort_keys=True) for s in specs]
    assert one_array == id_lists
    assert '"monitor_figure": null' not in one_array[0]  # the vmstat series was read
    assert '"summary": true' in one_array[2]  # the published summaries were read

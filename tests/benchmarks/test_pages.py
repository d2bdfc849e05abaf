import pytest
from django.urls import reverse

from tests.factories import make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs():
    made = [
        make_run("2.6.24", [8953, 9001, 8870]),
        make_run("2.6.22", [3332, 3350, 3301]),
        make_run("2.6.24-git19", [8986, 8990]),
        make_run("2.6.9", [3000]),
        make_run("2.6.24-rc1", [8000, 8100], params={"loops": 1000000, "iterations": 500}),
    ]
    return made


def kernels_in_page(html: str) -> list[str]:
    import re

    return re.findall(r'<td class="mono kernel">([^<]+)</td>', html)


def test_run_list_is_in_natural_kernel_order(client, runs):
    html = client.get(reverse("run-list")).content.decode()
    assert kernels_in_page(html) == ["2.6.9", "2.6.22", "2.6.24-rc1", "2.6.24", "2.6.24-git19"]


def test_run_list_filters_by_kernel_and_param(client, runs):
    html = client.get(reverse("run-list"), {"kernel": "2.6.24"}).content.decode()
    assert kernels_in_page(html) == ["2.6.24"]
    html = client.get(reverse("run-list"), {"param.loops": "1000000"}).content.decode()
    assert kernels_in_page(html) == ["2.6.24-rc1"]


def test_unknown_filter_value_explains_the_empty_result(client, runs):
    response = client.get(reverse("run-list"), {"kernel": "9.9.9", "benchmark": "nope"})
    assert response.status_code == 200
    html = response.content.decode()
    assert kernels_in_page(html) == []
    assert "no kernel &#x27;9.9.9&#x27;" in html and "no benchmark &#x27;nope&#x27;" in html


@pytest.mark.parametrize("count", [3, 30])
def test_run_list_query_count_does_not_grow_with_runs(client, django_assert_num_queries, count):
    for i in range(count):
        make_run(f"2.6.{i}", [100 + i, 101 + i])
    # count, page of runs, summaries, and the five filter choice lists (in one query)
    with django_assert_num_queries(4):
        assert client.get(reverse("run-list")).status_code == 200


def test_run_list_counts_the_runs_without_their_names(client, runs):
    """The page's count reads the filtered runs alone: counted over the joins the rows need,
    PostgreSQL read every run's names (~200 ms at 100,000 runs)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        html = client.get(reverse("run-list"), {"param.loops": "1000000"}).content.decode()
    counts = [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()]
    assert len(counts) == 1 and "JOIN" not in counts[0].upper()
    assert "benchmarks_runparam" in counts[0]  # the filter is still applied
    assert kernels_in_page(html) == ["2.6.24-rc1"] and "1 run<" in html


@pytest.mark.parametrize("count", [2, 20])
def test_home_query_count_does_not_grow_with_runs(client, django_assert_num_queries, count):
    for i in range(count):
        make_run(f"2.6.{i}", [100 + i])
    # runs, summaries, benchmarks, the runs' version and the runs by benchmark, machines, the
    # version and the runs by machine, comparisons (inside the test's transaction the counts
    # are never kept: test_run_counts.py pins the kept ones)
    with django_assert_num_queries(9):
        assert client.get(reverse("home")).status_code == 200


def test_run_detail_shows_every_sample_and_statistics(client):
    run = make_run(
        "2.6.22.17-cfs-v24.1-smp",
        [562, 551, 551],
        tunables={"sched_child_runs_first": 1},
        series={"vmstat": {"columns": ["r", "b", "cs", "us", "sy", "id"],
                           "rows": [[2, 0, 1200, 50, 10, 40], [3, 0, 1500, 60, 12, 28]]}},
    )
    # long keys carry <wbr> after dots and underscores (they wrap there on a phone)
    html = client.get(run.get_absolute_url()).content.decode().replace("<wbr>", "")
    for value in ("562.0", "551.0", "sched_child_runs_first", "1x2x1", "2.6.22.17-cfs-v24.1-smp"):
        assert value in html
    assert "554.7" in html  # mean of 562, 551, 551
    assert "n &lt; 5: needs more runs" in html
    assert "vendor/plotly-portal.min.js" in html and "cdn" not in html.lower()
    assert 'id="samples-figure"' in html and "series-figure-" in html


def test_run_detail_escapes_user_text(client):
    run = make_run("<script>alert(1)</script>", [1.0], policy="<b>bold</b>")
    html = client.get(run.get_absolute_url()).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>bold</b>" not in html


def test_missing_run_is_404(client):
    assert client.get(reverse("run-detail", args=[999999])).status_code == 404


def test_machine_list(client, runs):
    html = client.get(reverse("machine-list")).content.decode()
    assert "core2-laptop" in html and "1x2x1" in html


@pytest.mark.parametrize("repeats", [3, 300])
def test_run_detail_query_count_does_not_grow_with_samples(client, django_assert_num_queries,
                                                           repeats):
    run = make_run("2.6.24", [float(i) for i in range(repeats)],
                   series={"vmstat": {"columns": ["r", "cs"], "rows": [[1, 10]] * 5}})
    # run with its relations, summaries, published summaries, samples, series, the machine's
    # newest calibration (the "predict this run" section), traces, threads about the run; the
    # detection verdicts section (regressions): the series' kernels and sizes, and nothing
    # more, as the run's kernel is the series' only one (tests/regressions/
    # test_run_page_reads.py counts a run with older kernels)
    with django_assert_num_queries(9):
        assert client.get(run.get_absolute_url()).status_code == 200


@pytest.mark.parametrize("repeats", [3, 300])
def test_run_api_detail_query_count(client, django_assert_num_queries, repeats):
    run = make_run("2.6.24", [float(i) for i in range(repeats)])
    # run with relations, summaries, samples, published summaries, series
    with django_assert_num_queries(5):
        assert client.get(f"/api/v1/runs/{run.pk}/").status_code == 200

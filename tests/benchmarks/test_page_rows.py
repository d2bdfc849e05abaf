"""The run list's rows, a run's samples table and the filters' options written in Python
(benchmarks/pages/rows.py, choices.py) give exactly what the template loops (and Django's own
format_html_join) give, over varied and hostile runs: names, kernel strings, policies, params and
metric names full of markup and quotes, JSON values of every kind, numbers Python and Django
print differently, and a locale format that groups thousands."""

import pytest
from django.template import Context, Template
from django.template.loader import render_to_string
from django.test import override_settings
from django.urls import reverse
from django.utils.html import format_html_join

from benchmarks import selectors
from benchmarks.models import Benchmark, Kernel, Metric, Run, RunSource
from benchmarks.pages.choices import options_html
from benchmarks.pages.rows import run_rows_html, sample_rows_html
from benchmarks.services.catalog import (
    benchmark_get_or_create,
    kernel_get_or_create,
    machine_get_or_create,
)
from benchmarks.services.runs import MetricInput, Provenance, run_create
from tests.factories import CORE2, make_run

pytestmark = pytest.mark.django_db

HOSTILE = "<script>alert('x')</script> & \"quoted\" {{ not a tag }} é"
# JSON values of every kind, and numbers where str() and Django's localize differ
# (exponents: Django writes them out), or where a grouping format inserts separators.
PARAMS = {
    HOSTILE: HOSTILE, "int": 1234567, "negative": -42, "float": 0.1 + 0.2, "tiny": 1e-07,
    "huge": 1e22, "whole": 2.0, "minus_zero": -0.0, "yes": True, "no": False, "none": None,
    "list": [1, "<b>", {"k": "&"}], "dict": {"a": "<i>"}, "": "empty key", "unicode": "µs ✓",
}


def _two_metric_run(kernel: str, values: dict, **fields) -> Run:
    return run_create(
        benchmark=benchmark_get_or_create(name="hackbench"),
        kernel=kernel_get_or_create(version=kernel),
        machine=machine_get_or_create(spec=CORE2),
        metrics={name: MetricInput(list(v), "s") for name, v in values.items()},
        provenance=Provenance(source=RunSource.MAIL), **fields)


@pytest.fixture
def varied_runs():
    plain = make_run("2.6.24", [8953.0, 9012.0, 8876.0])
    single = make_run("6.1.0-rc1+", [0.000123], policy="SCHED_BATCH", params={})  # stdev None
    wide = _two_metric_run("6.8.0-eevdf", {"time_s": [1e-9, 2e-9, 3e-9],
                                           "ops": [1e12, 1.5e12, 2e12, 2.5e12, 9e15]},
                           params=PARAMS, policy=HOSTILE)
    hostile = make_run(HOSTILE, [1.0, 2.0], params={"loops": HOSTILE},
                       machine={**CORE2, "name": HOSTILE, "cpu_model": "Evil"})
    # What the services refuse may still be in an older database: write it directly.
    Benchmark.objects.filter(pk=hostile.benchmark_id).update(slug=HOSTILE)
    Metric.objects.filter(pk=wide.summaries.first().metric_id).update(name=HOSTILE)
    Run.objects.filter(pk=plain.pk).update(params="not a mapping", source="<i>\"&'</i>")
    Kernel.objects.filter(pk=single.kernel_id).update(version="")
    return [plain, single, wide, hostile]


def _both_ways(selectable: bool) -> tuple[str, str]:
    """The rows as the run list reads and writes them, and as the template writes runs read
    with their relations."""
    listed = selectors.runs_listed(Run.objects.in_natural_order().listing_rows())
    template_runs = list(Run.objects.with_listing_relations().in_natural_order())
    assert [run.pk for run in listed] == [run.pk for run in template_runs]
    return (str(run_rows_html(listed, selectable=selectable)),
            render_to_string("benchmarks/_run_rows.html",
                             {"runs": template_runs, "selectable": selectable}))


@pytest.mark.parametrize("selectable", [True, False])
def test_run_rows_are_the_templates(varied_runs, selectable):
    fast, plain = _both_ways(selectable)
    assert fast == plain
    # the comparison saw what it should: the hostile strings, escaped, in every column
    assert "<script>" not in fast and fast.count("&lt;script&gt;") >= 6
    assert "0.0000001" in fast and "10000000000000000000000" in fast  # written out, as Django
    assert ("aria-label=\"select run" in fast) is selectable


@override_settings(USE_THOUSAND_SEPARATOR=True)
def test_run_rows_follow_a_grouping_format(varied_runs):
    fast, plain = _both_ways(True)
    assert fast == plain and "1,234,567" in fast


def test_no_runs_is_the_templates_empty_table():
    assert str(run_rows_html([], selectable=True)) == render_to_string(
        "benchmarks/_run_rows.html", {"runs": [], "selectable": True})


@override_settings(FORCE_SCRIPT_NAME="/portal&co/")
def test_run_links_keep_the_sites_prefix(varied_runs):
    from django.urls import set_script_prefix

    set_script_prefix("/portal&co/")
    try:
        fast, plain = _both_ways(True)
    finally:
        set_script_prefix("/")
    assert fast == plain and 'href="/portal&amp;co/runs/' in fast


def test_run_list_page_holds_the_templates_rows(client, varied_runs):
    html = client.get(reverse("run-list")).content.decode()
    assert _both_ways(True)[1] in html


SAMPLE_ROWS = Template('{% for value in values %}<tr><td class="num">{{ forloop.counter }}</td>'
                       '<td class="num">{{ value }}</td></tr>{% endfor %}')
SAMPLES = [8953.0, 0.1 + 0.2, 1e-07, 1e16, 123456789.125, -0.0, -1.5, 5e-324,
           1.7976931348623157e308, float("inf"), float("-inf"), float("nan"), 3, 0.0]


@pytest.mark.parametrize("grouping", [False, True])
def test_sample_rows_are_the_templates(grouping):
    values = SAMPLES + [float(i) * 1001.5 for i in range(1100)]  # repeat 1,000 and on
    with override_settings(USE_THOUSAND_SEPARATOR=grouping):
        fast = str(sample_rows_html(values))
        plain = SAMPLE_ROWS.render(Context({"values": values}))
    assert fast == plain
    assert ("<td class=\"num\">1,000</td>" in fast) is grouping


def test_run_page_holds_the_samples_table(client):
    run = make_run("2.6.24", SAMPLES[:8] + [1e150])  # (the largest a sample may be)
    stored = selectors.samples_by_metric(run)[run.summaries.get().metric_id]  # -0.0 may be 0.0
    html = client.get(run.get_absolute_url()).content.decode()
    assert len(stored) == 9 and SAMPLE_ROWS.render(Context({"values": stored})) in html


def _options_plain(choices, chosen):
    chosen = "" if chosen is None else str(chosen)
    return format_html_join("", '<option value="{}"{}>{}</option>', (
        (value, " selected" if str(value) == chosen else "", label) for value, label in choices))


@pytest.mark.parametrize("chosen", [None, "", "7", HOSTILE, "6.1", "absent"])
def test_options_are_format_html_joins(chosen):
    # ("" is the value of no option the page offers; None picks it here, as before)
    choices = [(7, "box"), (HOSTILE, HOSTILE), ("6.1", "6.1"), (8, "<b>lab</b> & co"),
               ("", "blank value"), ("x", "")]
    fast = str(options_html(choices, chosen))
    assert fast == str(_options_plain(choices, chosen))
    assert fast.count(" selected") == (chosen != "absent") and "<b>" not in fast

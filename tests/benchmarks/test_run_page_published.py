"""A run's page lists its published summaries (statistics stored without samples: an mmtests
cell, a robot report's column), as the run JSON and comparisons do."""

import re

import pytest

from benchmarks.models import RunSource
from benchmarks.services.catalog import (
    benchmark_get_or_create,
    kernel_get_or_create,
    machine_get_or_create,
)
from benchmarks.services.runs import MetricInput, Provenance, run_create
from tests.factories import CORE2, make_run

pytestmark = pytest.mark.django_db


def published_rows(html: str) -> list[list[str]]:
    """The cells of the page's published summaries table, tags stripped."""
    section = re.search(r'<section class="panel" id="published-summaries">(.*?)</section>',
                        html, re.S)
    if section is None:
        return []
    rows = re.findall(r"<tr>(.*?)</tr>", section.group(1).split("<tbody>")[1], re.S)
    return [[re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>",
                                                                         row, re.S)]
            for row in rows]


def test_published_summaries_are_listed_with_what_the_source_said(client):
    run = run_create(
        benchmark=benchmark_get_or_create(name="hackbench"),
        kernel=kernel_get_or_create(version="6.1.0"), machine=machine_get_or_create(spec=CORE2),
        metrics={
            "time_s.amean": MetricInput([], "s", summary={
                "statistic": "amean", "value": 0.625, "stddev_pct": 0.61, "n": None,
                "significant": True}),
            "<b>ops</b>.hmean": MetricInput([], "ops/s", higher_is_better=True, summary={
                "statistic": "hmean", "value": 12345.5, "stddev_pct": None, "n": 5,
                "significant": False}),
            "time_s.min": MetricInput([], "s", summary={"statistic": "min", "value": 0.5}),
        },
        provenance=Provenance(source=RunSource.UPLOAD), label="vanilla")
    html = client.get(run.get_absolute_url()).content.decode()
    assert published_rows(html) == [
        ["&lt;b&gt;ops&lt;/b&gt;.hmean", "ops/s (higher is better)", "hmean", "12,346", "–", "5",
         "no"],
        ["time_s.amean", "s", "amean", "0.6250", "0.610%", "–", "yes"],
        ["time_s.min", "s", "min", "0.5000", "–", "–", "not said"],
    ]
    assert "<b>ops</b>" not in html


def test_a_run_of_samples_has_no_published_section(client):
    html = client.get(make_run("2.6.24", [1.0, 2.0]).get_absolute_url()).content.decode()
    assert published_rows(html) == [] and "Published summaries" not in html

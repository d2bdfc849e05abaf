"""Cells of published summaries (models.PublishedSummary): shown as the source gave them.

A summary-only cell holds one run's published statistic: its value, the mean and stdev only
where the statistic is a mean with a published spread, `"summary": true`, and a flag saying so.
Two summaries are never pooled into one cell (neither are a summary and samples): the spec must
separate them (by `label`, `kernel`, ...). Tests against a baseline go through
`summary_test` (Welch from mean, sd and n) or say "summary only, no test".
"""

from benchmarks.comparisons import dimensions
from benchmarks.comparisons.among import among_runs
from benchmarks.comparisons.spec import ComparisonSpec, SpecError
from benchmarks.comparisons.summary_test import MEANS, summary_test
from benchmarks.models import PublishedSummary

SUMMARY_FLAG = "summary only: a published {statistic}, no samples"


def published_summaries(run_ids: list[int], metric: str) -> dict[int, dict]:
    rows = PublishedSummary.objects.filter(among_runs(PublishedSummary, run_ids),
                                           metric__name=metric)
    return {row.run_id: row.as_dict() for row in rows}


def summary_cells(spec: ComparisonSpec, cells: list, published: dict[int, dict]) -> set[int]:
    """Ids of the cells holding a published summary; refuses a cell that would pool one."""
    found = set()
    for cell in cells:
        holders = [pk for pk in cell.run_ids if pk in published]
        if not holders:
            continue
        if len(cell.run_ids) > 1:
            raise SpecError("series", f"runs {', '.join(f'#{pk}' for pk in cell.run_ids[:20])} "
                            "share a cell but hold published summaries, which cannot be "
                            "pooled; separate them (series or facet: label, kernel, ...)")
        if spec.chart == "box":
            raise SpecError("chart", f"run #{holders[0]} has a published summary, no samples: "
                            "a box plot needs samples")
        found.add(id(cell))
    return found


def summary_row(cell, summary: dict) -> dict:
    statistic, value = summary["statistic"], summary["value"]
    mean = value if statistic in MEANS else None
    stdev = abs(value) * summary["stddev_pct"] / 100 \
        if mean is not None and summary["stddev_pct"] is not None else None
    return {
        "x": dimensions.label(cell.x), "series": _maybe_label(cell.series),
        "facet": _maybe_label(cell.facet), "runs": cell.run_ids,
        "n": summary["n"], "value": value,
        "median": value if statistic == "median" else None, "mean": mean, "stdev": stdev,
        "cv": summary["stddev_pct"] / 100 if stdev is not None else None, "ci95": None,
        "min": value if statistic == "min" else None,
        "max": value if statistic == "max" else None,
        "normalized": None, "p_value": None, "test": None, "effect": None,
        "flags": [SUMMARY_FLAG.format(statistic=statistic)],
        "summary": True, "published": dict(summary),
    }


def summary_baseline_test(row: dict, base_row: dict) -> tuple[float | None, str | None,
                                                              dict | None, str]:
    """(p_value, test, effect, reason) of a cell against its baseline when either side is a
    published summary: Welch from both sides' mean, sd and n, or no test."""
    if not (row.get("summary") and base_row.get("summary")):
        return None, None, None, "summary only, no test (a summary against samples)"
    verdict = summary_test(row["published"], base_row["published"])
    effect = {"name": "cohen-d", "value": verdict.effect} if verdict.effect is not None \
        else None
    return verdict.p_value, verdict.test, effect, verdict.reason


def _maybe_label(value):
    return None if value is None else dimensions.label(value)

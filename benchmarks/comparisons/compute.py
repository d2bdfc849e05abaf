"""Resolve a spec to runs and samples, group them into cells, and compute every statistic.

The result is a plain dict (the frozen `.json` of a permalink, minus slug and hash), so a saved
comparison never needs the runs again.
"""

import functools
import hashlib
import io
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.db import connection
from django.db.models import Count

from benchmarks import selectors
from benchmarks.analysis import stats
from benchmarks.analysis.envdiff import environment_diff, plain
from benchmarks.analysis.exercise import CONTEXT_SWITCH_METRIC, not_exercised
from benchmarks.comparisons import dimensions
from benchmarks.comparisons.among import among_runs
from benchmarks.comparisons.published import (
    published_summaries,
    summary_baseline_test,
    summary_cells,
    summary_row,
)
from benchmarks.comparisons.spec import ComparisonSpec, SpecError
from benchmarks.models import (
    Benchmark,
    Kernel,
    Machine,
    Metric,
    MetricSummary,
    MonitorSeries,
    PublishedSummary,
    Run,
    Sample,
)
from benchmarks.pages.recipes import rerun_recipe

NOISY_CV = 0.05
FEW_SAMPLES = 5


@dataclass
class Cell:
    x: object
    series: object
    facet: object
    run_ids: list[int]
    values: np.ndarray | None  # every sample, when something needs them

    @property
    def key(self) -> tuple:
        return (dimensions.label(self.x), _maybe_label(self.series), _maybe_label(self.facet))


def _attach_relations(runs: list[Run]) -> list[Run]:
    """Share one Kernel/Machine/Benchmark object among the runs that use it.

    A comparison's runs name few distinct kernels and machines; select_related would build one
    object per run and relation, which is most of the cost of a thousand-run selection.
    """
    for model, name in ((Benchmark, "benchmark"), (Kernel, "kernel"), (Machine, "machine")):
        found = model.objects.in_bulk({getattr(run, f"{name}_id") for run in runs})
        # Cached on the run as select_related caches it (the run's id column already names
        # this object): assigning through the descriptor re-checks and re-sets the id, ~2 us a
        # run and relation.
        field, attname = Run._meta.get_field(name), f"{name}_id"
        for run in runs:
            field.set_cached_value(run, found[getattr(run, attname)])
    return runs


def resolve_runs(spec: ComparisonSpec) -> list[Run]:
    runs = Run.objects.all()
    if spec.runs is not None:
        found = {run.pk: run for run in runs.filter(pk__in=spec.runs)}
        missing = [pk for pk in spec.runs if pk not in found]
        if missing:
            raise SpecError("runs", f"no run(s) with id {', '.join(map(str, missing))}")
        hidden = [pk for pk in spec.runs if found[pk].withdrawn is not None]
        if hidden:
            raise SpecError("runs", f"run(s) {', '.join(map(str, hidden[:20]))} were withdrawn "
                            "by their owners; leave them out")
        selected = [found[pk] for pk in spec.runs]
    else:
        filtered = selectors.run_filter(spec.filters)
        if filtered.problems:
            raise SpecError("filters", "; ".join(filtered.problems))
        selected = list(filtered.runs)
    if not selected:
        raise SpecError("runs", "no runs match this selection")
    return _attach_relations(selected)


def _metric_counts(run_ids: list[int]) -> dict[str, dict[tuple, int]]:
    """Metric name -> {(unit, higher_is_better): runs}, counted by the database: a thousand
    runs of several metrics each come back as a few rows."""
    counts: dict[str, dict[tuple, int]] = defaultdict(lambda: defaultdict(int))
    measured, published = (
        model.objects.filter(among_runs(model, run_ids)).order_by()
        .values_list("metric__name", "metric__unit", "metric__higher_is_better")
        .annotate(runs=Count("run_id"))
        for model in (MetricSummary, PublishedSummary))
    for name, unit, higher, runs in measured.union(published, all=True):
        counts[name][(unit, higher)] += runs
    return counts


def choose_metric(spec: ComparisonSpec, runs: list[Run]) -> dict:
    """The metric to compare, present in every run and in one unit only."""
    run_ids = [run.pk for run in runs]
    counts = _metric_counts(run_ids)
    if spec.metric is None:
        if not counts:
            raise SpecError("metric", "the selected runs have no metrics")
        spec.metric = max(sorted(counts), key=lambda name: sum(counts[name].values()))
    if spec.metric not in counts:
        raise SpecError("metric", f"{spec.metric!r} is not measured by these runs; they have "
                        f"{', '.join(sorted(counts)) or 'nothing'}")
    if sum(counts[spec.metric].values()) < len(run_ids):
        having = {*MetricSummary.objects.filter(run_id__in=run_ids, metric__name=spec.metric)
                  .values_list("run_id", flat=True),
                  *PublishedSummary.objects.filter(run_id__in=run_ids, metric__name=spec.metric)
                  .values_list("run_id", flat=True)}
        lacking = [pk for pk in run_ids if pk not in having]
        raise SpecError("metric", f"runs {', '.join(map(str, lacking[:20]))} do not measure "
                        f"{spec.metric!r}; leave them out or pick another metric")
    units = {unit for unit, _ in counts[spec.metric]}
    if len(units) > 1:
        raise SpecError("metric", f"{spec.metric!r} mixes units {', '.join(sorted(units))}")
    higher = any(h for _, h in counts[spec.metric])
    return {"name": spec.metric, "unit": units.pop(), "higher_is_better": higher}


# PostgreSQL's binary COPY row for (bigint run_id, float8 value): field count, then each
# field's length and big-endian bytes. Reading it with numpy skips per-value Python objects.
_BINARY_ROW = np.dtype([("fields", ">i2"), ("run_len", ">i4"), ("run", ">i8"),
                        ("value_len", ">i4"), ("value", ">f8")])
_BINARY_HEADER = 19  # signature (11), flags (4), header extension length (4, always 0 here)


def _fetch_postgresql(run_ids: list[int], metric_ids: list[int]) -> dict[int, np.ndarray]:
    buffer = io.BytesIO()
    with connection.cursor() as cursor:
        query = cursor.mogrify(
            f"COPY (SELECT run_id, value FROM {Sample._meta.db_table} "
            "WHERE run_id = ANY(%s) AND metric_id = ANY(%s)) TO STDOUT WITH (FORMAT binary)",
            [run_ids, metric_ids],
        ).decode()
        cursor.copy_expert(query, buffer)
    rows = np.frombuffer(buffer.getbuffer()[_BINARY_HEADER:-2], dtype=_BINARY_ROW)
    order = np.argsort(rows["run"], kind="stable")
    runs, values = rows["run"][order], rows["value"][order].astype(np.float64)
    found, starts = np.unique(runs, return_index=True)
    return dict(zip(found.tolist(), np.split(values, starts[1:]), strict=True))


def fetch_samples(run_ids: list[int], metric: str) -> dict[int, np.ndarray]:
    """Every sample of `metric` for these runs, as one array per run (repeat order does not
    matter to any statistic, so none is imposed)."""
    metric_ids = list(Metric.objects.filter(name=metric).values_list("pk", flat=True))
    if connection.vendor == "postgresql":
        return _fetch_postgresql(run_ids, metric_ids)
    rows = (Sample.objects.filter(run_id__in=run_ids, metric_id__in=metric_ids)
            .order_by().values_list("run_id", "value"))
    grouped = defaultdict(list)
    for run_id, value in rows:
        grouped[run_id].append(value)
    return {run_id: np.asarray(values, dtype=np.float64) for run_id, values in grouped.items()}


def group_cells(spec: ComparisonSpec, runs: list[Run]) -> list[Cell]:
    """Runs grouped by their (x, series, facet) values, in natural order; no samples yet."""
    cells: dict[tuple, Cell] = {}
    for run in runs:
        coords = tuple(
            dimensions.value_of(run, dim) if dim else None
            for dim in (spec.x, spec.series, spec.facet)
        )
        key = tuple(dimensions.label(v) for v in coords)
        cell = cells.get(key)
        if cell is None:
            cell = cells[key] = Cell(*coords, run_ids=[], values=None)
        cell.run_ids.append(run.pk)
    return sorted(cells.values(), key=lambda c: _cell_order(spec, c))


def needs_every_sample(spec: ComparisonSpec) -> bool:
    """Bootstrap CIs, tests against a baseline and box plots use the samples themselves."""
    return spec.error == "ci95" or spec.baseline is not None or spec.chart == "box"


def stored_summaries(run_ids: list[int], *metrics: str) -> dict[str, dict[int, stats.Summary]]:
    """Metric -> run id -> the statistics computed when the run was stored (by the same code
    as below): one query for every metric asked for."""
    rows = (MetricSummary.objects.filter(among_runs(MetricSummary, run_ids),
                                         metric__name__in=metrics)
            .values_list("metric__name", "run_id", "n", "mean", "median", "stdev", "minimum",
                         "maximum"))
    found: dict[str, dict[int, stats.Summary]] = {metric: {} for metric in metrics}
    for metric, run_id, *numbers in rows:
        found[metric][run_id] = stats.Summary(*numbers)
    return found


def summarize_cells(spec: ComparisonSpec, cells: list[Cell], metric: str,
                    stored: dict[int, stats.Summary]) -> list[stats.Summary]:
    """Each cell's summary. A cell of one run whose samples nothing else needs takes the
    run's stored summary (`stored`: stored_summaries of the runs), so a large comparison
    reads only what it draws."""
    whole = needs_every_sample(spec)
    stored = {} if whole else stored
    fetch = [pk for c in cells if len(c.run_ids) > 1 or c.run_ids[0] not in stored
             for pk in c.run_ids]
    samples = fetch_samples(fetch, metric) if fetch else {}
    for cell in cells:
        if len(cell.run_ids) > 1 or cell.run_ids[0] not in stored:
            cell.values = np.concatenate([samples.get(pk, np.empty(0)) for pk in cell.run_ids])
    computed = iter(stats.summarize_many([c.values for c in cells if c.values is not None])
                    if fetch else [])
    return [stored[c.run_ids[0]] if c.values is None else next(computed) for c in cells]


# A 200-series comparison sorts 1,000 cells by the same 200 kernel names: parse each once.
_sort_key = functools.lru_cache(maxsize=8192)(dimensions.sort_key)


def _cell_order(spec: ComparisonSpec, cell: Cell):
    return (
        _sort_key(spec.facet, cell.facet) if spec.facet else (),
        _sort_key(spec.series, cell.series) if spec.series else (),
        _sort_key(spec.x, cell.x),
    )


def _seed(spec: ComparisonSpec, cell: Cell) -> int:
    digest = hashlib.sha256(repr((spec.metric, spec.statistic, cell.key)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def cell_statistics(spec: ComparisonSpec, cell: Cell, summary: stats.Summary) -> dict:
    ci = stats.bootstrap_ci(cell.values, spec.statistic, seed=_seed(spec, cell)) \
        if spec.error == "ci95" else None
    flags = []
    if summary.n < FEW_SAMPLES:
        flags.append("n < 5, needs more runs")
    if summary.cv is not None and summary.cv > NOISY_CV:
        flags.append("CV above 5%: noisy")
    return {
        "x": dimensions.label(cell.x), "series": _maybe_label(cell.series),
        "facet": _maybe_label(cell.facet), "runs": cell.run_ids,
        "n": summary.n, "value": _statistic(summary, spec.statistic),
        "median": summary.median, "mean": summary.mean, "stdev": summary.stdev,
        "cv": summary.cv, "ci95": list(ci) if ci else None,
        "min": summary.minimum, "max": summary.maximum,
        "normalized": None, "p_value": None, "test": None, "effect": None, "flags": flags,
    }


def cell_rows(spec: ComparisonSpec, cells: list[Cell], metric: str,
              stored: dict[int, stats.Summary]) -> list[dict]:
    """Each cell's statistics; a cell of a published summary shows it as such
    (comparisons.published)."""
    published = published_summaries([pk for c in cells for pk in c.run_ids], metric)
    as_summary = summary_cells(spec, cells, published)
    sampled = [c for c in cells if id(c) not in as_summary]
    computed = iter(summarize_cells(spec, sampled, metric, stored) if sampled else [])
    return [summary_row(c, published[c.run_ids[0]]) if id(c) in as_summary
            else cell_statistics(spec, c, next(computed)) for c in cells]


def _statistic(summary: stats.Summary, statistic: str) -> float:
    return {"median": summary.median, "mean": summary.mean, "min": summary.minimum}[statistic]


def _maybe_label(value):
    return None if value is None else dimensions.label(value)


def _positions(spec: ComparisonSpec) -> dict[str, int]:
    return {dim: index for index, dim in enumerate((spec.x, spec.series, spec.facet)) if dim}


def apply_baseline(spec: ComparisonSpec, cells: list[Cell], rows: list[dict]) -> dict:
    """Normalise each cell to its baseline cell and test it; returns the geomean summary."""
    position = _positions(spec)[spec.baseline["dim"]]
    wanted = spec.baseline["value"]
    by_key = {cell.key: (cell, row) for cell, row in zip(cells, rows, strict=True)}
    if not any(cell.key[position] == wanted for cell in cells):
        raise SpecError("baseline", f"no runs with {spec.baseline['dim']} = {wanted!r}")
    reasons, groups = set(), defaultdict(list)
    for cell, row in zip(cells, rows, strict=True):
        if cell.key[position] == wanted:
            row["normalized"] = 1.0
            continue
        base_key = tuple(wanted if i == position else part for i, part in enumerate(cell.key))
        if base_key not in by_key:
            row["flags"].append(f"no baseline ({spec.baseline['dim']} = {wanted}) to compare with")
            continue
        base_cell, base_row = by_key[base_key]
        row["normalized"] = row["value"] / base_row["value"] if base_row["value"] else None
        if row.get("summary") or base_row.get("summary"):
            row["p_value"], row["test"], row["effect"], reason = \
                summary_baseline_test(row, base_row)
            reasons.add(reason)
        else:
            verdict = stats.compare_samples(cell.values, base_cell.values)
            row["p_value"], row["test"] = verdict.p_value, verdict.test
            row["effect"] = {"name": verdict.effect_name, "value": verdict.effect} \
                if verdict.effect_name else None
            reasons.add(verdict.reason)
        group = (cell.key[position],) if position == 2 else (cell.key[position], cell.key[2])
        if row["normalized"] is not None:
            groups[group].append(row["normalized"])
    geomean = [
        {"variant": group[0], "facet": group[1] if len(group) > 1 else None,
         "value": stats.geometric_mean(ratios), "cells": len(ratios)}
        for group, ratios in groups.items()
    ]
    return {"geomean": geomean, "tests": sorted(reasons)}


def monitor_series(runs: list[Run]) -> list[dict]:
    series = MonitorSeries.objects.filter(among_runs(MonitorSeries, [run.pk for run in runs]),
                                          kind="vmstat").order_by("run_id")
    found = list(series)
    if not found:  # most comparisons: no label to make for a thousand runs
        return []
    kernels = {run.pk: run.kernel.version for run in runs}
    return [{"run": s.run_id, "label": f"#{s.run_id} {kernels[s.run_id]}", "columns": s.columns,
             "rows": s.rows} for s in found]


def _compared(spec: ComparisonSpec, section: str, key: str) -> bool:
    """Is this setting one of the comparison's own dimensions (so of course it differs)?"""
    for dim in spec.dimensions():
        if dim == "kernel" and section == "kernel":
            return True
        if dim.partition(".")[0] == "machine" and section == "machine":
            return True
        if (dim, section, key) in (("policy", "run", "policy"), ("benchmark", "run", "benchmark")):
            return True
        kind, _, name = dim.partition(".")
        if (kind, section) in (("param", "params"), ("tunable", "tunables")) and name == key:
            return True
    return False


def environment_differences(spec: ComparisonSpec, runs: list[Run]) -> list[dict]:
    """Settings that differ between the runs besides the compared dimensions, each value with
    the runs that have it."""
    rows = []
    for row in environment_diff(runs):
        if not row.differs or _compared(spec, row.section, row.key):
            continue
        holders = defaultdict(list)
        for run, value in zip(runs, row.values, strict=True):
            holders["(not recorded)" if value is None else plain(value)].append(run.pk)
        rows.append({"section": row.section, "key": row.key, "values": dict(holders)})
    return rows


def flag_not_exercised(cells: list[Cell], rows: list[dict], reasons: dict[int, str]) -> None:
    """A cell holding runs that never entered the scheduler says so, with the evidence."""
    for cell, row in zip(cells, rows, strict=True):
        idle = [pk for pk in cell.run_ids if pk in reasons]
        if idle:
            row["flags"].append(
                f"scheduler not exercised in run{'s' if len(idle) > 1 else ''} "
                f"{', '.join(f'#{pk}' for pk in idle)}: {reasons[idle[0]]}")


def rerun_recipes(runs: list[Run], stored: dict[int, stats.Summary]) -> list[str]:
    """How to measure it again: the harness command line, or the simulator spec (`stored`:
    the runs' stored summaries, whose n is the repeat count)."""
    return list(dict.fromkeys(rerun_recipe(run, stored[run.pk].n if run.pk in stored else 1)
                              for run in runs))


def dimension_axes(spec: ComparisonSpec, cells: list[Cell]) -> dict:
    axes = {}
    for role, dim, attribute in (("x", spec.x, "x"), ("series", spec.series, "series"),
                                 ("facet", spec.facet, "facet")):
        if not dim:
            continue
        values = {dimensions.label(getattr(c, attribute)): getattr(c, attribute) for c in cells}
        ordered = sorted(values.values(), key=lambda v, d=dim: _sort_key(d, v))
        axes[role] = {"name": dim, "values": [dimensions.label(v) for v in ordered],
                      "numeric": dimensions.is_numeric(ordered)}
    return axes


def compute(spec: ComparisonSpec) -> dict:
    """Everything a permalink shows, from the runs as they are now."""
    from benchmarks.comparisons.figures import comparison_figure, monitor_figure

    runs = resolve_runs(spec)
    metric = choose_metric(spec, runs)
    cells = group_cells(spec, runs)
    # One read of the stored summaries serves the cells, the recipes and the context-switch
    # maxima of the not-exercised check.
    summaries = stored_summaries([run.pk for run in runs], metric["name"], CONTEXT_SWITCH_METRIC)
    stored = summaries[metric["name"]]
    rows = cell_rows(spec, cells, metric["name"], stored)
    maxima = {pk: summary.maximum for pk, summary in summaries[CONTEXT_SWITCH_METRIC].items()}
    flag_not_exercised(cells, rows, not_exercised(runs, switch_maxima=maxima))
    summary = apply_baseline(spec, cells, rows) if spec.baseline else {"geomean": [], "tests": []}
    axes = dimension_axes(spec, cells)
    monitors = monitor_series(runs)
    return {
        "spec": spec.as_dict(),
        "metric": metric,
        "runs": [run.pk for run in runs],
        "axes": axes,
        "cells": rows,
        "summary": summary,
        "environment_diff": environment_differences(spec, runs),
        "recipes": rerun_recipes(runs, stored),
        "figure": comparison_figure(spec, metric, axes, rows, cells),
        "monitor_figure": monitor_figure(monitors) if monitors else None,
    }

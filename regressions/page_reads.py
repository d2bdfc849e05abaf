"""The reads of one run's verdicts as its page makes them: the same rows, in the same order, as
the ORM reads in verdicts.py, written as the SQL those querysets compile to. On the run page the
ORM took longer to build these small queries (~2.5 ms of CPU a page on a 2-CPU machine) than
the database took to answer them. The run's own summaries come from what the page has already
read with the run (Run.objects.with_detail_relations() prefetches them with their metrics).

Each function names the ORM read it stands for; tests compare the two on both databases."""

import json
from array import array
from collections import defaultdict
from itertools import groupby

from django.apps import apps
from django.db import connection

from benchmarks.models import Kernel, Metric, MetricSummary, Run, Sample

from . import detect
from .models import BenchmarkThresholds
from .series import RUN_BLOCK, KernelGroup, SeriesId, _canonical, kernel_groups


def run_sizes(runs: list[Run]) -> dict[int, list[tuple[Metric, int]]]:
    """{run: (metric, n) of its summaries ordered by metric name then id}, as verdicts reads
    them for a submission, for the runs of a page (one)."""
    return {run.pk: _sizes(run) for run in runs}


def _sizes(run: Run) -> list[tuple[Metric, int]]:
    """From the page's prefetched summaries (ordered by name, MetricSummary's order) when the
    run came with them, else read."""
    prefetched = getattr(run, "_prefetched_objects_cache", {}).get("summaries")
    if prefetched is None:
        prefetched = MetricSummary.objects.filter(run_id=run.pk).select_related("metric")
    # The database ordered by name in its collation (not Python's): only ties are ordered here.
    return [(row.metric, row.n) for _, same in groupby(prefetched, key=lambda r: r.metric.name)
            for row in sorted(same, key=lambda r: r.metric_id)]


# verdicts._series_kernels' query: series_runs() (the setup's live release runs, the run left
# out) joined to their summaries of the metric and their kernels.
_SERIES_KERNELS_SQL = (
    "SELECT s.run_id, s.n, r.kernel_id, k.version, k.sort_key{json_columns} "
    "FROM {summary} s JOIN {run} r ON r.id = s.run_id JOIN {kernel} k ON k.id = r.kernel_id "
    "WHERE s.metric_id = %s AND r.benchmark_id = %s AND r.machine_id = %s AND r.policy = %s "
    "AND r.withdrawn IS NULL AND r.id <> %s{json_match}{not_bisection} "
    "ORDER BY k.sort_key, k.version, s.run_id")


def _series_kernels_statement() -> str:
    # PostgreSQL compares params and tunables as jsonb values (as the ORM's filter does);
    # SQLite's JSON is text whose key order matters: compared in canonical form below.
    postgres = connection.vendor == "postgresql"
    not_bisection = ""
    if apps.is_installed("bisection"):  # release_runs(): bisection steps are not in a series
        joins = Run._meta.get_field("bisect_joins").related_model._meta.db_table
        not_bisection = f" AND NOT EXISTS (SELECT 1 FROM {joins} j WHERE j.run_id = r.id)"
    return _SERIES_KERNELS_SQL.format(
        json_columns="" if postgres else ", r.params, r.tunables",
        json_match=" AND r.params = %s::jsonb AND r.tunables = %s::jsonb" if postgres else "",
        not_bisection=not_bisection, summary=MetricSummary._meta.db_table,
        run=Run._meta.db_table, kernel=Kernel._meta.db_table)


def series_kernels(series: SeriesId, *, exclude_run: int) -> list[KernelGroup]:
    """verdicts._series_kernels in one statement: the series' release kernels in natural order
    with their runs and true sizes, without values."""
    params = [series.metric_id, series.benchmark_id, series.machine_id, series.policy,
              exclude_run]
    postgres = connection.vendor == "postgresql"
    if postgres:
        params += [series.params_json, series.tunables_json]
    with connection.cursor() as cursor:
        cursor.execute(_series_kernels_statement(), params)
        rows = cursor.fetchall()
    if not postgres:  # SQLite compares JSON as text: match the series' params here instead
        wanted = (series.params_json, series.tunables_json)
        rows = [row[:5] for row in rows
                if tuple(_canonical(json.loads(text)) for text in row[5:]) == wanted]
    return kernel_groups(rows)


_VALUES_SQL = ('SELECT run_id, value FROM {sample} WHERE metric_id = %s AND run_id IN ({ids})'
               '{pick} ORDER BY run_id, "index"')


def read_values(metric_id: int, strides: dict[int, int]) -> dict[int, array]:
    """verdicts._read_values: {run: every stride-th value of the metric, by sample index}, one
    statement per stride and block of runs (an index is never negative: % is MOD)."""
    by_stride: dict[int, list[int]] = defaultdict(list)
    for run_id, stride in strides.items():
        by_stride[stride].append(run_id)
    values: dict[int, array] = defaultdict(lambda: array("d"))
    with connection.cursor() as cursor:
        for stride, run_ids in by_stride.items():
            for start in range(0, len(run_ids), RUN_BLOCK):
                block = run_ids[start:start + RUN_BLOCK]
                sql = _VALUES_SQL.format(sample=Sample._meta.db_table,
                                         ids=", ".join(["%s"] * len(block)),
                                         pick=' AND "index" %% %s = 0' if stride > 1 else "")
                cursor.execute(sql, [metric_id, *block, *([stride] if stride > 1 else [])])
                for run_id, value in cursor.fetchall():
                    values[run_id].append(value)
    return values


_THRESHOLDS_SQL = ("SELECT min_change, alpha, min_effect, min_repeats, verdict_alpha "
                   "FROM {table} WHERE benchmark_id = %s")


def thresholds(benchmark_id: int) -> detect.Thresholds:
    """services.thresholds_for: the benchmark's own thresholds (at most one row: the benchmark
    is unique), or the defaults."""
    with connection.cursor() as cursor:
        cursor.execute(_THRESHOLDS_SQL.format(table=BenchmarkThresholds._meta.db_table),
                       [benchmark_id])
        row = cursor.fetchone()
    if row is None:
        return detect.DEFAULT_THRESHOLDS
    min_change, alpha, min_effect, min_repeats, verdict_alpha = row
    return detect.Thresholds(min_change=min_change, alpha=alpha, min_effect=min_effect,
                             min_repeats=min_repeats, verdict_alpha=verdict_alpha,
                             source="benchmark")

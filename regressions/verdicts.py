"""Verdicts for runs just submitted: each metric against the series' baseline kernel (the
oldest in natural order) and the previous kernel. Cheap and bounded: only the runs' own series
are read, each side within detection's per-kernel bound (an evenly spaced subsample of a run
or kernel with more values), and every verdict says which thresholds applied."""

import math
from collections import defaultdict

import numpy as np
from django.db.models.functions import Mod

from benchmarks.models import Metric, MetricSummary, Run, Sample

from . import detect
from .series import SeriesId, series_groups, series_runs
from .summaries import summary_verdicts

MAX_RUNS = 100  # a bulk submission of more gets no verdicts (detection still runs in a worker)
# A verdict names the runs it was tested against; past this many it names these and the count
# (a reply for a bulk upload stays small; the comparison reproducing it reads them all).
AGAINST_RUNS_LISTED = 20


def _entries(run: Run, metric, values, size, groups, limits) -> list[dict]:
    older = [g for g in groups if (g.sort_key, g.version) < (run.kernel.sort_key,
                                                               run.kernel.version)]
    targets = []
    for role, group in (("baseline", older[0] if older else None),
                        ("previous", older[-1] if older else None)):
        if group is not None and all(group is not seen for _, seen in targets):
            targets.append((role, group))
    # One older kernel is both: "roles" says so (a CI gate asks about the previous kernel).
    both = len(older) == 1
    out = []
    for role, group in targets:
        result = detect.verdict(values, group.array(), higher_is_better=metric.higher_is_better,
                                thresholds=limits, sizes=(size, group.size))
        if result is None:
            continue
        out.append({"run": run.pk, "metric": metric.name, "against": group.version,
                    "role": role, "roles": ["baseline", "previous"] if both else [role],
                    "change": result.change, "p_value": result.p_value,
                    "regression": result.worse, "needs_repeats": result.needs_repeats,
                    "test": result.test, "n": size, "n_against": group.size,
                    "n_tested": list(result.n_tested), "thresholds": limits.as_dict(),
                    "against_runs": group.run_ids[:AGAINST_RUNS_LISTED],
                    "against_run_count": len(group.run_ids)})
    return out


def _run_values(run_ids: list[int]) -> dict:
    """{run: {metric: (values, true count)}}, at most about PER_KERNEL_MAX values each."""
    sizes = {(run, metric): n for run, metric, n in MetricSummary.objects.filter(
        run_id__in=run_ids).values_list("run_id", "metric_id", "n")}
    out = defaultdict(dict)
    for (run_id, metric_id), n in sizes.items():
        stride = max(1, math.ceil(n / detect.PER_KERNEL_MAX))
        samples = Sample.objects.filter(run_id=run_id, metric_id=metric_id)
        if stride > 1:
            samples = samples.annotate(_pick=Mod("index", stride)).filter(_pick=0)
        values = np.fromiter(samples.order_by("index").values_list("value", flat=True)
                             .iterator(chunk_size=10_000), dtype=np.float64)
        out[run_id][metric_id] = (values, n)
    return out


def runs_verdicts(runs) -> list[dict]:
    """Verdict entries for these runs (at most MAX_RUNS), in run then metric order."""
    from .services import thresholds_for

    runs = [run for run in runs if run is not None and run.pk is not None]
    if not runs or len(runs) > MAX_RUNS:
        return []
    stored = Run.objects.select_related("kernel").in_bulk([r.pk for r in runs])
    by_run = _run_values(list(stored))
    metrics = Metric.objects.in_bulk({metric for row in by_run.values() for metric in row})
    entries, seen = [], set()
    for run in (stored[r.pk] for r in runs if r.pk in stored):
        if run.pk in seen:  # an upload may link the same stored run twice
            continue
        seen.add(run.pk)
        limits = thresholds_for(run.benchmark_id)
        for metric_id, (values, size) in sorted(by_run[run.pk].items(),
                                                key=lambda item: metrics[item[0]].name):
            series = SeriesId.of(benchmark_id=run.benchmark_id, machine_id=run.machine_id,
                                 metric_id=metric_id, policy=run.policy, params=run.params,
                                 tunables=run.tunables)
            groups = series_groups(series, exclude_run=run.pk)
            entries += _entries(run, metrics[metric_id], values, size, groups, limits)
    # published summaries have no samples: against their table's baseline, or "summary only"
    return entries + summary_verdicts(list(dict.fromkeys(stored[r.pk] for r in runs
                                                        if r.pk in stored)))


def verdict_comparison_runs(run: Run, *, metric: Metric, against: str,
                            summary: bool = False) -> list[int]:
    """The runs of a comparison reproducing one of `run`'s verdicts: the run and every run its
    metric was tested against (all runs of the `against` kernel in its series, or a published
    table's baseline column); only the run when that side is gone."""
    from benchmarks.comparisons.spec import MAX_RUNS as COMPARISON_MAX_RUNS

    if summary:
        against_runs = [pk for entry in summary_verdicts([run]) if entry["metric"] == metric.name
                        and entry["against"] == against for pk in entry["against_runs"]]
    else:
        series = SeriesId.of(benchmark_id=run.benchmark_id, machine_id=run.machine_id,
                             metric_id=metric.pk, policy=run.policy, params=run.params,
                             tunables=run.tunables)
        against_runs = list(series_runs(series).filter(kernel__version=against,
                                                       summaries__metric=metric)
                            .exclude(pk=run.pk).order_by("pk")
                            .values_list("pk", flat=True)[:COMPARISON_MAX_RUNS - 1])
    return [run.pk, *against_runs]

"""Verdicts for runs just submitted: each metric against the series' baseline kernel (the
oldest in natural order) and the previous kernel. Cheap and bounded: only the runs' own series
are read, each side within detection's per-kernel bound (an evenly spaced subsample of a run
or kernel with more values), and every verdict says which thresholds applied."""

import math
from array import array
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from django.db.models.functions import Mod

from benchmarks.models import Metric, MetricSummary, Run, Sample

from . import detect, page_reads
from .series import RUN_BLOCK, KernelGroup, SeriesId, kernel_groups, series_runs
from .summaries import summary_verdicts

MAX_RUNS = 100  # a bulk submission of more gets no verdicts (detection still runs in a worker)
# A verdict names the runs it was tested against; past this many it names these and the count
# (a reply for a bulk upload stays small; the comparison reproducing it reads them all).
AGAINST_RUNS_LISTED = 20


def _targets(run: Run, groups: list[KernelGroup]) -> list[tuple[str, KernelGroup, bool]]:
    """(role, group, both) for the series' oldest and previous kernels before the run's."""
    older = [g for g in groups if (g.sort_key, g.version) < (run.kernel.sort_key,
                                                               run.kernel.version)]
    targets: list[tuple[str, KernelGroup, bool]] = []
    for role, group in (("baseline", older[0] if older else None),
                        ("previous", older[-1] if older else None)):
        if group is not None and all(group is not seen for _, seen, _ in targets):
            # One older kernel is both: "roles" says so (a CI gate asks about the previous).
            targets.append((role, group, len(older) == 1))
    return targets


def _entries(run: Run, metric, values, size, targets, limits) -> list[dict]:
    out = []
    for role, group, both in targets:
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


def _series_kernels(series: SeriesId, *, exclude_run: int) -> list[KernelGroup]:
    """The series' release kernels in natural order with their runs and true sizes, without
    values: series_groups reads every recent kernel's values, a verdict tests two of them."""
    runs = series_runs(series).exclude(pk=exclude_run)
    rows = (MetricSummary.objects.filter(metric_id=series.metric_id, run__in=runs)
            .order_by("run__kernel__sort_key", "run__kernel__version", "run_id")
            .values_list("run_id", "n", "run__kernel_id", "run__kernel__version",
                         "run__kernel__sort_key"))
    return kernel_groups(rows)


def _read_values(metric_id: int, strides: dict[int, int]) -> dict[int, array]:
    """{run: every stride-th value of the metric, by sample index}: one query per stride."""
    by_stride: dict[int, list[int]] = defaultdict(list)
    for run_id, stride in strides.items():
        by_stride[stride].append(run_id)
    values: dict[int, array] = defaultdict(lambda: array("d"))
    for stride, run_ids in by_stride.items():
        for start in range(0, len(run_ids), RUN_BLOCK):
            samples = Sample.objects.filter(metric_id=metric_id,
                                            run_id__in=run_ids[start:start + RUN_BLOCK])
            if stride > 1:
                samples = samples.annotate(_pick=Mod("index", stride)).filter(_pick=0)
            for run_id, value in samples.order_by("run_id", "index").values_list("run_id",
                                                                                 "value"):
                values[run_id].append(value)
    return values


@dataclass(frozen=True)
class _Reads:
    """Where a verdict's inputs come from: the ORM (a submission's verdicts) or the SQL those
    queries compile to (page_reads: a run page's, where building the queries cost more)."""

    sizes: Callable[[list[Run]], dict[int, list[tuple[Metric, int]]]]
    series_kernels: Callable[..., list[KernelGroup]]
    values: Callable[[int, dict[int, int]], dict[int, array]]
    thresholds: Callable[[int], detect.Thresholds]


def _metric_entries(run: Run, metric: Metric, size: int, limits: Callable[[], detect.Thresholds],
                    reads: _Reads) -> list[dict]:
    """One metric of a run against its series. The values read and their subsampling are
    what series_groups gives: only the newest detect.MAX_KERNELS kernels have values, each
    about detect.per_kernel_limit() of them, the run itself at most PER_KERNEL_MAX. Nothing
    more is read when no older kernel is there to test against (there is no verdict)."""
    series = SeriesId.of(benchmark_id=run.benchmark_id, machine_id=run.machine_id,
                         metric_id=metric.pk, policy=run.policy, params=run.params,
                         tunables=run.tunables)
    groups = reads.series_kernels(series, exclude_run=run.pk)
    targets = _targets(run, groups)
    if not targets:
        return []
    recent = groups[-detect.MAX_KERNELS:]
    limit = detect.per_kernel_limit(len(recent))
    strides = {run.pk: max(1, math.ceil(size / detect.PER_KERNEL_MAX))}
    for _, group, _ in targets:
        if any(group is kept for kept in recent):
            stride = max(1, math.ceil(group.size / limit))
            strides.update((run_id, stride) for run_id in group.run_ids)
    values = reads.values(metric.pk, strides)
    for _, group, _ in targets:
        for run_id in group.run_ids:
            group.values.extend(values.get(run_id, ()))
    own = np.array(values[run.pk], dtype=np.float64)
    return _entries(run, metric, own, size, targets, limits())


def _orm_sizes(runs: list[Run]) -> dict[int, list[tuple[Metric, int]]]:
    """{run: (metric, n) of its summaries by metric name}, every run's in one query."""
    sizes: dict[int, list[tuple[Metric, int]]] = defaultdict(list)
    for row in (MetricSummary.objects.filter(run_id__in=[run.pk for run in runs])
                .select_related("metric").order_by("metric__name", "metric_id")):
        sizes[row.run_id].append((row.metric, row.n))
    return sizes


def _orm_thresholds(benchmark_id: int) -> detect.Thresholds:
    from .services import thresholds_for

    return thresholds_for(benchmark_id)


_ORM_READS = _Reads(_orm_sizes, _series_kernels, _read_values, _orm_thresholds)
_PAGE_READS = _Reads(page_reads.run_sizes, page_reads.series_kernels, page_reads.read_values,
                     page_reads.thresholds)


def _verdicts(runs: list[Run], reads: _Reads = _ORM_READS) -> list[dict]:
    """Verdict entries for stored runs read with their kernels, in run then metric order. A
    benchmark's thresholds are read once, when a verdict first needs them."""
    limits: dict[int, detect.Thresholds] = {}

    def limits_of(benchmark_id: int) -> detect.Thresholds:
        if benchmark_id not in limits:
            limits[benchmark_id] = reads.thresholds(benchmark_id)
        return limits[benchmark_id]

    sizes = reads.sizes(runs)
    entries = []
    for run in runs:
        for metric, size in sizes.get(run.pk, ()):
            entries += _metric_entries(run, metric, size,
                                       partial(limits_of, run.benchmark_id), reads)
    # published summaries have no samples: against their table's baseline, or "summary only"
    return entries + summary_verdicts(runs)


def runs_verdicts(runs) -> list[dict]:
    """Verdict entries for these runs (at most MAX_RUNS), in run then metric order."""
    runs = [run for run in runs if run is not None and run.pk is not None]
    if not runs or len(runs) > MAX_RUNS:
        return []
    stored = Run.objects.select_related("kernel").in_bulk([r.pk for r in runs])
    # an upload may link the same stored run twice
    return _verdicts(list(dict.fromkeys(stored[r.pk] for r in runs if r.pk in stored)))


def run_page_verdicts(run: Run) -> list[dict]:
    """The verdicts of one run as its page has just read it (with its kernel and its summaries,
    which are not read again): runs_verdicts' entries, read with SQL (page_reads)."""
    return _verdicts([run], _PAGE_READS)


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

"""Verdicts for runs just submitted: each metric against the series' baseline kernel (the
oldest in natural order) and the previous kernel. Cheap: only the runs' own series are read."""

from collections import defaultdict

from benchmarks.models import Run, Sample

from . import detect
from .series import SeriesId, series_groups

MAX_RUNS = 100  # a bulk submission of more gets no verdicts (detection still runs in a worker)


def _entries(run: Run, metric, values, groups) -> list[dict]:
    older = [g for g in groups if (g.sort_key, g.version) < (run.kernel.sort_key,
                                                               run.kernel.version)]
    targets = []
    for role, group in (("baseline", older[0] if older else None),
                        ("previous", older[-1] if older else None)):
        if group is not None and all(group is not seen for _, seen in targets):
            targets.append((role, group))
    out = []
    for role, group in targets:
        result = detect.verdict(values, group.array(), higher_is_better=metric.higher_is_better)
        if result is None:
            continue
        out.append({"run": run.pk, "metric": metric.name, "against": group.version,
                    "role": role, "change": result.change, "p_value": result.p_value,
                    "regression": result.worse, "needs_repeats": result.needs_repeats,
                    "n": len(values), "n_against": len(group.values)})
    return out


def runs_verdicts(runs) -> list[dict]:
    """Verdict entries for these runs (at most MAX_RUNS), in run then metric order."""
    runs = [run for run in runs if run is not None and run.pk is not None]
    if not runs or len(runs) > MAX_RUNS:
        return []
    by_run = defaultdict(lambda: defaultdict(list))
    metrics = {}
    rows = (Sample.objects.filter(run_id__in=[run.pk for run in runs])
            .select_related("metric").order_by("run_id", "metric_id", "index"))
    for sample in rows:
        by_run[sample.run_id][sample.metric_id].append(sample.value)
        metrics[sample.metric_id] = sample.metric
    stored = Run.objects.select_related("kernel").in_bulk([r.pk for r in runs])
    entries, seen = [], set()
    for run in (stored[r.pk] for r in runs if r.pk in stored):
        if run.pk in seen:  # an upload may link the same stored run twice
            continue
        seen.add(run.pk)
        for metric_id, values in sorted(by_run[run.pk].items(),
                                        key=lambda item: metrics[item[0]].name):
            series = SeriesId.of(benchmark_id=run.benchmark_id, machine_id=run.machine_id,
                                 metric_id=metric_id, policy=run.policy, params=run.params,
                                 tunables=run.tunables)
            groups = series_groups(series, exclude_run=run.pk)
            entries += _entries(run, metrics[metric_id], values, groups)
    return entries

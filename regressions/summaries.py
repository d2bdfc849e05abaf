"""Verdicts for runs of a published table (an mmtests column, a robot report's commit): each
published statistic against the table's own baseline column, tested only where mean, stddev
and n allow (detect.summary_verdict), else said to be "summary only, no test"."""

import json
from collections import defaultdict

from benchmarks.models import PublishedSummary, Run

from . import detect


def _setup(run: Run) -> str:
    return json.dumps([run.artifact_id, run.benchmark_id, run.machine_id, run.policy,
                       run.params, run.tunables], sort_keys=True, default=str)


def summary_verdicts(runs: list[Run]) -> list[dict]:
    tabled = [run for run in runs if "baseline" in (run.environment or {})]
    if not tabled:
        return []
    by_run: dict[int, dict] = defaultdict(dict)
    for row in PublishedSummary.objects.filter(run__in=tabled).select_related("metric"):
        by_run[row.run_id][row.metric_id] = row
    baselines = {_setup(run): run for run in tabled if run.environment["baseline"]}
    entries = []
    for run in tabled:
        base = baselines.get(_setup(run))
        if run.environment["baseline"] or base is None:
            continue
        for metric_id, row in sorted(by_run[run.pk].items(), key=lambda i: i[1].metric.name):
            reference = by_run[base.pk].get(metric_id)
            verdict = reference and detect.summary_verdict(
                row.as_dict(), reference.as_dict(), higher_is_better=row.metric.higher_is_better)
            if not verdict:
                continue
            entries.append({
                "run": run.pk, "metric": row.metric.name, "against": base.kernel.version,
                "against_label": base.label, "role": "baseline", "change": verdict.change,
                "p_value": verdict.p_value, "regression": verdict.worse, "summary": True,
                "test": verdict.test, "needs_repeats": False, "n": row.n,
                "n_against": reference.n})
    return entries

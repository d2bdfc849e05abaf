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
    # The baseline column is looked up in the run's own table (artifact), so one run of it (a
    # run page) is judged as it was when the whole table came in.
    stored = Run.objects.filter(artifact_id__in={run.artifact_id for run in tabled},
                                environment__baseline=True).select_related("kernel")
    baselines = {_setup(run): run for run in [*tabled, *stored]
                 if run.environment.get("baseline")}
    wanted = {run.pk for run in tabled} | {run.pk for run in baselines.values()}
    for row in PublishedSummary.objects.filter(run__in=wanted).select_related("metric"):
        by_run[row.run_id][row.metric_id] = row
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
                "n_against": reference.n, "against_runs": [base.pk], "against_run_count": 1})
    return entries

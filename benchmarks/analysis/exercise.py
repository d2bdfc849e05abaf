"""Did a run exercise the scheduler at all? (FIELD-NOTES: once sched_yield() stopped
rescheduling when nothing else was runnable, a yield benchmark with no more tasks than CPUs
never entered the scheduler; its numbers say nothing about it.)

Two kinds of evidence, used only when the run records them:
- a yield benchmark whose `tasks` is not above the machine's CPU count;
- context switches observed (the simulator's counters, or a `context_switches` metric) that
  are no more than placing each task once.
"""

from collections.abc import Iterable

from benchmarks.models import MetricSummary, Run

CONTEXT_SWITCH_METRIC = "context_switches"
# Params that count the runnable tasks a benchmark starts, in the vocabulary's names.
TASK_PARAMS = ("tasks", "threads", "clients", "runqueue_length")


def _tasks(run: Run) -> int | None:
    for name in TASK_PARAMS:
        value = (run.params or {}).get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _yield_reason(run: Run) -> str | None:
    if "yield" not in run.benchmark.slug:
        return None
    tasks, cpus = _tasks(run), run.machine.cpus
    if tasks is None or cpus is None or tasks > cpus:
        return None
    return (f"{tasks} yielding task{'s' if tasks != 1 else ''} on {cpus} CPUs: with no more "
            "tasks than CPUs sched_yield() has nothing to switch to")


def _observed_switches(run: Run, metric_maxima: dict[int, float]) -> float | None:
    simulated = (run.environment or {}).get("simulator") or {}
    counters = simulated.get("counters") if isinstance(simulated, dict) else None
    if isinstance(counters, dict) and isinstance(counters.get("context_switches"), (int, float)):
        return counters["context_switches"]
    return metric_maxima.get(run.pk)


def _switch_reason(run: Run, metric_maxima: dict[int, float]) -> str | None:
    switches = _observed_switches(run, metric_maxima)
    if switches is None:
        return None
    placement = _tasks(run) or 0
    if switches > placement:
        return None
    if not placement:
        return f"{switches:g} context switches observed"
    return (f"{switches:g} context switches observed, no more than placing "
            f"{placement} task{'s' if placement != 1 else ''}")


def not_exercised(runs: Iterable[Run], *,
                  switch_maxima: dict[int, float] | None = None) -> dict[int, str]:
    """Run id -> why its scheduler was not exercised, for the runs where the evidence says so.
    Reads the runs' benchmark and machine (select them along) and, unless the caller has them
    (`switch_maxima`: run id -> largest context_switches sample), one query for metrics."""
    runs = list(runs)
    maxima = switch_maxima if switch_maxima is not None else dict(
        MetricSummary.objects.filter(run__in=runs, metric__name=CONTEXT_SWITCH_METRIC)
        .values_list("run_id", "maximum"))
    reasons = {}
    for run in runs:
        reason = _yield_reason(run) or _switch_reason(run, maxima)
        if reason:
            reasons[run.pk] = reason
    return reasons

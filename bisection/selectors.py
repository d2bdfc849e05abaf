"""Reads: a session's state (steps, verdicts, the line to type, steps left) in a fixed number
of queries, whatever the number of steps and runs."""

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from django.db.models import Q

from benchmarks.models import Run, Sample
from regressions.models import Regression

from .judge import BAD, GOOD, UNKNOWN, Verdict, judge
from .models import Bisection, BisectRun, BisectStep


@dataclass
class SideState:
    name: str  # good | bad
    kernel: str
    ref: str
    subject: str
    runs: list[Run]
    values: np.ndarray


@dataclass
class StepState:
    step: BisectStep
    runs: list[Run]
    values: np.ndarray
    verdict: Verdict
    marked: bool  # the verdict was marked (log or user), not judged from runs
    skipped: bool = False


@dataclass
class BisectionState:
    bisection: Bisection
    good: SideState
    bad: SideState
    steps: list[StepState] = field(default_factory=list)
    next: str | None = None
    next_hint: str = ""
    steps_left: int | None = None
    conclusion: str = ""  # the first bad commit the decided steps imply, when none are left
    # True when git said "0 revisions left" and that commit is decided: the conclusion is then
    # what git itself would print, not a guess from its rough step count.
    exact: bool = False


def bisection_get(pk: int) -> Bisection:
    return Bisection.objects.select_related(
        "owner", "good_kernel", "bad_kernel", "benchmark", "machine", "metric").get(pk=pk)


def bisections_listed(*, regression=None, ended=None):
    """Newest first; `regression` (a finding id) and `ended` ("true"/"false") narrow it, and a
    value that means nothing gives no sessions rather than an error."""
    rows = Bisection.objects.select_related("owner", "benchmark", "machine")
    if regression not in (None, ""):
        text = str(regression).strip()
        rows = rows.filter(regression_id=int(text)) if text.isdigit() and len(text) < 19 \
            else rows.none()
    if ended in ("true", "1"):
        rows = rows.filter(ended__isnull=False)
    elif ended in ("false", "0"):
        rows = rows.filter(ended__isnull=True)
    return rows


def _kernel_runs(bisection: Bisection) -> list[Run]:
    """Runs of the session's benchmark (machine and params when set) on the good or bad
    kernel: the sides' distributions before anyone joined a run to the session."""
    kernels = [k for k in (bisection.good_kernel_id, bisection.bad_kernel_id) if k]
    if bisection.regression_id:  # the finding's own runs, exactly its series
        through = Regression.runs_good.through, Regression.runs_bad.through
        ids = [run_id for model in through for run_id in model.objects.filter(
            regression_id=bisection.regression_id).values_list("run_id", flat=True)]
        return list(Run.objects.filter(pk__in=ids, kernel_id__in=kernels)
                    .select_related("kernel", "machine").order_by("id"))
    if bisection.benchmark_id is None or not kernels:
        return []
    query = Q(benchmark_id=bisection.benchmark_id, kernel_id__in=kernels)
    if bisection.machine_id:
        query &= Q(machine_id=bisection.machine_id)
    if bisection.params:
        query &= Q(params=bisection.params)
    return list(Run.objects.filter(query).select_related("kernel", "machine").order_by("id"))


def _values(bisection: Bisection, runs: list[Run]) -> dict[int, list[float]]:
    if bisection.metric_id is None or not runs:
        return {}
    found = defaultdict(list)
    rows = Sample.objects.filter(run_id__in=[r.pk for r in runs], metric_id=bisection.metric_id)
    for run_id, value in rows.order_by("run_id", "index").values_list("run_id", "value"):
        found[run_id].append(value)
    return found


def _pooled(runs: list[Run], values: dict[int, list[float]]) -> np.ndarray:
    return np.array([v for run in runs for v in values.get(run.pk, [])], dtype=np.float64)


def _step_verdict(step: BisectStep, sample: np.ndarray, good: np.ndarray,
                  bad: np.ndarray) -> tuple[Verdict, bool]:
    if step.mark in (GOOD, BAD):
        return Verdict(step.mark, f"marked {step.mark} ({step.mark_source})"), True
    if step.mark == "skip":
        return Verdict(UNKNOWN, f"skipped ({step.mark_source})"), True
    return judge(sample, good, bad), False


def bisection_state(bisection: Bisection) -> BisectionState:
    steps = list(BisectStep.objects.filter(bisection=bisection).order_by("position"))
    joins = list(BisectRun.objects.filter(bisection=bisection)
                 .select_related("run__kernel", "run__machine").order_by("id"))
    side_runs = {"good": [], "bad": []}
    for run in _kernel_runs(bisection):
        side_runs["good" if run.kernel_id == bisection.good_kernel_id else "bad"].append(run)
    by_step = defaultdict(list)
    for join in joins:
        if join.side:
            if all(r.pk != join.run_id for r in side_runs[join.side]):
                side_runs[join.side].append(join.run)
        else:
            by_step[join.step_id].append(join.run)
    everything = [*side_runs["good"], *side_runs["bad"], *(r for j in joins for r in [j.run])]
    values = _values(bisection, everything)
    good = SideState("good", bisection.good, bisection.good_ref, bisection.good_subject,
                     side_runs["good"], _pooled(side_runs["good"], values))
    bad = SideState("bad", bisection.bad, bisection.bad_ref, bisection.bad_subject,
                    side_runs["bad"], _pooled(side_runs["bad"], values))
    state = BisectionState(bisection, good, bad)
    for step in steps:
        runs = by_step.get(step.pk, [])
        sample = _pooled(runs, values)
        verdict, marked = _step_verdict(step, sample, good.values, bad.values)
        state.steps.append(StepState(step, runs, sample, verdict, marked,
                                     skipped=step.mark == "skip"))
    _progress(state)
    return state


def _decided(state: BisectionState) -> list[StepState]:
    return [s for s in state.steps if s.verdict.verdict in (GOOD, BAD)]


def _progress(state: BisectionState) -> None:
    """Steps left, what the decided steps imply, and the `git bisect` line to type now."""
    bisection = state.bisection
    if bisection.steps_estimate is not None:
        done = len(_decided(state)) - bisection.estimate_after
        state.steps_left = max(0, bisection.steps_estimate - done)
    if state.steps_left == 0 and not bisection.is_ended:
        decided = _decided(state)
        bad_steps = [s for s in decided if s.verdict.verdict == BAD]
        state.conclusion = bad_steps[-1].step.commit if bad_steps else bisection.bad_ref
        state.exact = bisection.revisions_left == 0 and len(decided) > bisection.estimate_after
    if bisection.is_ended:
        state.next_hint = f"{bisection.first_bad} is the first bad commit"
        return
    current = state.steps[-1] if state.steps else None
    if current is None or current.step.mark_source == "log":
        state.next_hint = ("build and boot the commit git checked out, then run "
                           f"`schedbench.py run --bisect {bisection.pk} ...` there")
        return
    if current.skipped:
        state.next = f"git bisect skip {current.step.commit}"
    elif current.verdict.verdict in (GOOD, BAD):
        state.next = f"git bisect {current.verdict.verdict} {current.step.commit}"
    else:
        state.next_hint = current.verdict.reason


def bisection_log(state: BisectionState) -> list[tuple[str, str, str]]:
    """(verdict, commit, subject) of every decided or skipped step, for the exported log."""
    return [("skip" if s.skipped else s.verdict.verdict, s.step.commit, s.step.subject)
            for s in state.steps if s.skipped or s.verdict.verdict in (GOOD, BAD)]


def joined_answer(bisection_id: int, run: Run) -> dict | None:
    """What a run submission answers about the step its run joined: the verdict so far and
    the line to type (the harness prints it)."""
    bisection = Bisection.objects.select_related(
        "owner", "good_kernel", "bad_kernel", "benchmark", "machine", "metric").filter(
        pk=bisection_id).first()
    join = BisectRun.objects.filter(bisection_id=bisection_id, run=run).first()
    if bisection is None or join is None:
        return None
    state = bisection_state(bisection)
    step = next((s for s in state.steps if s.step.pk == join.step_id), None)
    return {"id": bisection.pk, "page": bisection.get_absolute_url(), "commit": join.commit,
            "side": join.side or None,
            "verdict": step.verdict.verdict if step else join.side,
            "reason": step.verdict.reason if step else f"measures the {join.side} end",
            "next": state.next, "next_hint": state.next_hint, "steps_left": state.steps_left,
            "first_bad": bisection.first_bad or None}

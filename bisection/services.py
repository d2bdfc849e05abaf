"""Writes for bisection sessions. Keyword arguments only; InputError names the bad field."""

from collections.abc import Mapping
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from benchmarks.errors import InputError
from benchmarks.identity import versions
from benchmarks.identity.commits import (
    is_ref,
    is_sha,
    kernel_commit,
    kernel_dirty,
    kernel_ref,
    same_commit,
)
from benchmarks.models import Kernel, Machine, Run
from benchmarks.parsers.units import metric_info
from benchmarks.services.catalog import (
    CatalogError,
    benchmark_get_or_create,
    identifier_check,
    kernel_get_or_create,
    metric_get_or_create,
)
from benchmarks.services.jsonvalues import json_value_check, text_problem
from benchmarks.signals import runs_visibility_changed
from regressions.models import Regression
from regressions.selectors import merge_target

from . import selectors
from .bisectlog import parse_bisect_log
from .estimate import read_estimate
from .models import Bisection, BisectRun, BisectStep, Mark, Side


class BisectPermissionDenied(InputError):
    status = 403


def _may_change(bisection: Bisection, user) -> None:
    if not (user and user.is_authenticated and (user.pk == bisection.owner_id or
                                                  user.is_staff)):
        raise BisectPermissionDenied(
            f"only the creator of bisection {bisection.pk} or staff can change it",
            field="bisect")


def _open(bisection: Bisection, *, field: str = "bisect") -> None:
    if bisection.is_ended:
        raise InputError(f"bisection {bisection.pk} has ended (first bad commit "
                         f"{bisection.first_bad}); start a new one", field=field)


def _text(value, *, field: str, limit: int = 200, required: bool = False) -> str:
    if value is None or value == "":
        if required:
            raise InputError(f"{field} is required", field=field)
        return ""
    if not isinstance(value, str):
        raise InputError(f"{field} must be a string", field=field)
    value = value.strip()
    if len(value) > limit:
        raise InputError(f"{field} is longer than {limit} characters", field=field)
    problem = text_problem(value)
    if problem:
        raise InputError(f"{field} {problem}", field=field)
    return identifier_check(value, field=field)


def _commit(value, *, field: str) -> str:
    commit = _text(value, field=field, limit=100)
    if commit and not is_ref(commit):
        raise InputError(f"{field} {commit!r} is not a commit id or ref", field=field)
    return commit


# --- creating ---------------------------------------------------------------------------------

@dataclass
class _Ends:
    good: str
    bad: str
    good_kernel: Kernel | None
    bad_kernel: Kernel | None


def _is_kernel(text: str) -> bool:
    return versions.sort_key(text).startswith("0") and not is_sha(text)


def _ends(good: str, bad: str, *, refs_only: bool = False) -> _Ends:
    """Kernels in natural order (benchmarks.identity.versions), or commits whose order git knows."""
    good_is_kernel = not refs_only and _is_kernel(good)
    bad_is_kernel = not refs_only and _is_kernel(bad)
    for name, value, is_kernel in (("good", good, good_is_kernel), ("bad", bad, bad_is_kernel)):
        if not is_kernel and not is_ref(value):
            raise InputError(f"{name} {value!r} is neither a kernel version nor a commit",
                             field=name)
    if good_is_kernel and bad_is_kernel:
        if versions.sort_key(good) >= versions.sort_key(bad):
            raise InputError(f"the good kernel {good} is not older than the bad kernel {bad} "
                             "(natural kernel order); a bisection looks for where a good "
                             "kernel turned bad", field="good")
    elif good == bad:
        raise InputError("good and bad are the same commit", field="good")
    return _Ends(good, bad, kernel_get_or_create(version=good) if good_is_kernel else None,
                 kernel_get_or_create(version=bad) if bad_is_kernel else None)


def _measured(*, benchmark, machine, metric, params) -> dict:
    found: dict = {"benchmark": None, "machine": None, "metric": None, "params": {}}
    if benchmark:
        # Named like a run submission names it: the ends may not have been measured yet.
        try:
            found["benchmark"] = benchmark_get_or_create(name=_text(benchmark,
                                                                    field="benchmark"))
        except CatalogError as exc:
            raise InputError(exc.message, field="benchmark") from None
    if machine not in (None, ""):
        text = str(machine) if isinstance(machine, int) and not isinstance(machine, bool) \
            else _text(machine, field="machine")
        found["machine"] = (Machine.objects.filter(pk=int(text)).first() if text.isdigit()
                            else Machine.objects.filter(name=text).order_by("id").first())
        if found["machine"] is None:
            raise InputError(f"no machine {text!r}", field="machine")
    if metric:
        name = _text(metric, field="metric", limit=100)
        if found["benchmark"] is None:
            raise InputError("metric needs a benchmark", field="metric")
        unit, higher = metric_info(name)
        found["metric"] = metric_get_or_create(benchmark=found["benchmark"], name=name,
                                               unit=unit, higher_is_better=higher)
    elif found["benchmark"] is not None:
        metrics = {m.name: m for m in found["benchmark"].metrics.all()}
        found["metric"] = metrics.get("time_ms") or (metrics[min(metrics)] if metrics else None)
    if params not in (None, {}):
        if not isinstance(params, Mapping):
            raise InputError("params must be an object", field="params")
        json_value_check(params, field="params")
        found["params"] = dict(params)
    return found


def _from_log(text: str, good: str, bad: str):
    log = parse_bisect_log(text)
    if not (good and bad) and not log.range_known:
        raise InputError("the log does not say both a good and a bad commit; give \"good\" "
                         "and \"bad\"", field="log")
    return log


def bisection_create(*, owner, good=None, bad=None, log=None, benchmark=None, machine=None,
                     metric=None, params=None, steps_left=None, revisions_left=None,
                     regression=None) -> Bisection:
    """A session between `good` and `bad` (kernel versions or commits), optionally continuing
    a pasted `git bisect log`, whose steps and end (first bad commit) it takes over."""
    if regression not in (None, ""):
        if any(v not in (None, "", {}) for v in (good, bad, benchmark, machine, metric, params)):
            raise InputError("a finding gives the kernels, benchmark, machine, metric and "
                             "params: send \"regression\" without them", field="regression")
        return _from_finding(owner=owner, regression=regression, log=log,
                             steps_left=steps_left, revisions_left=revisions_left)
    good = _text(good, field="good")
    bad = _text(bad, field="bad")
    if log not in (None, "") and not isinstance(log, str):
        raise InputError("log must be the text of `git bisect log`", field="log")
    parsed = _from_log(log, good, bad) if log else None
    if not parsed and not (good and bad):
        raise InputError("give \"good\" and \"bad\" kernels (or a finding as \"regression\", "
                         "or a `git bisect log` as \"log\")", field="bad" if good else "good")
    ends = _ends(good, bad) if good and bad else _ends(parsed.good[0], parsed.bad,
                                                       refs_only=True)
    measured = _measured(benchmark=benchmark, machine=machine, metric=metric, params=params)
    bisection = Bisection(
        owner=owner, good=ends.good, bad=ends.bad, good_kernel=ends.good_kernel,
        bad_kernel=ends.bad_kernel,
        good_ref=(parsed.good[0] if parsed and parsed.good else kernel_ref(ends.good))[:100],
        bad_ref=(parsed.bad if parsed and parsed.bad else kernel_ref(ends.bad))[:100],
        log_text=log or "", **measured)
    if parsed:
        bisection.paths = parsed.paths
        bisection.good_subject = parsed.subjects.get(bisection.good_ref, "")
        bisection.bad_subject = parsed.subjects.get(bisection.bad_ref, "")
    if parsed and parsed.estimate:
        bisection.revisions_left, bisection.steps_estimate, bisection.estimate_after = \
            parsed.estimate
    _estimate(bisection, steps_left=steps_left, revisions_left=revisions_left, decided=0)
    with transaction.atomic():
        bisection.save()
        if parsed:
            _steps_from_log(bisection, parsed)
    return bisection


def _from_finding(*, owner, regression, log, steps_left, revisions_left) -> Bisection:
    """A session on a finding's series between its good and bad kernels; the finding's runs
    are the two sides (selectors.bisection_state)."""
    if isinstance(regression, bool) or not str(regression).strip().isdigit():
        raise InputError(f"regression must be a finding's id, not {regression!r}",
                         field="regression")
    pk = int(str(regression).strip())
    finding = Regression.objects.select_related("good", "bad", "benchmark", "machine",
                                                "metric").filter(pk=pk).first() \
        if pk < 2**63 else None
    if finding is None:
        raise InputError(f"no finding {pk}", field="regression")
    # A merged finding lives on in the one it merged into (its URL redirects there): bisect that.
    finding = merge_target(finding)
    with transaction.atomic():
        bisection = bisection_create(
            owner=owner, good=finding.good.version, bad=finding.bad.version, log=log,
            steps_left=steps_left, revisions_left=revisions_left)
        bisection.regression, bisection.benchmark = finding, finding.benchmark
        bisection.machine, bisection.metric = finding.machine, finding.metric
        bisection.params = finding.params
        bisection.save(update_fields=["regression", "benchmark", "machine", "metric",
                                      "params"])
    return bisection


def _steps_from_log(bisection: Bisection, log) -> None:
    BisectStep.objects.bulk_create(
        BisectStep(bisection=bisection, position=position, commit=mark.commit[:100],
                   subject=mark.subject, mark=mark.verdict, mark_source="log")
        for position, mark in enumerate(_unique_marks(log.steps), 1))
    if log.first_bad:
        bisection.first_bad, bisection.first_bad_subject = log.first_bad, log.first_bad_subject
        bisection.ended, bisection.ended_by = timezone.now(), bisection.owner
        bisection.save(update_fields=["first_bad", "first_bad_subject", "ended", "ended_by"])


def _unique_marks(marks):
    """A commit marked twice keeps its last mark (git re-marks on `git bisect replay`)."""
    latest = {}
    for mark in marks:
        latest.pop(mark.commit, None)
        latest[mark.commit] = mark
    return list(latest.values())


def _estimate(bisection: Bisection, *, steps_left, revisions_left, decided: int) -> None:
    for name, value in (("revisions_left", revisions_left), ("steps_left", steps_left)):
        if value not in (None, ""):
            revisions, steps = read_estimate(value, field=name)
            bisection.revisions_left, bisection.steps_estimate = revisions, steps
            bisection.estimate_after = decided


# --- runs joining a session --------------------------------------------------------------------

@dataclass
class BisectClaim:
    """A run submission's `bisect` (and optional `commit`), checked before the runs are
    stored so a refused claim stores nothing."""

    bisection: Bisection
    commit: str


def bisect_claim(*, value, commit=None, user, field: str = "bisect") -> BisectClaim | None:
    """None when `value` is empty; InputError for an unknown or ended session, 403 for a
    session the user does not own."""
    if value in (None, ""):
        if commit not in (None, ""):
            _commit(commit, field="commit")  # still refuse garbage
        return None
    if isinstance(value, bool) or not str(value).strip().isdigit() or \
            not isinstance(value, (int, str)):
        raise InputError(f"{field} must be a bisection id, not {value!r}", field=field)
    pk = int(str(value).strip())
    bisection = Bisection.objects.filter(pk=pk).first() if pk < 2**63 else None
    if bisection is None:
        raise InputError(f"no bisection {pk}", field=field)
    _may_change(bisection, user)
    _open(bisection, field=field)
    return BisectClaim(bisection, _commit(commit, field="commit"))


def run_commit(run: Run, given: str = "") -> tuple[str, bool]:
    """The commit a run measured: given, recorded by the harness, or read from its kernel."""
    environment = run.environment if isinstance(run.environment, dict) else {}
    recorded = environment.get("kernel_commit")
    commit = given or (recorded if isinstance(recorded, str) and is_ref(recorded) else "") or \
        kernel_commit(run.kernel.version) or ""
    dirty = bool(environment.get("kernel_dirty")) or kernel_dirty(run.kernel.version)
    return commit, dirty


def bisect_join(*, claim: BisectClaim | None, runs: list[Run], where: str = "") -> None:
    """Join `runs` to the claimed session: at the step of their commit (made if new), or to an
    end when the commit is the good or bad one. Call inside the transaction storing them."""
    if claim is not None:
        bisect_join_all(joins=[(claim, run, where) for run in runs])


def bisect_join_all(*, joins: list[tuple[BisectClaim, Run, str]]) -> None:
    """Many (claim, run, where) at once, as a bulk submission has them: each session is locked
    and judged once, however many of its runs come in."""
    by_session: dict[int, list[tuple[BisectClaim, Run, str]]] = {}
    for join in joins:
        by_session.setdefault(join[0].bisection.pk, []).append(join)
    joined: list[int] = []
    with transaction.atomic():
        for pk in sorted(by_session):  # one lock order: two bulk requests cannot deadlock
            bisection = Bisection.objects.select_for_update().get(pk=pk)
            _open(bisection)
            for claim, run, where in by_session[pk]:
                if _join_one(bisection, run, claim.commit, where):
                    joined.append(run.pk)
            _conclude(bisection)
        if joined:
            # A run stored (and placed in release order) before it joined leaves that series
            # now: whatever was computed from it (regressions) is redone, as for a withdrawal.
            runs_visibility_changed.send(sender=Run, run_ids=joined)


def _join_one(bisection: Bisection, run: Run, given: str, where: str) -> bool:
    """Join `run` to `bisection`; True when it was not in it already."""
    commit, dirty = run_commit(run, given)
    prefix = f"{where}: " if where else ""
    line = int(where.split()[-1]) if where.startswith("line ") else None
    side = _side(bisection, run, commit)
    if side and not commit:  # a run of an end kernel (2.6.22 has no commit in its name)
        commit = bisection.good_ref if side == Side.GOOD else bisection.bad_ref
    if not commit:
        raise InputError(f"{prefix}kernel {run.kernel.version!r} carries no commit id (as "
                         "in 6.8.0-rc3-00042-gabcdef123456); give the commit under test as "
                         "\"commit\"", field="commit", line=line)
    _measure_defaults(bisection, run)
    if run.benchmark_id != bisection.benchmark_id:
        raise InputError(f"{prefix}bisection {bisection.pk} measures "
                         f"{bisection.benchmark.slug}, not {run.benchmark.slug}",
                         field="benchmark", line=line)
    step = None if side else _step_for(bisection, commit, run.kernel.version, dirty)
    return BisectRun.objects.get_or_create(bisection=bisection, run=run, defaults={
        "step": step, "side": side, "commit": commit})[1]


def _side(bisection: Bisection, run: Run, commit: str) -> str:
    for side, ref, kernel_id in ((Side.GOOD, bisection.good_ref, bisection.good_kernel_id),
                                 (Side.BAD, bisection.bad_ref, bisection.bad_kernel_id)):
        if same_commit(commit, ref) or run.kernel_id == kernel_id:
            return side
    return ""


def _measure_defaults(bisection: Bisection, run: Run) -> None:
    """The first run says what the session measures when its creator did not."""
    changed = []
    if bisection.benchmark_id is None:
        bisection.benchmark = run.benchmark
        changed.append("benchmark")
    if bisection.metric_id is None and bisection.benchmark_id == run.benchmark_id:
        names = {s.metric.name: s.metric for s in run.summaries.select_related("metric")}
        if names:
            bisection.metric = names.get("time_ms") or names[sorted(names)[0]]
            changed.append("metric")
    if bisection.machine_id is None:
        bisection.machine = run.machine
        changed.append("machine")
    if changed:
        bisection.save(update_fields=changed)


def _step_for(bisection: Bisection, commit: str, kernel: str, dirty: bool) -> BisectStep:
    for step in bisection.steps.all():
        if same_commit(step.commit, commit):
            if step.mark_source == "log":
                raise InputError(f"commit {commit} was already marked {step.mark} in the "
                                 "pasted log", field="commit")
            return step
    last = bisection.steps.order_by("-position").values_list("position", flat=True).first()
    return BisectStep.objects.create(bisection=bisection, position=(last or 0) + 1,
                                     commit=commit, kernel=kernel[:200], dirty=dirty)


def _conclude(bisection: Bisection) -> None:
    """End the session when git said no revisions are left after the commit under test and
    that commit is decided: the first bad commit is then the last bad step (or the bad end),
    as git would say. git's "roughly K steps" only suggests it (the user confirms)."""
    if bisection.is_ended:
        return
    state = selectors.bisection_state(bisection)
    if state.conclusion and state.exact:
        subject = next((s.step.subject for s in state.steps
                        if s.step.commit == state.conclusion), "")
        _end(bisection, commit=state.conclusion, subject=subject, user=bisection.owner)


def _end(bisection: Bisection, *, commit: str, subject: str, user) -> None:
    bisection.first_bad, bisection.first_bad_subject = commit[:100], subject[:300]
    bisection.ended, bisection.ended_by = timezone.now(), user
    bisection.save(update_fields=["first_bad", "first_bad_subject", "ended", "ended_by"])


# --- the user's own marks and corrections ------------------------------------------------------

def bisect_step_mark(*, bisection: Bisection, user, commit=None, verdict=None, kernel=None,
                     subject=None) -> BisectStep:
    """Add a step (the commit git checked out) or mark one good, bad or skip by hand;
    `verdict` "" or null returns it to the verdict judged from its runs."""
    _may_change(bisection, user)
    _open(bisection, field="commit")
    commit = _commit(commit, field="commit")
    if not commit:
        raise InputError("commit is required", field="commit")
    if verdict not in (None, "", *Mark.values):
        raise InputError("verdict must be good, bad, skip or empty (judge from runs)",
                         field="verdict")
    with transaction.atomic():
        bisection = Bisection.objects.select_for_update().get(pk=bisection.pk)
        step = _step_for(bisection, commit, _text(kernel, field="kernel"), False)
        if subject not in (None, ""):
            step.subject = _text(subject, field="subject", limit=300)
        if verdict is not None:
            step.mark, step.mark_source = verdict or "", "user" if verdict else ""
        step.save()
        _conclude(bisection)
    return step


def bisection_update(*, bisection: Bisection, user, first_bad=None, first_bad_subject=None,
                     steps_left=None, revisions_left=None) -> Bisection:
    """Say how many steps git says are left, or end the session with the first bad commit
    (git's "<sha> is the first bad commit" line is accepted as it is)."""
    _may_change(bisection, user)
    with transaction.atomic():
        bisection = Bisection.objects.select_for_update().get(pk=bisection.pk)
        if steps_left not in (None, "") or revisions_left not in (None, ""):
            _open(bisection, field="steps_left" if steps_left not in (None, "")
                  else "revisions_left")
            decided = sum(1 for s in selectors.bisection_state(bisection).steps
                          if s.verdict.verdict in ("good", "bad"))
            _estimate(bisection, steps_left=steps_left, revisions_left=revisions_left,
                      decided=decided)
            bisection.save(update_fields=["revisions_left", "steps_estimate", "estimate_after"])
            _conclude(bisection)
        if first_bad not in (None, ""):
            _open(bisection, field="first_bad")
            if not isinstance(first_bad, str):
                raise InputError("first_bad must be a commit", field="first_bad")
            commit = _commit(first_bad.strip().split()[0] if first_bad.strip() else "",
                             field="first_bad")
            subject = _text(first_bad_subject, field="first_bad_subject", limit=300) or next(
                (s.subject for s in bisection.steps.all() if same_commit(s.commit, commit)), "")
            _end(bisection, commit=commit, subject=subject, user=user)
    return bisection


class BisectionJoiner:
    """Runs submitted with `"bisect": id` (and `"commit"`) join that session's step; the core
    calls this through benchmarks.hooks (registered in BisectConfig.ready())."""

    key = "bisect"

    def claim(self, *, fields, user) -> BisectClaim | None:
        return bisect_claim(value=fields.get("bisect"), commit=fields.get("commit"), user=user)

    def join_all(self, *, joins: list[tuple[BisectClaim, Run, str]]) -> None:
        bisect_join_all(joins=joins)

    def answer(self, *, claim: BisectClaim, run: Run) -> dict | None:
        return selectors.joined_answer(claim.bisection.pk, run)

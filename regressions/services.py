"""Writes: findings of a series (each keeps its identity for life), status changes, follows,
thresholds, and the ledger of detection tasks."""

import logging
from bisect import bisect_left
from dataclasses import dataclass

from celery import current_app
from django.db import transaction
from django.utils import timezone

from benchmarks.errors import InputError
from benchmarks.models import Kernel, Metric, Run

from . import detect
from .models import (
    BenchmarkThresholds,
    DetectionJob,
    Event,
    FindingUpdate,
    Follow,
    Kind,
    Regression,
    Status,
)
from .series import KernelGroup, SeriesId, series_groups, series_of_runs

log = logging.getLogger(__name__)
DETECT_TASK = "regressions.detect_runs"
MAIL_TASK = "regressions.mail_new"
DETECTOR = "e-divisive+windowed-mwu/1"
TASK_CHUNK = 2000


def thresholds_for(benchmark_id: int) -> detect.Thresholds:
    """The benchmark's own thresholds, or the defaults."""
    row = BenchmarkThresholds.objects.filter(benchmark_id=benchmark_id).first()
    if row is None:
        return detect.DEFAULT_THRESHOLDS
    return detect.Thresholds(min_change=row.min_change, alpha=row.alpha,
                             min_effect=row.min_effect, min_repeats=row.min_repeats,
                             verdict_alpha=row.verdict_alpha, source="benchmark")


def _kind(change: float, higher_is_better: bool) -> str:
    better = change > 1 if higher_is_better else change < 1
    return Kind.IMPROVEMENT if better else Kind.REGRESSION


@dataclass
class _Detected:
    """A change point of this pass, in the terms of a finding."""

    point: detect.ChangePoint
    good: int  # kernel ids
    bad: int
    kind: str
    numbers: dict
    runs_good: list[int]
    runs_bad: list[int]


def _detected(point: detect.ChangePoint, groups: list[KernelGroup], higher_is_better: bool,
              limits: detect.Thresholds, newest: int) -> _Detected:
    low, high = point.ci95 or (None, None)
    n_good = sum(groups[i].size for i in point.good_kernels)
    n_bad = sum(groups[i].size for i in point.bad_kernels)
    kind = _kind(point.change, higher_is_better)
    inputs = {"good_kernels": [groups[i].version for i in point.good_kernels],
              "bad_kernels": [groups[i].version for i in point.bad_kernels],
              "n_good": n_good, "n_bad": n_bad, "n_good_tested": point.n_tested[0],
              "n_bad_tested": point.n_tested[1], "test": point.test or "",
              "thresholds": limits.as_dict()}
    numbers = {"kind": kind, "change": point.change, "ci95_low": low, "ci95_high": high,
               "p_value": point.p_value, "effect_size": point.effect,
               "needs_repeats": point.needs_repeats, "detector": DETECTOR,
               "statistic": "median", "n_good": n_good, "n_bad": n_bad,
               "test": point.test or "", "inputs": inputs, "seen": True,
               "last_seen_id": newest}
    return _Detected(point, groups[point.index - 1].kernel_id, groups[point.index].kernel_id,
                     kind, numbers, [r for i in point.good_kernels for r in groups[i].run_ids],
                     [r for i in point.bad_kernels for r in groups[i].run_ids])


class _Positions:
    """Where a kernel sits in this pass's series (its index, or where it would be inserted
    when it has left the series), so ranges of findings and change points compare."""

    def __init__(self, groups: list[KernelGroup]):
        self.keys = [(g.sort_key, g.version) for g in groups]

    def of(self, kernel) -> int:
        return bisect_left(self.keys, (kernel.sort_key, kernel.version))

    def range_of(self, finding: Regression) -> tuple[int, int]:
        return self.of(finding.good), self.of(finding.bad)


def _near(finding_range: tuple[int, int], index: int) -> bool:
    """The change at `index` (kernels index-1 -> index) overlaps the finding's range or touches
    it: the same change, seen with more data or one kernel off."""
    good, bad = finding_range
    return good <= index + 1 and index - 1 <= bad + 1


def _match(detected: list[_Detected], findings: list[Regression],
           positions: _Positions) -> list[tuple[_Detected, list[Regression]]]:
    """Each detected change with the live findings it continues (oldest first; more than one
    means they merge). Exact kernels first, then overlapping or adjacent ranges of the same
    direction."""
    claimed: set[int] = set()
    pairs: dict[int, list[Regression]] = {}
    for n, item in enumerate(detected):
        exact = [f for f in findings if (f.good_id, f.bad_id, f.kind) ==
                 (item.good, item.bad, item.kind)]
        if exact:
            pairs[n] = exact[:1]
            claimed.add(exact[0].pk)
    for n, item in enumerate(detected):
        if n in pairs:
            continue
        near = [f for f in findings if f.pk not in claimed and f.kind == item.kind
                and _near(positions.range_of(f), item.point.index)]
        pairs[n] = near
        claimed.update(f.pk for f in near)
    return [(item, pairs[n]) for n, item in enumerate(detected)]


def _entry(finding: Regression, event: str, note: str = "") -> FindingUpdate:
    return FindingUpdate(regression=finding, event=event, good=finding.good.version,
                         bad=finding.bad.version, change=finding.change,
                         p_value=finding.p_value, n_good=finding.n_good, n_bad=finding.n_bad,
                         note=note[:300])


def _update(finding: Regression, item: _Detected, history: list) -> None:
    """The finding continues as `item` says: same id, fresh kernels and numbers."""
    before = (finding.good_id, finding.bad_id, finding.n_good, finding.n_bad,
              finding.needs_repeats, finding.seen)
    values = {"good_id": item.good, "bad_id": item.bad, "updated": timezone.now(),
              **item.numbers}
    Regression.objects.filter(pk=finding.pk).update(**values)
    # The row is locked (select_for_update): what was written is what a re-read would give.
    # A changed good/bad/last_seen id drops its cached kernel, read again only if needed.
    for name, value in values.items():
        setattr(finding, name, value)
    if not before[5]:
        history.append(_entry(finding, Event.SEEN_AGAIN))
    elif before[:2] != (item.good, item.bad):
        history.append(_entry(finding, Event.MOVED,
                              note="was {} -> {}".format(*_versions(*before[:2]))))
    elif before[2:5] != (finding.n_good, finding.n_bad, finding.needs_repeats):
        history.append(_entry(finding, Event.UPDATED))


def _versions(good: int, bad: int) -> tuple[str, str]:
    names = dict(Kernel.objects.filter(pk__in=[good, bad]).values_list("pk", "version"))
    return names.get(good, "?"), names.get(bad, "?")


def _merge(survivor: Regression, others: list[Regression], history: list) -> None:
    """`others` become part of `survivor`: their URLs redirect there, their bisections move."""
    for other in others:
        Regression.objects.filter(pk=other.pk).update(merged_into=survivor, seen=False,
                                                      updated=timezone.now())
        other.bisections.all().update(regression=survivor)
        history.append(_entry(other, Event.MERGED, note=f"merged into finding {survivor.pk}"))
        history.append(_entry(survivor, Event.MERGED, note=f"finding {other.pk} merged in"))


def _create(series: SeriesId, item: _Detected, history: list) -> Regression:
    finding = Regression.objects.create(
        benchmark_id=series.benchmark_id, machine_id=series.machine_id,
        metric_id=series.metric_id, policy=series.policy, params=series.params,
        tunables=series.tunables, series_key=series.key, good_id=item.good, bad_id=item.bad,
        **item.numbers)
    history.append(_entry(finding, Event.FIRST_SEEN))
    return finding


def _links_set(finding: Regression, name: str, run_ids: list[int]) -> None:
    """finding.<name> becomes exactly `run_ids`, through the link table alone: the related
    manager's set() reads the linked runs joined and ordered by Run's ordering (thousands of
    runs sorted on every pass), where only the ids are compared."""
    through = getattr(Regression, name).through
    links = through.objects.filter(regression_id=finding.pk)
    have = set(links.values_list("run_id", flat=True))
    wanted = set(run_ids)
    if have - wanted:
        links.filter(run_id__in=have - wanted).delete()
    if wanted - have:
        through.objects.bulk_create([through(regression_id=finding.pk, run_id=run_id)
                                     for run_id in sorted(wanted - have)])


def series_findings_store(*, series: SeriesId, groups: list[KernelGroup],
                          points: list[detect.ChangePoint], higher_is_better: bool,
                          thresholds: detect.Thresholds = detect.DEFAULT_THRESHOLDS
                          ) -> list[int]:
    """Make the series' findings follow what `points` say, keeping every finding's identity:
    a change seen again updates its finding in place (its kernels may narrow or move), two
    findings one change continues merge (the younger redirects), a change no longer seen is
    marked so (never deleted). Returns the ids of new findings."""
    newest = groups[-1].kernel_id if groups else None
    detected = [_detected(p, groups, higher_is_better, thresholds, newest) for p in points]
    positions = _Positions(groups)
    searched_from = max(0, len(groups) - detect.MAX_KERNELS)
    created, history = [], []
    with transaction.atomic():
        findings = list(Regression.objects.for_series(series.key).live()
                        .select_related("good", "bad").select_for_update(of=("self",))
                        .order_by("pk"))
        continued = set()
        for item, matches in _match(detected, findings, positions):
            if matches:
                survivor = matches[0]
                _merge(survivor, matches[1:], history)
                _update(survivor, item, history)
                continued.update(f.pk for f in matches)
            else:
                survivor = _create(series, item, history)
                created.append(survivor.pk)
            _links_set(survivor, "runs_good", item.runs_good)
            _links_set(survivor, "runs_bad", item.runs_bad)
        for finding in findings:
            if finding.pk in continued or not finding.seen:
                continue
            if positions.of(finding.bad) < searched_from:  # older than the search looked
                continue
            Regression.objects.filter(pk=finding.pk).update(seen=False, updated=timezone.now())
            history.append(_entry(finding, Event.NOT_SEEN, note="not seen since " + (
                finding.last_seen.version if finding.last_seen_id else finding.bad.version)))
        FindingUpdate.objects.bulk_create(history)
        if created:
            ids = list(created)
            transaction.on_commit(lambda: _send(MAIL_TASK, ids))
    return created


def series_detect(*, series: SeriesId) -> list[int]:
    """Detect one series from the database and store its findings; new finding ids."""
    metric = Metric.objects.filter(pk=series.metric_id).first()
    if metric is None:
        return []
    groups = series_groups(series)
    limits = thresholds_for(series.benchmark_id)
    points = detect.detect([group.array() for group in groups],
                           sizes=[group.size for group in groups],
                           thresholds=limits) if len(groups) > 1 else []
    return series_findings_store(series=series, groups=groups, points=points,
                                 higher_is_better=metric.higher_is_better, thresholds=limits)


def regressions_detect_runs(*, run_ids) -> list[int]:
    """Detection for the series these runs are in, and only those."""
    created = []
    for series in sorted(series_of_runs(run_ids), key=lambda s: s.key):
        created += series_detect(series=series)
    return created


def send_task(task_name: str, *args, countdown: int | None = None) -> None:
    # A broker hiccup must not turn a stored upload into an error: a detection job's ledger
    # row stays queued and the sweep sends it again.
    try:
        current_app.tasks[task_name].apply_async(args=args, countdown=countdown)
    except Exception:  # noqa: BLE001 - any broker error
        log.exception("could not queue %s", task_name)


_send = send_task


def detect_on_commit(sender=None, *, run_ids, **kwargs) -> None:
    """Receiver of benchmarks.signals.runs_stored: queue detection once the runs are visible.
    Each task's ledger row is written with the runs (same transaction), so a message the
    broker loses is sent again by the sweep (regressions.jobs)."""
    ids = [int(pk) for pk in run_ids if pk is not None]
    # A bulk submission of 100,000 runs becomes tasks of a bounded size that workers share.
    for start in range(0, len(ids), TASK_CHUNK):
        chunk = ids[start:start + TASK_CHUNK]
        job = DetectionJob.objects.create(run_ids=chunk)
        transaction.on_commit(lambda chunk=chunk, job=job.pk: _send(DETECT_TASK, chunk, job))


# --- people ---------------------------------------------------------------------------------

def may_set_status(user, regression: Regression, status: str) -> bool:
    """Signed-in users may confirm or mark fixed; only the owner of one of the finding's runs
    or staff may call it invalid."""
    if not (user and user.is_authenticated):
        return False
    if status != Status.INVALID or user.is_staff:
        return True
    runs = Run.objects.filter(submitter=user)
    return (regression.runs_bad.filter(pk__in=runs).exists()
            or regression.runs_good.filter(pk__in=runs).exists())


def status_checked(body) -> str:
    status = body.get("status") if isinstance(body, dict) else None
    if not isinstance(status, str) or status not in Status.values:
        raise InputError(f"status must be one of {', '.join(Status.values)}", field="status")
    return status


def regression_status_set(*, regression: Regression, user, status: str) -> Regression:
    status = status_checked({"status": status})
    regression.status = status
    regression.status_changed_by = user
    regression.status_changed_at = timezone.now()
    regression.save(update_fields=["status", "status_changed_by", "status_changed_at"])
    return regression


THRESHOLD_LIMITS = {  # name: (type, lowest, highest)
    "min_change": (float, 0.0, 10.0), "alpha": (float, 1e-12, 0.5),
    "min_effect": (float, 0.0, 1.0), "min_repeats": (int, 2, 1000),
    "verdict_alpha": (float, 1e-12, 0.5),
}


def may_set_thresholds(user, benchmark) -> bool:
    if not (user and user.is_authenticated):
        return False
    return user.is_staff or BenchmarkThresholds.objects.filter(benchmark=benchmark,
                                                               owner=user).exists()


def _threshold_value(name: str, value):
    kind, low, high = THRESHOLD_LIMITS[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or \
            (kind is int and not float(value).is_integer()):
        raise InputError(f"{name} must be a {'whole ' if kind is int else ''}number",
                         field=name)
    if not low <= value <= high:
        raise InputError(f"{name} must be between {low:g} and {high:g}", field=name)
    return kind(value)


def thresholds_set(*, benchmark, user, values: dict) -> BenchmarkThresholds:
    """Set some of the benchmark's thresholds (the others keep their value or default) and
    queue detection of its series again under them. `owner` (a username) only by staff."""
    unknown = sorted(set(values) - set(THRESHOLD_LIMITS) - {"owner"})
    if unknown:
        raise InputError(f"unknown threshold {unknown[0]!r} (one of "
                         f"{', '.join(THRESHOLD_LIMITS)}, owner)", field=unknown[0])
    checked = {name: _threshold_value(name, value) for name, value in values.items()
               if name != "owner"}
    with transaction.atomic():
        row = BenchmarkThresholds.objects.select_for_update().filter(benchmark=benchmark).first()
        if row is None:
            row = BenchmarkThresholds(benchmark=benchmark, **{
                name: getattr(detect.DEFAULT_THRESHOLDS, name) for name in THRESHOLD_LIMITS})
        if "owner" in values:
            row.owner = _owner_checked(user, values["owner"])
        for name, value in checked.items():
            setattr(row, name, value)
        row.updated_by, row.updated = user, timezone.now()
        row.save()
        run_ids = list(Run.objects.filter(benchmark=benchmark, withdrawn__isnull=True)
                       .values_list("pk", flat=True))
        detect_on_commit(run_ids=run_ids)
    return row


def _owner_checked(user, name):
    from django.contrib.auth import get_user_model

    if not user.is_staff:
        raise InputError("only staff may name a benchmark's owner", field="owner", status=403)
    if name in (None, ""):
        return None
    owner = get_user_model().objects.filter(username=str(name)).first()
    if owner is None:
        raise InputError(f"no user {name!r}", field="owner")
    return owner


def thresholds_answer(benchmark) -> dict:
    row = BenchmarkThresholds.objects.filter(benchmark=benchmark).select_related(
        "owner").first()
    return {"benchmark": benchmark.slug, **thresholds_for(benchmark.pk).as_dict(),
            "owner": row.owner.username if row and row.owner else None,
            "defaults": detect.DEFAULT_THRESHOLDS.as_dict()}


def follow_toggle(*, user, benchmark=None, machine=None) -> bool:
    """Follow the benchmark or machine, or stop following it; True when now following."""
    target = {"benchmark": benchmark} if benchmark is not None else {"machine": machine}
    deleted, _ = Follow.objects.filter(user=user, **target).delete()
    if deleted:
        return False
    Follow.objects.get_or_create(user=user, **target)
    return True


def regressions_detect_all(*, benchmark=None) -> dict:
    """The full re-scan, one series at a time (each read within detection's bounds). Findings
    of series that have no live release run left are marked not seen."""
    from .series import all_series

    every = all_series(benchmark=benchmark)
    created = 0
    for series in sorted(every, key=lambda s: s.key):
        created += len(series_detect(series=series))
    gone = Regression.objects.live().filter(seen=True).exclude(
        series_key__in=[series.key for series in every])
    if benchmark is not None:
        gone = gone.filter(benchmark=benchmark)
    unseen = 0
    for finding in gone.select_related("good", "bad", "last_seen"):
        unseen += _mark_unseen(finding)
    return {"series": len(every), "created": created, "not_seen": unseen}


def _mark_unseen(finding: Regression) -> int:
    with transaction.atomic():
        if not Regression.objects.filter(pk=finding.pk, seen=True).update(
                seen=False, updated=timezone.now()):
            return 0
        FindingUpdate.objects.create(regression=finding, event=Event.NOT_SEEN,
                                     good=finding.good.version, bad=finding.bad.version,
                                     change=finding.change, p_value=finding.p_value,
                                     n_good=finding.n_good, n_bad=finding.n_bad,
                                     note="its series has no live runs")
    return 1

"""Writes: findings of a series (idempotent), status changes, follows."""

import logging

from celery import current_app
from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmarks.errors import InputError
from benchmarks.models import Metric, Run

from . import detect
from .models import Follow, Kind, Regression, Status
from .series import KernelGroup, SeriesId, series_groups, series_of_runs

log = logging.getLogger(__name__)
DETECT_TASK = "regressions.detect_runs"
MAIL_TASK = "regressions.mail_new"
DETECTOR = "e-divisive+windowed-mwu/1"
TASK_CHUNK = 2000


def _kind(change: float, higher_is_better: bool) -> str:
    better = change > 1 if higher_is_better else change < 1
    return Kind.IMPROVEMENT if better else Kind.REGRESSION


def _numbers(point: detect.ChangePoint, groups: list[KernelGroup],
             higher_is_better: bool) -> dict:
    low, high = point.ci95 or (None, None)
    return {"kind": _kind(point.change, higher_is_better), "change": point.change,
            "ci95_low": low, "ci95_high": high, "p_value": point.p_value,
            "effect_size": point.effect, "needs_repeats": point.needs_repeats,
            "detector": DETECTOR, "statistic": "median",
            "n_good": sum(len(groups[i].values) for i in point.good_kernels),
            "n_bad": sum(len(groups[i].values) for i in point.bad_kernels)}


def _runs(groups: list[KernelGroup], indices) -> list[int]:
    return [run_id for i in indices for run_id in groups[i].run_ids]


def _upsert(series: SeriesId, good: int, bad: int, numbers: dict,
            existing: dict) -> tuple[Regression, bool]:
    """The finding at (good, bad) kernels with fresh numbers; True when it is new."""
    finding = existing.get((good, bad))
    if finding is not None:
        Regression.objects.filter(pk=finding.pk).update(updated=timezone.now(), **numbers)
        return finding, False
    try:
        with transaction.atomic():  # a savepoint: another worker may store it first
            return Regression.objects.create(
                benchmark_id=series.benchmark_id, machine_id=series.machine_id,
                metric_id=series.metric_id, policy=series.policy, params=series.params,
                tunables=series.tunables, series_key=series.key, good_id=good, bad_id=bad,
                **numbers), True
    except IntegrityError:
        finding = Regression.objects.get(series_key=series.key, good_id=good, bad_id=bad)
        Regression.objects.filter(pk=finding.pk).update(updated=timezone.now(), **numbers)
        return finding, False


def series_findings_store(*, series: SeriesId, groups: list[KernelGroup],
                          points: list[detect.ChangePoint], higher_is_better: bool) -> list[int]:
    """Make the series' findings what `points` say: a finding already there keeps its id and
    status (numbers refreshed); open findings no longer detected go; a human's status stays.
    Returns the ids of new findings."""
    created: list[int] = []
    with transaction.atomic():
        existing = {(r.good_id, r.bad_id): r for r in
                    Regression.objects.for_series(series.key).select_for_update()}
        kept = set()
        for point in points:
            good, bad = groups[point.index - 1].kernel_id, groups[point.index].kernel_id
            finding, new = _upsert(series, good, bad,
                                   _numbers(point, groups, higher_is_better), existing)
            finding.runs_good.set(_runs(groups, point.good_kernels))
            finding.runs_bad.set(_runs(groups, point.bad_kernels))
            kept.add(finding.pk)
            if new:
                created.append(finding.pk)
        stale = Regression.objects.for_series(series.key).filter(status=Status.OPEN)
        stale.exclude(pk__in=kept).delete()
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
    points = detect.detect([group.array() for group in groups]) if len(groups) > 1 else []
    return series_findings_store(series=series, groups=groups, points=points,
                                 higher_is_better=metric.higher_is_better)


def regressions_detect_runs(*, run_ids) -> list[int]:
    """Detection for the series these runs are in, and only those."""
    created = []
    for series in sorted(series_of_runs(run_ids), key=lambda s: s.key):
        created += series_detect(series=series)
    return created


def _send(task_name: str, *args) -> None:
    # A broker hiccup must not turn a stored upload into an error: the full re-scan command
    # (manage.py detect_regressions) catches up on anything missed.
    try:
        current_app.tasks[task_name].delay(*args)
    except Exception:  # noqa: BLE001 - any broker error
        log.exception("could not queue %s", task_name)


def detect_on_commit(sender=None, *, run_ids, **kwargs) -> None:
    """Receiver of benchmarks.signals.runs_stored: queue detection once the runs are visible."""
    ids = [int(pk) for pk in run_ids if pk is not None]
    # A bulk submission of 100,000 runs becomes tasks of a bounded size that workers share.
    for start in range(0, len(ids), TASK_CHUNK):
        chunk = ids[start:start + TASK_CHUNK]
        transaction.on_commit(lambda chunk=chunk: _send(DETECT_TASK, chunk))


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


def follow_toggle(*, user, benchmark=None, machine=None) -> bool:
    """Follow the benchmark or machine, or stop following it; True when now following."""
    target = {"benchmark": benchmark} if benchmark is not None else {"machine": machine}
    deleted, _ = Follow.objects.filter(user=user, **target).delete()
    if deleted:
        return False
    Follow.objects.get_or_create(user=user, **target)
    return True


def regressions_detect_all(*, benchmark=None) -> dict:
    """The full re-scan: every series (of one benchmark if given) read in one ordered query."""
    from benchmarks.models import Sample

    from .series import group_by_series, live_runs

    runs = live_runs(Run.objects.all())
    if benchmark is not None:
        runs = runs.filter(benchmark=benchmark)
    rows = (Sample.objects.filter(run__in=runs)
            .order_by("run__kernel__sort_key", "run__kernel__version", "run_id", "index")
            .values_list("metric_id", "run__benchmark_id", "run__machine_id", "run__policy",
                         "run__params", "run__tunables", "run__kernel_id",
                         "run__kernel__version", "run_id", "value"))
    by_series = group_by_series(rows.iterator(chunk_size=20_000))
    better = dict(Metric.objects.values_list("pk", "higher_is_better"))
    created = 0
    for series, groups in by_series.items():
        points = detect.detect([g.array() for g in groups]) if len(groups) > 1 else []
        created += len(series_findings_store(series=series, groups=groups, points=points,
                                             higher_is_better=better[series.metric_id]))
    gone = Regression.objects.filter(status=Status.OPEN).exclude(
        series_key__in=[series.key for series in by_series])
    if benchmark is not None:
        gone = gone.filter(benchmark=benchmark)
    removed, _ = gone.delete()
    return {"series": len(by_series), "created": created, "removed_series_findings": removed}

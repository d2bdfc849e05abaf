"""Findings of the change-point detector: where a series got slower (or faster).

A series is (benchmark, machine, metric, policy, params, tunables) in natural kernel order;
`series_key` is a hash of it so one series' findings are one indexed lookup. The model's field
names are a contract for other apps (bisections), keep them stable.
"""

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone


class Kind(models.TextChoices):
    REGRESSION = "regression", "regression"
    IMPROVEMENT = "improvement", "improvement"


class Status(models.TextChoices):
    OPEN = "open", "open"
    CONFIRMED = "confirmed", "confirmed"
    INVALID = "invalid", "invalid"
    FIXED = "fixed", "fixed"


class RegressionQuerySet(models.QuerySet):
    def open(self):
        return self.filter(status=Status.OPEN)

    def for_series(self, series_key: str):
        return self.filter(series_key=series_key)

    def live(self):
        """Findings that stand on their own (not merged into another)."""
        return self.filter(merged_into__isnull=True)

    def with_list_relations(self):
        return self.select_related("benchmark", "machine", "metric", "good", "bad")


class Regression(models.Model):
    kind = models.CharField(max_length=16, choices=Kind, default=Kind.REGRESSION)
    # The series.
    benchmark = models.ForeignKey(
        "benchmarks.Benchmark", on_delete=models.CASCADE, related_name="regressions"
    )
    machine = models.ForeignKey(
        "benchmarks.Machine", on_delete=models.CASCADE, related_name="regressions"
    )
    metric = models.ForeignKey(
        "benchmarks.Metric", on_delete=models.CASCADE, related_name="regressions"
    )
    policy = models.CharField(max_length=100, blank=True)
    params = models.JSONField(default=dict, blank=True)
    tunables = models.JSONField(default=dict, blank=True)
    series_key = models.CharField(max_length=64, db_index=True)
    # The change: last kernel before it and first kernel after it, in natural order.
    good = models.ForeignKey("benchmarks.Kernel", on_delete=models.PROTECT, related_name="+")
    bad = models.ForeignKey("benchmarks.Kernel", on_delete=models.PROTECT, related_name="+")
    statistic = models.CharField(max_length=16, default="median")
    change = models.FloatField(help_text="bad/good ratio of the statistic")
    ci95_low = models.FloatField(null=True, blank=True)
    ci95_high = models.FloatField(null=True, blank=True)
    p_value = models.FloatField(null=True, blank=True)
    effect_size = models.FloatField(null=True, blank=True)  # Cliff's delta, -1..1
    runs_good = models.ManyToManyField("benchmarks.Run", related_name="+", blank=True)
    runs_bad = models.ManyToManyField("benchmarks.Run", related_name="+", blank=True)
    n_good = models.PositiveIntegerField(default=0)
    n_bad = models.PositiveIntegerField(default=0)
    # A side has a single value: the change is visible but no test can confirm it.
    needs_repeats = models.BooleanField(default=False)
    detector = models.CharField(max_length=64, blank=True)
    # The verdict's inputs: the test, the kernels of each window, the values the test saw
    # (after thinning) and the thresholds that applied.
    test = models.CharField(max_length=32, blank=True)
    inputs = models.JSONField(default=dict, blank=True)
    # Identity for life: the last pass that saw the change, and the newest release kernel of
    # the series then. A change no longer detected is "not seen since" that kernel, not deleted.
    seen = models.BooleanField(default=True)
    last_seen = models.ForeignKey("benchmarks.Kernel", null=True, blank=True,
                                  on_delete=models.PROTECT, related_name="+")
    # Two findings that became one: this one's URL leads to the other.
    merged_into = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="merged")
    status = models.CharField(max_length=16, choices=Status, default=Status.OPEN, db_index=True)
    status_changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    status_changed_at = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(default=timezone.now, db_index=True)
    updated = models.DateTimeField(default=timezone.now)

    objects = RegressionQuerySet.as_manager()

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [
            models.Index(fields=["status", "-created"], name="regression_status_new"),
            models.Index(fields=["benchmark", "machine", "metric"], name="regression_series"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["series_key", "good", "bad", "kind"],
                condition=models.Q(merged_into__isnull=True),
                name="regression_unique_per_change",
            )
        ]

    def __str__(self):
        return (f"{self.benchmark.slug} {self.metric.name} {self.change_percent} "
                f"{self.good.version} -> {self.bad.version} on {self.machine.name}")

    def get_absolute_url(self):
        return reverse("regression-detail", args=[self.pk])

    @property
    def change_percent(self) -> str:
        """`+122%` for a ratio of 2.22."""
        return f"{(self.change - 1) * 100:+.0f}%"

    @property
    def verdict(self) -> str:
        """What the finding says: a regression or an improvement, or "needs repeats" when a
        kernel at the change has fewer values than the thresholds ask (never a regression)."""
        return "needs repeats" if self.needs_repeats else self.kind

    @property
    def seen_text(self) -> str:
        """`current`, or `not_since <kernel>` for a change the last pass no longer showed."""
        if self.seen:
            return "current"
        return f"not_since {self.last_seen.version if self.last_seen_id else self.bad.version}"


class Event(models.TextChoices):
    FIRST_SEEN = "first_seen", "first seen"
    MOVED = "moved", "kernels moved"
    UPDATED = "updated", "numbers updated"
    NOT_SEEN = "not_seen", "no longer seen"
    SEEN_AGAIN = "seen_again", "seen again"
    MERGED = "merged", "merged"


class FindingUpdate(models.Model):
    """One entry of a finding's history: what a detection pass changed about it."""

    regression = models.ForeignKey(Regression, on_delete=models.CASCADE, related_name="history")
    at = models.DateTimeField(default=timezone.now)
    event = models.CharField(max_length=16, choices=Event)
    good = models.CharField(max_length=200)
    bad = models.CharField(max_length=200)
    change = models.FloatField(null=True, blank=True)
    p_value = models.FloatField(null=True, blank=True)
    n_good = models.PositiveIntegerField(default=0)
    n_bad = models.PositiveIntegerField(default=0)
    note = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["regression_id", "at", "id"]

    def __str__(self):
        return f"finding {self.regression_id}: {self.event} {self.good} -> {self.bad}"


class BenchmarkThresholds(models.Model):
    """A benchmark's own thresholds; a benchmark without a row uses detect.Thresholds()'s
    defaults. Set by its owner (named here by staff) or by staff."""

    benchmark = models.OneToOneField("benchmarks.Benchmark", on_delete=models.CASCADE,
                                     related_name="regression_thresholds")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                              on_delete=models.SET_NULL, related_name="+",
                              help_text="may change these thresholds besides staff")
    min_change = models.FloatField(help_text="smallest |bad/good - 1| that counts, e.g. 0.02")
    alpha = models.FloatField(help_text="detection's significance level, e.g. 0.002")
    min_effect = models.FloatField(help_text="smallest |effect size| (rank-biserial), e.g. 0.3")
    min_repeats = models.PositiveSmallIntegerField(
        help_text="values a kernel needs before a change can be a regression (at least 2)")
    verdict_alpha = models.FloatField(help_text="an upload's verdict's level, e.g. 0.05")
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    updated = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "benchmark thresholds"

    def __str__(self):
        return f"thresholds of {self.benchmark}"


class JobState(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    RETRYING = "retrying", "failed, will retry"
    DONE = "done", "done"
    PARKED = "parked", "parked (failed too often)"


class DetectionJob(models.Model):
    """One detection task's ledger row, written with the runs it is about: how often it ran,
    why it failed, whether it is done. A job that fails MAX_ATTEMPTS times is parked (staff see
    it in the admin) instead of being redelivered forever; a queued or running job whose
    message was lost is sent again by the sweep (regressions.tasks)."""

    run_ids = models.JSONField(default=list)
    state = models.CharField(max_length=16, choices=JobState, default=JobState.QUEUED,
                             db_index=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self):
        return f"detection job {self.pk} ({self.state}, {len(self.run_ids)} runs)"


def regression_by_pk_text(target_id: str):
    """The thread-target resolver: a finding by its id as text, or None."""
    if not target_id.isdigit():
        return None
    return Regression.objects.filter(pk=int(target_id)).first()


class Follow(models.Model):
    """A user following a benchmark or a machine: mail on each new finding in it."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="regression_follows"
    )
    benchmark = models.ForeignKey(
        "benchmarks.Benchmark", null=True, blank=True, on_delete=models.CASCADE,
        related_name="+",
    )
    machine = models.ForeignKey(
        "benchmarks.Machine", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(benchmark__isnull=False, machine__isnull=True)
                           | models.Q(benchmark__isnull=True, machine__isnull=False)),
                name="follow_one_target",
            ),
            models.UniqueConstraint(fields=["user", "benchmark"], name="follow_unique_benchmark",
                                    condition=models.Q(benchmark__isnull=False)),
            models.UniqueConstraint(fields=["user", "machine"], name="follow_unique_machine",
                                    condition=models.Q(machine__isnull=False)),
        ]

    def __str__(self):
        return f"{self.user} follows {self.benchmark or self.machine}"

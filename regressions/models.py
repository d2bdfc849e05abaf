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
                fields=["series_key", "good", "bad"], name="regression_unique_per_change"
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

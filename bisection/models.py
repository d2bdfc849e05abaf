"""A bisection session: good and bad ends, the steps tested between them, the end state."""

from django.conf import settings
from django.db import models
from django.urls import reverse

from benchmarks.models import Benchmark, Kernel, Machine, Metric, Run


class Bisection(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="bisections")
    # The ends as given: kernel versions, or refs from a pasted log.
    good = models.CharField(max_length=200)
    bad = models.CharField(max_length=200)
    good_kernel = models.ForeignKey(Kernel, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="+")
    bad_kernel = models.ForeignKey(Kernel, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    # What `git bisect` calls the ends: a commit id, or a release tag such as v2.6.24.
    good_ref = models.CharField(max_length=100)
    bad_ref = models.CharField(max_length=100)
    good_subject = models.CharField(max_length=300, blank=True)
    bad_subject = models.CharField(max_length=300, blank=True)
    # The finding it pins down (regressions): its ends, series and runs; the first
    # bad commit shows on the finding's page through `regression.bisections`.
    regression = models.ForeignKey("regressions.Regression", null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="bisections")
    # What is measured: set at creation, or taken from the first run that joins.
    benchmark = models.ForeignKey(Benchmark, null=True, blank=True, on_delete=models.PROTECT,
                                  related_name="+")
    machine = models.ForeignKey(Machine, null=True, blank=True, on_delete=models.PROTECT,
                                related_name="+")
    metric = models.ForeignKey(Metric, null=True, blank=True, on_delete=models.PROTECT,
                               related_name="+")
    params = models.JSONField(default=dict, blank=True)
    paths = models.JSONField(default=list, blank=True)  # `git bisect start ... -- PATHS`
    log_text = models.TextField(blank=True)  # the pasted log, verbatim
    # git's "Bisecting: N revisions left to test after this (roughly K steps)", and how many
    # steps had been decided when it was given.
    revisions_left = models.PositiveIntegerField(null=True, blank=True)
    steps_estimate = models.PositiveSmallIntegerField(null=True, blank=True)
    estimate_after = models.PositiveSmallIntegerField(default=0)
    first_bad = models.CharField(max_length=100, blank=True)
    first_bad_subject = models.CharField(max_length=300, blank=True)
    ended = models.DateTimeField(null=True, blank=True)
    ended_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                 on_delete=models.SET_NULL, related_name="+")
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self):
        return f"bisection {self.pk}: {self.good}..{self.bad}"

    def get_absolute_url(self):
        return reverse("bisect-detail", args=[self.pk])

    @property
    def is_ended(self) -> bool:
        return self.ended is not None


class Mark(models.TextChoices):
    NONE = "", "judged from runs"
    GOOD = "good", "good"
    BAD = "bad", "bad"
    SKIP = "skip", "skip"


class BisectStep(models.Model):
    """One commit under test. Its verdict is judged from its runs unless marked (by the log or
    by the user)."""

    bisection = models.ForeignKey(Bisection, on_delete=models.CASCADE, related_name="steps")
    position = models.PositiveSmallIntegerField()
    commit = models.CharField(max_length=100)
    kernel = models.CharField(max_length=200, blank=True)
    subject = models.CharField(max_length=300, blank=True)
    mark = models.CharField(max_length=8, choices=Mark, blank=True, default="")
    mark_source = models.CharField(max_length=8, blank=True)  # log | user
    dirty = models.BooleanField(default=False)  # a kernel built from a tree with local changes
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["bisection_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["bisection", "commit"], name="bisect_step_commit"),
            models.UniqueConstraint(fields=["bisection", "position"],
                                    name="bisect_step_position"),
        ]

    def __str__(self):
        return f"step {self.position} of bisection {self.bisection_id}: {self.commit}"


class Side(models.TextChoices):
    GOOD = "good", "good end"
    BAD = "bad", "bad end"


class BisectRun(models.Model):
    """A run that joined a session: at a step, or measuring one of the ends."""

    bisection = models.ForeignKey(Bisection, on_delete=models.CASCADE, related_name="joined")
    step = models.ForeignKey(BisectStep, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="joins")
    side = models.CharField(max_length=4, choices=Side, blank=True)
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="bisect_joins")
    commit = models.CharField(max_length=100)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["bisection", "run"], name="bisect_run_once"),
        ]

    def __str__(self):
        return f"run {self.run_id} in bisection {self.bisection_id}"

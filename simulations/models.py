"""A simulation job and its points: one point = one kernel x one combination of sweep values."""

from django.conf import settings
from django.db import models
from django.urls import reverse


class Status(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


ACTIVE = (Status.QUEUED, Status.RUNNING)


class SimulationJob(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="simulation_jobs")
    spec = models.JSONField()
    spec_hash = models.CharField(max_length=64, db_index=True)
    simulator_version = models.CharField(max_length=32)
    status = models.CharField(max_length=16, choices=Status, default=Status.QUEUED,
                              db_index=True)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    events = models.BigIntegerField(default=0)
    error = models.TextField(blank=True)
    comparison = models.ForeignKey("benchmarks.Comparison", null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created = models.DateTimeField(auto_now_add=True, db_index=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self):
        return f"#{self.pk} {self.spec.get('workload', '?')} ({self.status})"

    def get_absolute_url(self):
        return reverse("simulation-detail", args=[self.pk])

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE


class SimulationPoint(models.Model):
    job = models.ForeignKey(SimulationJob, on_delete=models.CASCADE, related_name="points")
    index = models.PositiveIntegerField()
    kernel = models.CharField(max_length=64)
    values = models.JSONField(default=dict, blank=True)  # {sweep axis: value} of this point
    seed = models.BigIntegerField()
    spec = models.JSONField()  # the full simulator spec, as simulator.validate returned it
    spec_hash = models.CharField(max_length=64, db_index=True)
    status = models.CharField(max_length=16, choices=Status, default=Status.QUEUED)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    reused = models.BooleanField(default=False)
    worker = models.CharField(max_length=200, blank=True)
    sent = models.DateTimeField(null=True, blank=True)
    heartbeat = models.DateTimeField(null=True, blank=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    events = models.BigIntegerField(default=0)
    wall_seconds = models.FloatField(null=True, blank=True)
    run = models.ForeignKey("benchmarks.Run", null=True, blank=True, on_delete=models.SET_NULL,
                            related_name="simulation_points")
    # A replay point stores no run: its result (makespan, per-task waits, the real trace's)
    # lives here. See replays.py.
    result = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["job_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["job", "index"], name="simulation_point_unique")
        ]
        indexes = [
            models.Index(fields=["status", "heartbeat"], name="simpoint_status_heartbeat"),
        ]

    def __str__(self):
        return f"job {self.job_id} point {self.index} ({self.status})"

    @property
    def label(self) -> str:
        axes = ", ".join(f"{name}={value}" for name, value in self.values.items())
        return f"{self.kernel}" + (f" · {axes}" if axes else "")

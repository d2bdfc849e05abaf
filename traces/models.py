"""A scheduler trace, its per-task statistics, and where its timeline files live."""

from django.conf import settings
from django.db import models
from django.urls import reverse


class Trace(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                              related_name="traces")
    run = models.ForeignKey("benchmarks.Run", null=True, blank=True, on_delete=models.SET_NULL,
                            related_name="traces")
    artifact = models.ForeignKey("benchmarks.Artifact", on_delete=models.CASCADE,
                                 related_name="traces")
    title = models.CharField(max_length=200, blank=True)
    format = models.CharField(max_length=16)
    parser_version = models.CharField(max_length=16)
    events = models.BigIntegerField()
    cpus = models.PositiveIntegerField()
    tasks_count = models.PositiveIntegerField()
    start_ns = models.BigIntegerField()
    duration_ns = models.BigIntegerField()
    lost_events = models.BigIntegerField(default=0)
    inferred_switches = models.BigIntegerField(default=0)
    warnings = models.JSONField(default=list, blank=True)
    # Per-CPU busy/idle and the whole trace's wakeup-latency histogram (schedtrace buckets).
    summary = models.JSONField(default=dict, blank=True)
    # Folder (under MEDIA_ROOT/traces) with the timeline mipmap; see timeline.py.
    data_dir = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self):
        return f"trace #{self.pk} {self.title}"

    def get_absolute_url(self):
        return reverse("trace-detail", args=[self.pk])

    @property
    def duration_ms(self) -> float:
        return self.duration_ns / 1e6


class TraceTask(models.Model):
    """One task (a pid instance: pid reuse makes two rows) of a trace, as schedtrace saw it."""

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="tasks")
    index = models.PositiveIntegerField()  # the task's number in the timeline files
    pid = models.IntegerField()
    comm = models.CharField(max_length=64)
    parent_pid = models.IntegerField(null=True, blank=True)
    runtime_ns = models.BigIntegerField()
    switches = models.BigIntegerField()
    wakeups = models.BigIntegerField()
    migrations = models.BigIntegerField()
    wait_sum_ns = models.BigIntegerField()
    wait_max_ns = models.BigIntegerField()
    waits = models.BigIntegerField()
    latency_hist = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["trace", "-runtime_ns", "index"]
        constraints = [models.UniqueConstraint(fields=["trace", "index"],
                                               name="trace_task_index_unique")]

    def __str__(self):
        return f"{self.comm}-{self.pid}"

    @property
    def wait_avg_ns(self) -> float:
        return self.wait_sum_ns / self.waits if self.waits else 0.0


class TraceJobStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class TraceJob(models.Model):
    """A trace upload being ingested by a worker: the request stores the file and queues it
    (docs/traces.md, "Big traces in the background")."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="+")
    file = models.FileField(upload_to="trace-uploads/%Y/%m/", blank=True)
    filename = models.CharField(max_length=255, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    run_id_given = models.BigIntegerField(null=True, blank=True)  # checked again at ingest
    format = models.CharField(max_length=16, blank=True)
    title = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=16, choices=TraceJobStatus,
                              default=TraceJobStatus.QUEUED)
    stage = models.CharField(max_length=40, blank=True)
    done = models.PositiveBigIntegerField(default=0)   # bytes read so far (of the file as sent)
    total = models.PositiveBigIntegerField(default=0)
    trace = models.ForeignKey(Trace, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    # The 201 body of POST /api/v1/traces/ with site-relative URLs, once ingested.
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    error_field = models.CharField(max_length=32, blank=True)
    error_line = models.BigIntegerField(null=True, blank=True)
    error_status = models.PositiveSmallIntegerField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self):
        return f"trace upload #{self.pk} {self.filename} ({self.status})"

    def get_absolute_url(self):
        return reverse("trace-job-detail", args=[self.pk])

    @property
    def is_active(self) -> bool:
        return self.status in (TraceJobStatus.QUEUED, TraceJobStatus.RUNNING)

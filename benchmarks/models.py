"""The core data model (docs/data-model.md): what was measured, where, on which kernel, and
every sample."""

from django.conf import settings
from django.db import models
from django.urls import reverse

from benchmarks.identity import versions


class Benchmark(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.name


class Metric(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="metrics")
    name = models.CharField(max_length=100)
    unit = models.CharField(max_length=32, blank=True)
    higher_is_better = models.BooleanField(default=False)

    class Meta:
        ordering = ["benchmark_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "name"], name="metric_unique_per_benchmark"
            )
        ]

    def __str__(self):
        return f"{self.name} ({self.unit})" if self.unit else self.name


class Machine(models.Model):
    name = models.CharField(max_length=200, db_index=True)
    cpu_model = models.CharField(max_length=200, blank=True)
    arch = models.CharField(max_length=32, blank=True)
    sockets = models.PositiveSmallIntegerField(null=True, blank=True)
    cores_per_socket = models.PositiveSmallIntegerField(null=True, blank=True)
    threads_per_core = models.PositiveSmallIntegerField(null=True, blank=True)
    caches = models.JSONField(default=dict, blank=True)
    memory_mb = models.PositiveIntegerField(null=True, blank=True)
    virtualization = models.CharField(max_length=100, blank=True)
    fingerprint = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("machine-detail", args=[self.pk])

    @property
    def cpus(self) -> int | None:
        parts = (self.sockets, self.cores_per_socket, self.threads_per_core)
        if any(part is None for part in parts):
            return None
        return self.sockets * self.cores_per_socket * self.threads_per_core

    @property
    def topology(self) -> str:
        parts = (self.sockets, self.cores_per_socket, self.threads_per_core)
        if any(part is None for part in parts):
            return ""
        return "x".join(str(part) for part in parts)


class SchedulerFamily(models.TextChoices):
    GOODNESS = "goodness", "2.4 goodness()"
    O1 = "o1", "O(1)"
    CFS = "cfs", "CFS"
    RSDL = "rsdl", "RSDL / SD"
    BFS = "bfs", "BFS / MuQSS"
    EEVDF = "eevdf", "EEVDF"
    UNKNOWN = "unknown", "unknown"


class Kernel(models.Model):
    version = models.CharField(max_length=200, unique=True)
    sort_key = models.CharField(max_length=600, db_index=True, editable=False)
    family = models.CharField(max_length=16, choices=SchedulerFamily, default="unknown")
    labels = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["sort_key", "version"]

    def __str__(self):
        return self.version

    def save(self, *args, **kwargs):
        self.sort_key = versions.sort_key(self.version)
        super().save(*args, **kwargs)


class Artifact(models.Model):
    """Raw input kept verbatim, first, so a better parser can re-derive history."""

    file = models.FileField(upload_to="artifacts/", max_length=300)
    filename = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64, db_index=True)
    size = models.BigIntegerField()
    content_type = models.CharField(max_length=100, blank=True)
    parser_name = models.CharField(max_length=64, blank=True)
    parser_version = models.PositiveIntegerField(null=True, blank=True)
    # What the uploader said about the input, so `reparse` can re-derive the same runs.
    metadata = models.JSONField(default=dict, blank=True)
    forced_format = models.CharField(max_length=64, blank=True)
    source = models.CharField(max_length=16, default="upload")
    uploader = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    idempotency_key = models.CharField(max_length=100, null=True, blank=True)
    # The run ids the upload answered with, in its order. A result set already stored links
    # to a run this artifact does not own, so a replay of the idempotency key reads them here.
    answered_run_ids = models.JSONField(default=list, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.UniqueConstraint(
                fields=["uploader", "idempotency_key"],
                condition=models.Q(idempotency_key__isnull=False),
                name="artifact_idempotency_key_per_uploader",
            )
        ]

    def __str__(self):
        return f"{self.filename} ({self.sha256[:12]})"


class RunSource(models.TextChoices):
    UPLOAD = "upload", "browser upload"
    API = "api", "REST API"
    SIMULATOR = "simulator", "simulator"
    MAIL = "mail", "mail thread"
    DEMO = "demo", "demo data"


# A run as the run list shows it (selectors.ListedRun, benchmarks/pages/rows.py).
LISTED_COLUMNS = ("pk", "params", "policy", "source", "benchmark__slug", "kernel__version",
                  "machine__name")


class RunQuerySet(models.QuerySet):
    def in_natural_order(self):
        return self.order_by("benchmark__slug", "kernel__sort_key", "kernel__version", "id")

    def with_listing_relations(self):
        summaries = models.Prefetch(
            "summaries", queryset=MetricSummary.objects.select_related("metric")
        )
        return self.select_related("benchmark", "kernel", "machine").prefetch_related(summaries)

    def listing_rows(self):
        """What the run list's rows show, as tuples of LISTED_COLUMNS (a Paginator counts and
        slices these as it does runs): no model instance per run and per name, and a run's
        environment and tunables (JSON, large for harness runs) neither read nor decoded.
        selectors.runs_listed() makes them ListedRuns with their summaries."""
        return self.values_list(*LISTED_COLUMNS)

    def with_detail_relations(self):
        return self.with_listing_relations().select_related("artifact", "submitter")

    def visible(self):
        """Runs not withdrawn by their owner: what lists, search and new comparisons see."""
        return self.filter(withdrawn__isnull=True)


class Run(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="runs")
    machine = models.ForeignKey(Machine, on_delete=models.PROTECT, related_name="runs")
    kernel = models.ForeignKey(Kernel, on_delete=models.PROTECT, related_name="runs")
    policy = models.CharField(max_length=100, blank=True, db_index=True)
    label = models.CharField(max_length=200, blank=True)
    tunables = models.JSONField(default=dict, blank=True)
    params = models.JSONField(default=dict, blank=True)
    environment = models.JSONField(default=dict, blank=True)
    source = models.CharField(max_length=16, choices=RunSource, db_index=True)
    artifact = models.ForeignKey(
        Artifact, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    parser_name = models.CharField(max_length=64, blank=True)
    parser_version = models.PositiveIntegerField(null=True, blank=True)
    submitter = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    idempotency_key = models.CharField(max_length=100, null=True, blank=True)
    # sha256 of what makes a result the same result (services.runs.result_key): a re-post of
    # it links to this run instead of making another one.
    result_key = models.CharField(max_length=64, blank=True, db_index=True, editable=False)
    created = models.DateTimeField(auto_now_add=True, db_index=True)
    # Set by the owner after upload (services.ownership); never part of the result's identity.
    tags = models.JSONField(default=list, blank=True)
    # A withdrawn run leaves lists, search and new comparisons; frozen comparisons keep it.
    withdrawn = models.DateTimeField(null=True, blank=True, db_index=True)
    # When the figures were measured (harness: the run's start; uploads: the date given or the
    # file's); None when unknown or simulated. A comparison dimension (measured.day/week/month).
    measured_at = models.DateTimeField(null=True, blank=True, db_index=True)
    withdrawn_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [
            models.Index(fields=["benchmark", "kernel"], name="run_benchmark_kernel"),
            models.Index(fields=["machine", "benchmark"], name="run_machine_benchmark"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["submitter", "idempotency_key"],
                condition=models.Q(idempotency_key__isnull=False),
                name="run_idempotency_key_per_submitter",
            )
        ]

    def __str__(self):
        return f"{self.benchmark.slug} on {self.kernel.version} #{self.pk}"

    def get_absolute_url(self):
        return reverse("run-detail", args=[self.pk])


class RunParam(models.Model):
    """Index rows mirroring Run.params so `param.<name>=<value>` filters use an index anywhere."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="param_index")
    name = models.CharField(max_length=100)
    value = models.CharField(max_length=200)

    class Meta:
        indexes = [models.Index(fields=["name", "value"], name="runparam_name_value")]
        constraints = [models.UniqueConstraint(fields=["run", "name"], name="runparam_unique")]

    def __str__(self):
        return f"{self.name}={self.value}"


class Sample(models.Model):
    """One repetition of one metric. Every repeat is kept, never only a mean."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="samples")
    metric = models.ForeignKey(Metric, on_delete=models.PROTECT, related_name="samples")
    index = models.PositiveIntegerField()
    value = models.FloatField()

    class Meta:
        ordering = ["run_id", "metric_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "metric", "index"], name="sample_unique")
        ]

    def __str__(self):
        return f"run {self.run_id} sample {self.index}: {self.value}"


class MetricSummary(models.Model):
    """Per run and metric statistics, computed once when the samples are written."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="summaries")
    metric = models.ForeignKey(Metric, on_delete=models.PROTECT, related_name="summaries")
    n = models.PositiveIntegerField()
    mean = models.FloatField()
    median = models.FloatField()
    stdev = models.FloatField(null=True)
    minimum = models.FloatField()
    maximum = models.FloatField()

    class Meta:
        ordering = ["metric__name"]
        constraints = [
            models.UniqueConstraint(fields=["run", "metric"], name="summary_unique")
        ]

    def __str__(self):
        return f"run {self.run_id}: median {self.median} (n={self.n})"

    @property
    def cv(self) -> float | None:
        if self.stdev is None or not self.mean:
            return None
        return self.stdev / abs(self.mean)


class PublishedSummary(models.Model):
    """A statistic published without its samples (an mmtests cell, a robot report's column):
    stored as given, never expanded into samples. `stddev_pct`, `n` and `significant` (the
    source's own mark) are null when the source does not say."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="published")
    metric = models.ForeignKey(Metric, on_delete=models.PROTECT, related_name="published")
    statistic = models.CharField(max_length=16)  # amean, hmean, gmean, bamean-95, mean, ...
    value = models.FloatField()
    stddev_pct = models.FloatField(null=True, blank=True)
    n = models.PositiveIntegerField(null=True, blank=True)
    significant = models.BooleanField(null=True, blank=True)

    class Meta:
        ordering = ["metric__name"]
        constraints = [
            models.UniqueConstraint(fields=["run", "metric"], name="published_summary_unique")
        ]

    def __str__(self):
        return f"run {self.run_id}: {self.statistic} {self.value}"

    def as_dict(self) -> dict:
        return {"statistic": self.statistic, "value": self.value,
                "stddev_pct": self.stddev_pct, "n": self.n, "significant": self.significant}


class MonitorSeries(models.Model):
    """A vmstat-like time series captured while the run ran."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="series")
    kind = models.CharField(max_length=32, default="vmstat")
    columns = models.JSONField()
    rows = models.JSONField()

    class Meta:
        ordering = ["kind"]
        constraints = [models.UniqueConstraint(fields=["run", "kind"], name="series_unique")]

    def __str__(self):
        return f"{self.kind} of run {self.run_id}"


class ApiToken(models.Model):
    """A per-user API token. Only its SHA-256 is stored; the key is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12)
    key_hash = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)
    revoked = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self):
        return f"{self.prefix}… ({self.user})"


class RunTombstone(models.Model):
    """A deleted run's id. Frozen comparisons say when a source run is gone; the newest
    tombstone id versions their cached pages in every process with one tiny query."""

    run_id = models.BigIntegerField(db_index=True)
    deleted = models.DateTimeField(auto_now_add=True)
    # Set when a reparse replaced the run: /runs/<run_id>/ redirects there.
    successor_id = models.BigIntegerField(null=True, blank=True)

    def __str__(self):
        return f"run {self.run_id} deleted {self.deleted:%Y-%m-%d}"


class RunVisibilityChange(models.Model):
    """A withdrawal or restoration of a run. Its newest id, with the newest tombstone's,
    versions cached comparison pages (they say which source runs were withdrawn)."""

    class Action(models.TextChoices):
        WITHDRAW = "withdraw", "withdrawn"
        RESTORE = "restore", "restored"

    run_id = models.BigIntegerField(db_index=True)
    action = models.CharField(max_length=8, choices=Action)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self):
        return f"run {self.run_id} {self.get_action_display()} {self.created:%Y-%m-%d}"


class Comparison(models.Model):
    """A frozen comparison: spec, resolved runs and every computed number, never recomputed."""

    slug = models.SlugField(max_length=16, unique=True)
    title = models.CharField(max_length=200)
    spec = models.JSONField()
    run_ids = models.JSONField()
    content_hash = models.CharField(max_length=64, db_index=True)
    frozen = models.JSONField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    forked_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="forks"
    )
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self):
        return f"{self.slug}: {self.title}"

    def get_absolute_url(self):
        return reverse("comparison-detail", args=[self.slug])


class MachineCalibrationQuerySet(models.QuerySet):
    def newest_first(self):
        return self.order_by("-created", "-id")


class MachineCalibration(models.Model):
    """Costs measured on a machine by `schedbench.py calibrate`: micro-measurements only, never
    fitted to a benchmark result. Every submission is kept; the newest is the machine's."""

    machine = models.ForeignKey(Machine, on_delete=models.CASCADE, related_name="calibrations")
    submitter = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    kernel = models.CharField(max_length=200)
    measured_at = models.DateTimeField()
    values = models.JSONField()  # the `calibration` object: loop_ns, wakeup_remote_us, ...
    details = models.JSONField(default=dict, blank=True)  # raw figures, CPUs used, harness
    created = models.DateTimeField(auto_now_add=True)

    objects = MachineCalibrationQuerySet.as_manager()

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["machine", "-created"], name="calibration_machine_new")]

    def __str__(self):
        return f"calibration of {self.machine} ({self.measured_at:%Y-%m-%d})"


class KeptValuesGeneration(models.Model):
    """A counter moved after the commit of any change that values kept per process (the run
    list's counts, choices and first page; selectors.RunCounts) may show: a rename, an
    in-place save of a run. It lives in the database every web host reads, so a host sees
    another host's change with the query it checks its kept values by, whatever cache each
    host has. One row per name."""

    name = models.CharField(max_length=40, primary_key=True)
    value = models.BigIntegerField(default=0)

    def __str__(self):
        return f"{self.name} {self.value}"

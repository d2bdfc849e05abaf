from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from benchmarks.api.requests import (  # noqa: F401  (JSONObjectField: features' responses)
    Choice,
    Integer,
    JSONObjectField,
    List,
    MachineSpecField,
    Object,
    RequestSerializer,
    RunId,
    Text,
)
from benchmarks.comparisons.spec import MAX_RUNS
from benchmarks.hooks import provenance_of
from benchmarks.models import Benchmark, Kernel, Machine, Metric, Run
from benchmarks.published import published_metrics, run_commit
from benchmarks.selectors import samples_by_metric


class MachineSerializer(serializers.ModelSerializer):
    topology = serializers.CharField(read_only=True)
    cpus = serializers.IntegerField(read_only=True, allow_null=True)

    class Meta:
        model = Machine
        fields = [
            "id", "name", "cpu_model", "arch", "sockets", "cores_per_socket",
            "threads_per_core", "topology", "cpus", "caches", "memory_mb", "virtualization",
            "fingerprint",
        ]


class MetricSerializer(serializers.ModelSerializer):
    class Meta:
        model = Metric
        fields = ["name", "unit", "higher_is_better"]


class BenchmarkSerializer(serializers.ModelSerializer):
    metrics = MetricSerializer(many=True, read_only=True)

    class Meta:
        model = Benchmark
        fields = ["slug", "name", "description", "metrics"]


class KernelSerializer(serializers.ModelSerializer):
    class Meta:
        model = Kernel
        fields = ["version", "family", "sort_key", "labels"]


def _summary_dict(summary) -> dict:
    return {
        "n": summary.n, "mean": summary.mean, "median": summary.median, "stdev": summary.stdev,
        "min": summary.minimum, "max": summary.maximum, "cv": summary.cv,
    }


class RunListSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    benchmark = serializers.CharField(source="benchmark.slug")
    kernel = serializers.CharField(source="kernel.version")
    machine = serializers.CharField(source="machine.name")
    summary = serializers.SerializerMethodField()
    tags = serializers.ListField(child=serializers.CharField(), read_only=True)
    withdrawn = serializers.DateTimeField(
        read_only=True, allow_null=True,
        help_text="when the owner withdrew the run (it then leaves lists and search), or null")
    measured_at = serializers.DateTimeField(
        read_only=True, allow_null=True,
        help_text="when it was measured (the harness's start time, an upload's `measured`), "
                  "or null when unknown or simulated")

    class Meta:
        model = Run
        fields = [
            "id", "url", "benchmark", "kernel", "machine", "policy", "label", "tags", "params",
            "tunables", "source", "created", "measured_at", "withdrawn", "summary",
        ]

    def get_url(self, run) -> str:
        request = self.context.get("request")
        path = reverse("api-run-detail", args=[run.pk])
        return request.build_absolute_uri(path) if request else path

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_summary(self, run) -> dict:
        """{metric: {n, mean, median, stdev, min, max, cv}} from the stored summaries."""
        return {s.metric.name: _summary_dict(s) for s in run.summaries.all()}


class RunDetailSerializer(RunListSerializer):
    machine = MachineSerializer()
    metrics = serializers.SerializerMethodField()
    series = serializers.SerializerMethodField()
    provenance = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField()
    commit = serializers.SerializerMethodField(
        help_text="a robot report's column: {id (as printed), subject}; else null")

    class Meta(RunListSerializer.Meta):
        fields = RunListSerializer.Meta.fields + [
            "environment", "metrics", "series", "provenance", "page", "commit",
        ]

    def get_page(self, run) -> str:
        request = self.context.get("request")
        path = run.get_absolute_url()
        return request.build_absolute_uri(path) if request else path

    @extend_schema_field({"type": "object", "additionalProperties": True, "nullable": True})
    def get_commit(self, run) -> dict | None:
        return run_commit(run)

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_metrics(self, run) -> dict:
        """{metric: {"unit", "higher_is_better", "values": [every sample in repeat order]}};
        a published statistic has no values and its "summary" (statistic, value, stddev_pct,
        n, significant)."""
        values = samples_by_metric(run)
        return published_metrics(run) | {
            s.metric.name: {
                "unit": s.metric.unit,
                "higher_is_better": s.metric.higher_is_better,
                "values": values.get(s.metric_id, []),
            }
            for s in run.summaries.all()
        }

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_series(self, run) -> dict:
        return {s.kind: {"columns": s.columns, "rows": s.rows} for s in run.series.all()}

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_provenance(self, run) -> dict:
        artifact = run.artifact
        return {
            "source": run.source,
            "submitter": run.submitter.get_username() if run.submitter else None,
            "artifact": (
                {"id": artifact.pk, "filename": artifact.filename, "sha256": artifact.sha256,
                 "size": artifact.size}
                if artifact else None
            ),
            "parser": (
                {"name": run.parser_name, "version": run.parser_version}
                if run.parser_name else None
            ),
            "message": None,
            "simulation": None,
            **provenance_of(run),  # what features know made it (simulations)
        }


# --- Request bodies -------------------------------------------------------------------------
# Each is checked field by field (benchmarks/api/requests.py); services then judge the values.


class RunCreateRequestSerializer(RequestSerializer):
    benchmark = Text(max_length=200)
    kernel = Text(max_length=200, help_text="uname -r, exactly")
    machine = MachineSpecField(required=False)
    policy = Text(max_length=100, required=False)
    label = Text(max_length=200, required=False)
    tunables = Object(required=False)
    params = Object(required=False)
    environment = Object(required=False)
    metrics = Object(help_text='{"time_ms": [10765, 10801]}: every sample per metric, '
                              'or {"unit", "higher_is_better", "values"}')
    series = Object(required=False, help_text='{"vmstat": {"columns": [..], '
                             '"rows": [[..]]}}')
    idempotency_key = Text(max_length=100, required=False)
    bisect = Integer(required=False, min_value=1, help_text="a bisection id: the run joins "
                     "the step of its commit")
    commit = Text(required=False, max_length=100, help_text="the commit under test, when the "
                  "kernel string carries none")
    measured = Text(required=False, max_length=40, help_text="when it was measured, ISO 8601 "
                    "(2024-05-03T10:00:00Z; no zone means UTC); the harness sends its start")


class RunUpdateRequestSerializer(RequestSerializer):
    """PATCH /api/v1/runs/{id}/: what the owner may change after upload."""

    label = Text(max_length=200, required=False, allow_null=False)
    tags = List(
        child=Text(max_length=50), required=False, max_length=20, allow_null=False,
        help_text="the run's whole tag list (replaces it); each 1-50 letters, digits or "
        "_ . + : @ / -")

    def unknown_message(self, unknown: list[str]) -> str:
        return f"only label and tags can be changed, not {unknown[0]}"


class ComparisonSpecSerializer(RequestSerializer):
    title = Text(required=False, max_length=200)
    runs = List(child=RunId(), required=False, max_length=MAX_RUNS,
                help_text="run ids (or filters)")
    filters = Object(required=False)
    metric = Text(required=False, max_length=200)
    x = Text(required=False, max_length=200, help_text="kernel, policy, machine, benchmark, "
             "param.<name> or tunable.<name>")
    series = Text(required=False, max_length=200)
    facet = Text(required=False, max_length=200)
    statistic = Choice(["median", "mean", "min"], required=False)
    error = Choice(["stdev", "ci95", "minmax", "none"], required=False)
    baseline = Object(required=False, help_text='{"dim", "value"}')
    x_scale = Choice(["linear", "log"], required=False)
    chart = Choice(["line", "bar", "box", "heatmap", "table"], required=False)


# --- Response bodies ------------------------------------------------------------------------


class ResponseSerializer(serializers.Serializer):
    """Renders a dict; an optional key (required=False) that the dict lacks stays absent."""

    def to_representation(self, instance):
        data = super().to_representation(instance)
        if isinstance(instance, dict):
            for name, field in self.fields.items():
                if not field.required and field.source not in instance:
                    data.pop(name, None)
        return data


class ErrorSerializer(ResponseSerializer):
    error = serializers.CharField()
    field = serializers.CharField(allow_null=True, help_text="the request key to blame")
    line = serializers.IntegerField(allow_null=True, help_text="1-based line of the input")


class OutageSerializer(ResponseSerializer):
    """503 while the database is unreachable (portal.middleware); comes with Retry-After."""

    error = serializers.CharField()
    retry_after = serializers.IntegerField(help_text="seconds")


class BisectJoinedSerializer(ResponseSerializer):
    """The bisection step a submitted run joined (with `bisect`)."""

    id = serializers.IntegerField()
    page = serializers.URLField()
    commit = serializers.CharField()
    side = serializers.CharField(allow_null=True, help_text="good or bad: the run measures an "
                                 "end of the range, not a step")
    verdict = serializers.CharField(help_text="good, bad or unknown")
    reason = serializers.CharField()
    next = serializers.CharField(allow_null=True, help_text="the `git bisect` line to type")
    next_hint = serializers.CharField(allow_blank=True)
    steps_left = serializers.IntegerField(allow_null=True)
    first_bad = serializers.CharField(allow_null=True)


class VerdictThresholdsSerializer(ResponseSerializer):
    """The thresholds a verdict applied: the benchmark's own, or the defaults."""

    min_change = serializers.FloatField(help_text="minimum relative change (0.05 = 5%)")
    alpha = serializers.FloatField(help_text="significance level of change-point detection")
    min_effect = serializers.FloatField(help_text="minimum effect size of the test")
    min_repeats = serializers.IntegerField(help_text="fewer values a side: needs repeats")
    verdict_alpha = serializers.FloatField(help_text="significance level of a verdict")
    source = serializers.CharField(help_text="where they came from (defaults or benchmark)")


class VerdictSerializer(ResponseSerializer):
    """A submitted run's metric against an older kernel of its series."""

    run = serializers.IntegerField()
    metric = serializers.CharField()
    against = serializers.CharField(help_text="the kernel compared against")
    role = serializers.ChoiceField(choices=["baseline", "previous"], help_text=(
        "baseline: the series' oldest kernel; previous: the kernel just before the run's"))
    change = serializers.FloatField(help_text="median(run) / median(against)")
    p_value = serializers.FloatField(allow_null=True, help_text=(
        "Mann-Whitney U (Welch's t below 5 samples a side); null when a side has one value"))
    roles = serializers.ListField(child=serializers.ChoiceField(
        choices=["baseline", "previous"]), required=False, help_text=(
        "both when the oldest kernel is also the previous one (a CI gate asks for previous)"))
    regression = serializers.BooleanField(allow_null=True, help_text=(
        "worse in the metric's direction by at least the thresholds' minimum change, and "
        "significant; never with fewer repeats than the thresholds' min_repeats "
        "(needs_repeats); null for a published summary no test can judge"))
    needs_repeats = serializers.BooleanField()
    n = serializers.IntegerField(allow_null=True, help_text="null: a published summary's n "
                                 "that its source did not give")
    n_against = serializers.IntegerField(allow_null=True)
    # Published summaries (mmtests, robot reports): against their table's baseline column.
    summary = serializers.BooleanField(required=False, help_text=(
        "true: published statistics, no samples; regression is null where no test is "
        "possible (\"summary only, no test\")"))
    test = serializers.CharField(required=False, allow_null=True,
                                 help_text="the test, or why there is none")
    n_tested = serializers.ListField(child=serializers.IntegerField(), required=False,
                                     help_text="values each side the test saw (bounded)")
    thresholds = VerdictThresholdsSerializer(required=False)
    against_label = serializers.CharField(required=False, allow_blank=True)
    against_runs = serializers.ListField(child=serializers.IntegerField(), required=False,
                                         help_text="the runs tested against (the first 20)")
    against_run_count = serializers.IntegerField(required=False,
                                                 help_text="how many runs were tested against")


class RunCreatedSerializer(ResponseSerializer):
    id = serializers.IntegerField()
    url = serializers.URLField(help_text="the run's page")
    api_url = serializers.URLField()
    bisect = BisectJoinedSerializer(required=False)
    verdicts = VerdictSerializer(many=True, required=False)


class RunMovedSerializer(ResponseSerializer):
    """301 for a run a reparse replaced: where its successor lives now (also in Location)."""

    error = serializers.CharField()
    successor = serializers.IntegerField(help_text="the id of the run that replaced it")
    url = serializers.URLField(help_text="the successor's API URL")


class RunsCreatedSerializer(ResponseSerializer):
    ids = serializers.ListField(child=serializers.IntegerField())
    verdicts = VerdictSerializer(many=True, required=False,
                                 help_text="for submissions of at most 100 runs")


class UploadedRunSerializer(ResponseSerializer):
    id = serializers.IntegerField(allow_null=True, help_text="null in a dry run")
    url = serializers.CharField(allow_null=True)
    api_url = serializers.CharField(allow_null=True, required=False)
    benchmark = serializers.CharField(required=False)
    kernel = serializers.CharField(required=False, allow_null=True,
                                   help_text="null while the run is UNASSIGNED")
    machine = MachineSpecField(required=False)
    policy = serializers.CharField(required=False, allow_blank=True)
    label = serializers.CharField(required=False, allow_blank=True)
    params = JSONObjectField(required=False)
    tunables = JSONObjectField(required=False)
    line = serializers.IntegerField(required=False, allow_null=True)
    series = serializers.ListField(child=serializers.CharField(), required=False)
    metrics = JSONObjectField(required=False, help_text='{name: {"unit", "n", "values"}}; a '
                              'published statistic has no values and a "summary"')
    commit = JSONObjectField(required=False, allow_null=True,
                             help_text="a robot report's column: {id, subject}; else null")
    # Where the values came from and whether the parser was sure of them (the preview).
    lines = serializers.ListField(child=serializers.IntegerField(), required=False,
                                  help_text="[first, last] line of the run (of its block)")
    kernel_line = serializers.IntegerField(required=False, allow_null=True,
                                           help_text="the line the kernel was read from")
    source = serializers.ListField(child=serializers.ListField(), required=False,
                                   help_text="[[line number, text], ...] the run came from")
    source_key = serializers.CharField(required=False, help_text="the key to use in `assign`")
    missing = serializers.ListField(child=serializers.CharField(), required=False,
                                    help_text='what the parser was not sure of: "kernel", '
                                    '"param.loops"')
    unassigned = serializers.BooleanField(required=False, help_text="true: commit is refused "
                                          "until `assign` gives what is missing")


class KnownMachineSerializer(ResponseSerializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class MachineNoteSerializer(ResponseSerializer):
    """Where an upload's runs go when it names no machine, and the uploader's machines."""

    machine_name = serializers.CharField(allow_null=True, help_text=(
        "the uploader's own machine the runs go to; null when the upload names one"))
    note = serializers.CharField(allow_blank=True)
    your_machines = KnownMachineSerializer(many=True)


class UploadResultSerializer(ResponseSerializer):
    artifact = serializers.IntegerField(allow_null=True)
    format = serializers.CharField()
    parser_version = serializers.IntegerField(required=False)
    dry_run = serializers.BooleanField(required=False)
    runs = UploadedRunSerializer(many=True)
    warnings = serializers.ListField(child=serializers.CharField())
    replayed = serializers.BooleanField(required=False,
                                        help_text="true: the idempotency_key was seen before")
    bisect = BisectJoinedSerializer(required=False)
    verdicts = VerdictSerializer(many=True, required=False)
    machine = MachineNoteSerializer(required=False, help_text="in a dry run (the preview)")


class ComparisonCreatedSerializer(ResponseSerializer):
    slug = serializers.CharField()
    url = serializers.URLField()


class ComparisonListItemSerializer(ResponseSerializer):
    slug = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    url = serializers.URLField()
    created = serializers.DateTimeField()
    runs = serializers.IntegerField(help_text="how many runs it compares")


class ComparisonSerializer(ResponseSerializer):
    """/c/<slug>.json: frozen, never recomputed."""

    slug = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    spec = JSONObjectField()
    content_hash = serializers.CharField()
    created = serializers.CharField()
    runs = serializers.ListField(child=serializers.IntegerField())
    metric = JSONObjectField(allow_null=True, help_text='{"name", "unit", "higher_is_better"}')
    axes = JSONObjectField()
    cells = serializers.ListField(child=JSONObjectField(), help_text='{"x", "series", "facet", '
                                  '"n", "median", "mean", "stdev", "ci95", "min", "max", '
                                  '"normalized", "p_value"}')
    summary = JSONObjectField()
    environment_diff = serializers.JSONField()
    recipes = serializers.JSONField()
    figure = JSONObjectField(help_text="a Plotly figure")
    monitor_figure = JSONObjectField(allow_null=True)


class ComparisonPreviewSerializer(ComparisonSerializer):
    """What a comparison would be, computed now and not saved."""

    slug = title = content_hash = created = None


class LayoutSuggestionSerializer(ResponseSerializer):
    x = serializers.CharField()
    series = serializers.CharField(allow_null=True)


class ComparisonChoicesSerializer(ResponseSerializer):
    runs = serializers.IntegerField()
    metrics = serializers.ListField(child=serializers.CharField())
    dimensions = serializers.ListField(child=serializers.CharField())
    varying = serializers.ListField(child=serializers.CharField())
    suggested = LayoutSuggestionSerializer(help_text="the builder's default x and series: "
                                           "what the runs vary in")
    values = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))


class MeSerializer(ResponseSerializer):
    username = serializers.CharField()
    is_staff = serializers.BooleanField()


class SearchHitSerializer(ResponseSerializer):
    type = serializers.ChoiceField(["runs", "comparisons", "threads", "posts", "machines"])
    id = serializers.CharField(help_text="run, thread or machine number; comparison slug; "
                               "message id")
    title = serializers.CharField(allow_blank=True)
    detail = serializers.CharField(allow_blank=True)
    url = serializers.URLField(help_text="the page of the object found")


class SearchGroupSerializer(ResponseSerializer):
    type = serializers.ChoiceField(["runs", "comparisons", "threads", "posts", "machines"])
    label = serializers.CharField()
    page = serializers.IntegerField()
    next = serializers.URLField(allow_null=True, help_text="this group's next page, or null")
    results = SearchHitSerializer(many=True)


class SearchResultSerializer(ResponseSerializer):
    q = serializers.CharField()
    groups = SearchGroupSerializer(many=True)

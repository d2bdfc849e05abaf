from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from benchmarks.models import Benchmark, Kernel, Machine, Metric, Run
from benchmarks.selectors import samples_by_metric
from benchmarks.simulations.selectors import job_for_run


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

    class Meta:
        model = Run
        fields = [
            "id", "url", "benchmark", "kernel", "machine", "policy", "label", "params",
            "tunables", "source", "created", "summary",
        ]

    def get_url(self, run) -> str:
        request = self.context.get("request")
        path = f"/api/v1/runs/{run.pk}/"
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

    class Meta(RunListSerializer.Meta):
        fields = RunListSerializer.Meta.fields + [
            "environment", "metrics", "series", "provenance", "page",
        ]

    def get_page(self, run) -> str:
        request = self.context.get("request")
        path = run.get_absolute_url()
        return request.build_absolute_uri(path) if request else path

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_metrics(self, run) -> dict:
        """{metric: {"unit", "higher_is_better", "values": [every sample in repeat order]}}"""
        values = samples_by_metric(run)
        return {
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
            "simulation": job_for_run(run),
        }

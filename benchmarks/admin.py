from django.contrib import admin

from benchmarks import models


@admin.register(models.Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ["slug", "name"]
    search_fields = ["slug", "name"]


@admin.register(models.Metric)
class MetricAdmin(admin.ModelAdmin):
    list_display = ["benchmark", "name", "unit", "higher_is_better"]
    list_filter = ["benchmark"]


@admin.register(models.Machine)
class MachineAdmin(admin.ModelAdmin):
    list_display = ["name", "cpu_model", "topology", "virtualization", "created"]
    search_fields = ["name", "cpu_model"]
    readonly_fields = ["fingerprint"]


@admin.register(models.Kernel)
class KernelAdmin(admin.ModelAdmin):
    list_display = ["version", "family", "sort_key"]
    list_filter = ["family"]
    search_fields = ["version"]
    readonly_fields = ["sort_key"]


class SummaryInline(admin.TabularInline):
    model = models.MetricSummary
    extra = 0
    readonly_fields = ["metric", "n", "mean", "median", "stdev", "minimum", "maximum"]


@admin.register(models.Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "benchmark", "kernel", "machine", "policy", "source", "created",
                    "withdrawn"]
    list_filter = ["source", "benchmark", ("withdrawn", admin.EmptyFieldListFilter)]
    search_fields = ["kernel__version", "machine__name", "policy", "label"]
    list_select_related = ["benchmark", "kernel", "machine"]
    raw_id_fields = ["artifact", "submitter", "kernel", "machine"]
    # Withdraw and restore on the run's page: the services also re-version cached permalinks.
    readonly_fields = ["withdrawn", "withdrawn_by"]
    inlines = [SummaryInline]


@admin.register(models.Sample)
class SampleAdmin(admin.ModelAdmin):
    list_display = ["run", "metric", "index", "value"]
    raw_id_fields = ["run"]
    list_select_related = ["run__benchmark", "run__kernel", "metric"]


@admin.register(models.MonitorSeries)
class MonitorSeriesAdmin(admin.ModelAdmin):
    list_display = ["run", "kind"]
    raw_id_fields = ["run"]


@admin.register(models.Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ["filename", "sha256", "size", "parser_name", "parser_version", "created"]
    search_fields = ["filename", "sha256"]


@admin.register(models.ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "name", "created", "last_used", "revoked"]
    readonly_fields = ["prefix", "key_hash"]


@admin.register(models.Comparison)
class ComparisonAdmin(admin.ModelAdmin):
    list_display = ["slug", "title", "author", "created"]
    search_fields = ["slug", "title"]
    readonly_fields = ["slug", "spec", "run_ids", "content_hash", "frozen", "created"]
    raw_id_fields = ["author", "forked_from"]


@admin.register(models.RunTombstone)
class RunTombstoneAdmin(admin.ModelAdmin):
    list_display = ["run_id", "deleted"]

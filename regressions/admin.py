from django.contrib import admin, messages
from django.utils import timezone

from .models import (
    BenchmarkThresholds,
    DetectionJob,
    FindingUpdate,
    Follow,
    JobState,
    Regression,
)


class FindingUpdateInline(admin.TabularInline):
    model = FindingUpdate
    extra = 0
    can_delete = False
    readonly_fields = ["at", "event", "good", "bad", "change", "p_value", "n_good", "n_bad",
                       "note"]


@admin.register(Regression)
class RegressionAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "benchmark", "machine", "metric", "good", "bad", "change",
                    "p_value", "needs_repeats", "seen", "merged_into", "status", "created"]
    list_filter = ["status", "kind", "needs_repeats", "seen", "benchmark"]
    list_select_related = ["benchmark", "machine", "metric", "good", "bad"]
    raw_id_fields = ["runs_good", "runs_bad", "status_changed_by", "merged_into", "last_seen"]
    readonly_fields = ["series_key", "detector", "inputs", "created", "updated"]
    inlines = [FindingUpdateInline]


@admin.register(Follow)
class FollowAdmin(admin.ModelAdmin):
    list_display = ["user", "benchmark", "machine", "created"]
    list_select_related = ["user", "benchmark", "machine"]


@admin.register(BenchmarkThresholds)
class BenchmarkThresholdsAdmin(admin.ModelAdmin):
    list_display = ["benchmark", "owner", "min_change", "alpha", "min_effect", "min_repeats",
                    "verdict_alpha", "updated_by", "updated"]
    raw_id_fields = ["owner", "updated_by"]


@admin.action(description="Queue the selected jobs again (attempts start over)")
def requeue(modeladmin, request, queryset):
    from .services import DETECT_TASK, send_task

    jobs = list(queryset.exclude(state=JobState.RUNNING))
    for job in jobs:
        DetectionJob.objects.filter(pk=job.pk).update(state=JobState.QUEUED, attempts=0,
                                                      updated=timezone.now())
        send_task(DETECT_TASK, job.run_ids, job.pk)
    messages.info(request, f"{len(jobs)} job(s) queued again")


@admin.register(DetectionJob)
class DetectionJobAdmin(admin.ModelAdmin):
    """Parked jobs (failed too often) are the ones to look at: their last error says why."""

    list_display = ["id", "state", "attempts", "created", "updated", "short_error"]
    list_filter = ["state"]
    readonly_fields = ["run_ids", "state", "attempts", "last_error", "created", "updated"]
    actions = [requeue]

    @admin.display(description="last error")
    def short_error(self, job):
        return job.last_error[:120]

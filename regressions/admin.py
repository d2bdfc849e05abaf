from django.contrib import admin

from .models import Follow, Regression


@admin.register(Regression)
class RegressionAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "benchmark", "machine", "metric", "good", "bad", "change",
                    "p_value", "needs_repeats", "status", "created"]
    list_filter = ["status", "kind", "needs_repeats", "benchmark"]
    list_select_related = ["benchmark", "machine", "metric", "good", "bad"]
    raw_id_fields = ["runs_good", "runs_bad", "status_changed_by"]
    readonly_fields = ["series_key", "detector", "created", "updated"]


@admin.register(Follow)
class FollowAdmin(admin.ModelAdmin):
    list_display = ["user", "benchmark", "machine", "created"]
    list_select_related = ["user", "benchmark", "machine"]

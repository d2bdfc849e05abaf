from django.contrib import admin

from .models import SimulationJob, SimulationPoint


class PointInline(admin.TabularInline):
    model = SimulationPoint
    extra = 0
    fields = ["index", "kernel", "values", "seed", "status", "attempts", "worker", "heartbeat",
              "run", "error"]
    readonly_fields = fields
    can_delete = False


@admin.register(SimulationJob)
class SimulationJobAdmin(admin.ModelAdmin):
    list_display = ["id", "owner", "status", "done", "total", "failed", "created", "finished"]
    list_filter = ["status"]
    readonly_fields = ["spec", "spec_hash", "simulator_version", "comparison"]
    inlines = [PointInline]

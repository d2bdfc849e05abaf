from django.contrib import admin

from .models import Bisection, BisectRun, BisectStep


class StepInline(admin.TabularInline):
    model = BisectStep
    extra = 0


@admin.register(Bisection)
class BisectionAdmin(admin.ModelAdmin):
    list_display = ["id", "good", "bad", "benchmark", "first_bad", "owner", "created"]
    raw_id_fields = ["owner", "good_kernel", "bad_kernel", "benchmark", "machine", "metric",
                     "ended_by"]
    inlines = [StepInline]


@admin.register(BisectRun)
class BisectRunAdmin(admin.ModelAdmin):
    list_display = ["id", "bisection", "step", "side", "run", "commit"]
    raw_id_fields = ["bisection", "step", "run"]

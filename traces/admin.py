from django.contrib import admin

from .models import Trace


@admin.register(Trace)
class TraceAdmin(admin.ModelAdmin):
    list_display = ["id", "title", "format", "events", "cpus", "tasks_count", "run", "owner",
                    "created"]
    list_filter = ["format"]
    search_fields = ["title"]
    raw_id_fields = ["run", "artifact", "owner"]
    readonly_fields = ["format", "parser_version", "events", "cpus", "tasks_count", "start_ns",
                       "duration_ns", "lost_events", "inferred_switches", "warnings", "summary",
                       "data_dir"]

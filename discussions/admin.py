from django.contrib import admin

from .models import ImportJob, Post, Thread


@admin.register(Thread)
class ThreadAdmin(admin.ModelAdmin):
    list_display = ("subject", "target_type", "target_id", "post_count", "last_activity")
    search_fields = ("subject",)


@admin.register(Post)
class PostAdmin(admin.ModelAdmin):
    list_display = ("subject", "author", "date", "source", "deleted")
    search_fields = ("message_id", "subject", "author")
    raw_id_fields = ("thread", "parent", "user")
    exclude = ("raw",)


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ("pk", "filename", "owner", "status", "stage", "done", "total", "created")
    list_filter = ("status",)
    raw_id_fields = ("owner",)
    readonly_fields = ("report", "error", "started", "finished")

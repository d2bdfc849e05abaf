from django.apps import AppConfig


class DiscussionsConfig(AppConfig):
    name = "discussions"
    label = "discussions"
    verbose_name = "Discussions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import tasks  # noqa: F401  (registers the tasks that are queued by name)

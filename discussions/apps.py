from django.apps import AppConfig


class DiscussionsConfig(AppConfig):
    name = "discussions"
    label = "discussions"
    verbose_name = "Discussions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks.hooks import register_demo_step

        from . import search, tasks  # noqa: F401  (tasks: registers the tasks queued by name)
        from .demo import DEMO_THREAD

        search.register()
        register_demo_step(DEMO_THREAD)

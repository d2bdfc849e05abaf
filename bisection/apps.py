from django.apps import AppConfig


class BisectConfig(AppConfig):
    name = "bisection"
    label = "bisect"
    verbose_name = "Bisections"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks.hooks import register_run_joiner

        from .services import BisectionJoiner

        register_run_joiner(BisectionJoiner())

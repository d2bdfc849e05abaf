from django.apps import AppConfig


class BisectConfig(AppConfig):
    name = "bisection"
    label = "bisect"
    verbose_name = "Bisections"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks.hooks import register_demo_step, register_run_joiner

        from .demo import DEMO_BISECTION
        from .services import BisectionJoiner

        register_run_joiner(BisectionJoiner())
        register_demo_step(DEMO_BISECTION)

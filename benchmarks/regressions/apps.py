from django.apps import AppConfig


class RegressionsConfig(AppConfig):
    name = "benchmarks.regressions"
    label = "regressions"
    verbose_name = "Regressions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks.discussions.targets import register_target

        from .models import regression_by_pk_text

        register_target("regression", regression_by_pk_text)

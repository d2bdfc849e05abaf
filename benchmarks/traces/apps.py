from django.apps import AppConfig


class TracesConfig(AppConfig):
    name = "benchmarks.traces"
    label = "traces"
    verbose_name = "Traces"
    default_auto_field = "django.db.models.BigAutoField"

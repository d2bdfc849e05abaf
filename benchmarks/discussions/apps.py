from django.apps import AppConfig


class DiscussionsConfig(AppConfig):
    name = "benchmarks.discussions"
    label = "discussions"
    verbose_name = "Discussions"
    default_auto_field = "django.db.models.BigAutoField"

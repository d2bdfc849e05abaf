from django.apps import AppConfig


class BisectConfig(AppConfig):
    name = "bisection"
    label = "bisect"
    verbose_name = "Bisections"
    default_auto_field = "django.db.models.BigAutoField"

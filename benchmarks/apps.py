from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    name = "benchmarks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks import signals  # noqa: F401  (connects the receivers)
        from benchmarks.comparisons.pagecache import connect_signals

        connect_signals()

from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    name = "benchmarks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks import signals  # noqa: F401  (connects the receivers)
        from benchmarks.comparisons.pagecache import connect_signals
        from benchmarks.search.engine import register_core_sources

        connect_signals()
        register_core_sources()

from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    name = "benchmarks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks import signals  # noqa: F401  (connects the receivers)
        from benchmarks.comparisons.pagecache import connect_signals
        from benchmarks.search.engine import register_core_sources
        from benchmarks.selectors import connect_run_counts

        connect_signals()
        connect_run_counts()
        register_core_sources()

from django.apps import AppConfig
from django.db import transaction
from django.db.models.signals import post_delete


def _remove_timeline_files(sender, instance, **kwargs):
    """A deleted trace (or one deleted with its artifact) takes its timeline folder along,
    once the deletion is committed."""
    from .services import trace_directory
    from .timeline import remove_directory

    path = trace_directory(instance)
    transaction.on_commit(lambda: remove_directory(path))


class TracesConfig(AppConfig):
    name = "traces"
    label = "traces"
    verbose_name = "Traces"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks.hooks import PageSection, register_demo_step, register_run_page_section

        from . import tasks  # noqa: F401  (registers the tasks by name)
        from .demo import DEMO_TRACE_STEP
        from .models import Trace
        from .selectors import traces_of_run

        def run_traces(run) -> PageSection | None:
            traces = traces_of_run(run)
            return PageSection("traces/_run_section.html", {"traces": traces}) if traces else None

        register_run_page_section("traces", run_traces)
        register_demo_step(DEMO_TRACE_STEP)
        post_delete.connect(_remove_timeline_files, sender=Trace,
                            dispatch_uid="traces-remove-timeline-files")

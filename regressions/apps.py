from django.apps import AppConfig


class RegressionsConfig(AppConfig):
    name = "regressions"
    label = "regressions"
    verbose_name = "Regressions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks.hooks import (
            register_demo_step,
            register_run_page_section,
            register_verdict_source,
        )
        from benchmarks.signals import runs_stored, runs_visibility_changed
        from discussions.targets import register_target

        from . import tasks  # registers the tasks by name
        from .demo import DEMO_FINDINGS
        from .models import regression_by_pk_text
        from .sections import run_verdicts_section
        from .services import detect_on_commit
        from .verdicts import runs_verdicts

        register_target("regression", regression_by_pk_text)
        register_verdict_source("regressions", runs_verdicts)
        register_run_page_section("verdicts", run_verdicts_section)
        register_demo_step(DEMO_FINDINGS)
        runs_stored.connect(detect_on_commit, dispatch_uid="regressions-detect")
        runs_visibility_changed.connect(detect_on_commit, dispatch_uid="regressions-redetect")
        tasks.connect_worker_signals()  # every worker sweeps (regressions.jobs)

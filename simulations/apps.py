from django.apps import AppConfig


class SimulationsConfig(AppConfig):
    name = "simulations"
    label = "simulations"
    verbose_name = "Simulations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks.hooks import register_run_provenance
        from discussions.targets import register_target

        from . import tasks
        from .selectors import job_by_pk_text, job_for_run

        register_target("simulation", job_by_pk_text)
        register_run_provenance("simulation", lambda run: {"simulation": job_for_run(run)})
        tasks.connect_worker_signals()

from django.apps import AppConfig


class SimulationsConfig(AppConfig):
    name = "simulations"
    label = "simulations"
    verbose_name = "Simulations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from discussions.targets import register_target

        from . import tasks
        from .selectors import job_by_pk_text

        register_target("simulation", job_by_pk_text)
        tasks.connect_worker_signals()

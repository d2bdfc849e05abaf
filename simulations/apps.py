from django.apps import AppConfig


class SimulationsConfig(AppConfig):
    name = "simulations"
    label = "simulations"
    verbose_name = "Simulations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks.hooks import (
            register_demo_step,
            register_machine_page_section,
            register_run_page_section,
            register_run_provenance,
        )
        from discussions.targets import register_target

        from . import tasks
        from .demo import DEMO_SIMULATION_STEP
        from .selectors import job_by_pk_text, job_for_run
        from .twins import machine_twins_section, run_predict_section

        register_target("simulation", job_by_pk_text)
        register_run_provenance("simulation", lambda run: {"simulation": job_for_run(run)})
        register_run_page_section("predict", run_predict_section)
        register_machine_page_section("twins", machine_twins_section)
        register_demo_step(DEMO_SIMULATION_STEP)
        tasks.connect_worker_signals()

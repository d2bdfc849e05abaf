"""Simulation jobs: a sweep of simulator runs fanned out over Celery workers, stored as runs."""

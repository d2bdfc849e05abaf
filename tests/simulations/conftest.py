"""Simulation tests: short heartbeat/stale intervals, in this process and in worker processes."""

import pytest

HEARTBEAT, STALE = 1, 3


@pytest.fixture(autouse=True)
def fast_watchdog(monkeypatch, settings):
    # Autouse fixtures run first, so celery_worker_factory copies these into the workers' env.
    monkeypatch.setenv("SCHEDBENCH_SIMULATION_HEARTBEAT", str(HEARTBEAT))
    monkeypatch.setenv("SCHEDBENCH_SIMULATION_STALE", str(STALE))
    settings.SIMULATION_HEARTBEAT_SECONDS = HEARTBEAT
    settings.SIMULATION_STALE_SECONDS = STALE


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user("simulator-user", password="a-long-password-1")


def tiny_spec(**overrides) -> dict:
    """2 kernels x 2 loop sizes, each point a few milliseconds."""
    spec = {"workload": "threadtest", "params": {"iterations": 5}, "kernels": ["2.6.22", "2.6.24"],
            "sweep": {"loops": [100000, 1000000]}, "repeat": 2, "seed": 7, "topology": "1x2x1"}
    spec.update(overrides)
    return spec

import numpy as np
import pytest

from regressions.services import regressions_detect_runs
from tests.factories import make_run


@pytest.fixture(autouse=True)
def _locmem_mail(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


def step_series(*, kernels=("2.6.20", "2.6.21", "2.6.22", "2.6.23", "2.6.24", "2.6.25"),
                change_at="2.6.24", factor=1.3, repeats=5, cv=0.01, seed=1, submitter=None,
                **run_args):
    """Runs of one series whose level jumps by `factor` at `change_at` (natural order)."""
    rng = np.random.default_rng(seed)
    runs = []
    level = 1000.0
    for kernel in kernels:
        if kernel == change_at:
            level *= factor
        values = rng.normal(level, cv * level, repeats).round(3).tolist()
        runs.append(make_run(kernel, values, submitter=submitter, **run_args))
    return runs


@pytest.fixture
def stepped(db, django_user_model):
    owner = django_user_model.objects.create_user("owner", email="owner@example.org")
    runs = step_series(submitter=owner)
    regressions_detect_runs(run_ids=[runs[-1].pk])
    return owner, runs

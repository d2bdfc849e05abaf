"""Fixtures for the discussions tests: mbox files, users, signed-in clients."""

from pathlib import Path

import pytest

MBOX_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "mbox"


@pytest.fixture(autouse=True)
def _mail_and_limits(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.DISCUSSIONS_POSTS_PER_HOUR = 1000


@pytest.fixture(autouse=True)
def _tasks_in_process():
    """Queued tasks (imports, follower mail) run in this process when queued; the tests in
    test_import_jobs.py marked `worker` turn this off and use a real worker."""
    from portal.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield app
    app.conf.task_always_eager = previous


@pytest.fixture
def mbox_bytes():
    def read(name: str) -> bytes:
        return (MBOX_DIR / name).read_bytes()

    return read


@pytest.fixture
def poster(django_user_model):
    return django_user_model.objects.create_user(
        "olof", email="olof@example.org", password="a-long-test-password")


@pytest.fixture
def other_user(django_user_model):
    return django_user_model.objects.create_user(
        "jan", email="jan@example.com", password="a-long-test-password")


@pytest.fixture
def signed_in(client, poster):
    client.force_login(poster)
    return client


@pytest.fixture
def imported(mbox_bytes, poster):
    """The realistic threadtest thread, imported once."""
    from discussions.importer import mbox_import

    return mbox_import(data=mbox_bytes("threadtest.mbox"), user=poster)

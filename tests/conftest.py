"""Shared fixtures: a real Celery worker process and a real headless Chromium."""

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """The embedded SQLite default is tested on a file, not in memory, so a real Celery worker
    process sees what a test wrote; the pid keeps concurrent runs on one checkout apart."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"].endswith("sqlite3"):
        name = settings.DATA_DIR / f"test-schedbench-{os.getpid()}.sqlite3"
        database["TEST"] = {**database.get("TEST", {}), "NAME": str(name)}


def database_url_for_test_db() -> str:
    """The URL of the test database this test process is using, for a worker subprocess."""
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    user = settings.get("USER") or ""
    password = f":{settings['PASSWORD']}" if settings.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    host = settings.get("HOST") or "127.0.0.1"
    port = f":{settings['PORT']}" if settings.get("PORT") else ""
    return f"postgres://{auth}{host}{port}/{settings['NAME']}"


class WorkerProcess:
    def __init__(self, queue: str, env: dict):
        self.queue = queue
        self.env = env
        self.process: subprocess.Popen | None = None
        self.log = ROOT / "var" / f"test-worker-{queue}.log"

    def start(self, *extra_args: str) -> "WorkerProcess":
        command = [
            sys.executable, "-m", "celery", "-A", "portal", "worker", "--pool=solo",
            "--loglevel=INFO", "-Q", self.queue, "-n", f"{self.queue}-{uuid.uuid4().hex[:6]}@%h",
            "--without-gossip", "--without-mingle", *extra_args,
        ]
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=self.log.open("ab"), stderr=subprocess.STDOUT
        )
        return self

    def stop(self, how: signal.Signals = signal.SIGTERM) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(how)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def celery_queue(settings):
    """A queue name of this test's own, so parallel test processes never share messages."""
    from portal.celery import app

    queue = f"test-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{uuid.uuid4().hex[:8]}"
    previous = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    app.amqp.__dict__.pop("queues", None)
    yield queue
    app.conf.task_default_queue = previous


@pytest.fixture
def celery_worker_factory(transactional_db, celery_queue):
    """Start real `celery worker` processes on the configured broker and the test database."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url_for_test_db(),
        "SCHEDBENCH_CELERY_QUEUE": celery_queue,
        "PYTHONUNBUFFERED": "1",
    }
    workers: list[WorkerProcess] = []

    def start(*extra_args: str) -> WorkerProcess:
        from django.conf import settings

        # The test's own media folder (see _media_in_tmp): a worker reads the stored files.
        env["SCHEDBENCH_MEDIA_DIR"] = str(settings.MEDIA_ROOT)
        worker = WorkerProcess(celery_queue, env).start(*extra_args)
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()


def free_port(first: int = 8400, last: int = 8499) -> int:
    """A free TCP port of this checkout's range, for private servers a test starts itself."""
    import random
    import socket

    candidates = list(range(first, last + 1))
    random.shuffle(candidates)
    for port in candidates:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {first}-{last}")


def wait_until(predicate, *, timeout: float = 60, interval: float = 0.2, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package (see .ci/run)")
    # Playwright's sync API runs an event loop in this thread; the tests' ORM calls are still
    # synchronous and safe, so Django's async guard is relaxed for browser tests only.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors
    page.wait_for_js = lambda expression, timeout=30000: wait_for_js(page, expression, timeout)
    yield page
    context.close()


def wait_for_js(page, expression: str, timeout: float = 30000) -> None:
    """Poll a JavaScript expression until it is truthy. Playwright's wait_for_function
    evaluates its string with eval() inside the page, which our Content-Security-Policy
    (script-src 'self') rightly forbids; page.evaluate goes through the DevTools protocol."""
    deadline = time.monotonic() + timeout / 1000
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} ms waiting for {expression}")
        page.wait_for_timeout(50)




@pytest.fixture(autouse=True)
def _media_in_tmp(request, tmp_path):
    """Per test: raw uploads in a folder of its own (never the developer's var/), an empty
    cache, and no frozen pages remembered from another test. Skipped when a test run has
    the Django plugin off (`-p no:django` for the pure-Python packages)."""
    if not request.config.pluginmanager.hasplugin("django"):
        yield
        return
    from benchmarks.comparisons.pagecache import frozen_pages

    settings = request.getfixturevalue("settings")
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(tmp_path / "cache"),
    }}
    settings.FROZEN_PAGES_DIR = tmp_path / "frozen"
    # Pages link the plain static names, served by the live server from the sources; the
    # production storage (hashed, compressed) is tested on its own in tests/test_static.py.
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
    frozen_pages.clear_memory()
    yield
    frozen_pages.clear_memory()


@pytest.fixture
def api_user(django_user_model):
    return django_user_model.objects.create_user("harness-user")


@pytest.fixture
def api_client(api_user):
    from django.test import Client

    from benchmarks.services.tokens import token_create

    _, key = token_create(user=api_user, name="tests")
    return Client(HTTP_AUTHORIZATION=f"Token {key}")




@pytest.fixture
def signed_in(page, live_server, django_user_model):
    """The browser page, signed in as a fresh user through a real session cookie."""
    from django.conf import settings
    from django.test import Client

    user = django_user_model.objects.create_user("browser-user", password="a-long-test-password")
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies([
        {"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}
    ])
    page.user = user
    return page

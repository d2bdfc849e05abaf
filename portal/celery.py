"""The Celery app. Workers run `celery -A portal worker`; configuration comes from settings."""

import atexit
import logging
import os
import sys
import threading
import time
from collections import deque

from celery import Celery
from celery.signals import worker_init, worker_process_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

app = Celery("portal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

logger = logging.getLogger("portal.worker")


class _NoDefaultHostname(logging.Filter):
    """kombu warns "No hostname was supplied" for every connection to a broker URL without a
    host, which is every connection to the embedded filesystem broker (it has no host): noise
    that buried `make run`'s one useful line four times over."""

    def filter(self, record):
        return not record.getMessage().startswith("No hostname was supplied.")


logging.getLogger("kombu.connection").addFilter(_NoDefaultHostname())

# How often an idle worker looks for a finished compiled build of the simulator (seconds).
COMPILED_BUILD_POLL = 2.0


def _compiled_build_ready() -> bool:
    """True when simulator/build.py's extension modules are there and match the sources (what
    simulator._compiled.select() would load in a new process)."""
    from simulator import _compiled

    if os.environ.get("SCHEDBENCH_PURE_PYTHON", "") not in ("", "0"):
        return False
    return bool(_compiled.compiled_files()) and _compiled._recorded_hashes() == \
        _compiled.source_hashes()


def _restart_when_compiled() -> None:
    """Wait for a compiled build to appear, then restart the worker in place: a warm shutdown
    (the task in hand finishes) and the same command again, which imports the compiled
    modules. A process cannot swap modules it already imported, hence the restart."""
    from celery.worker import state

    from simulator import _compiled

    last_seen = None
    while True:
        time.sleep(COMPILED_BUILD_POLL)
        try:
            stamp = _compiled.MANIFEST.stat().st_mtime_ns
        except OSError:
            continue
        if stamp == last_seen:
            continue
        last_seen = stamp
        if _compiled_build_ready():
            logger.warning("simulator: compiled build ready; the worker restarts to use it "
                           "once its current task is done")
            atexit.register(os.execv, sys.executable, [sys.executable, *sys.argv])
            state.should_stop = 0
            return


@worker_ready.connect
def _watch_for_compiled_simulator(sender=None, **kwargs):
    """`make run` serves at once and compiles the simulator in the background: a worker that
    started on the pure-Python sources moves to the compiled build when it is done."""
    if _compiled_build_ready() or os.environ.get("SCHEDBENCH_WATCH_BUILD", "1") == "0":
        return
    threading.Thread(target=_restart_when_compiled, daemon=True,
                     name="compiled-build-watch").start()


# With DEBUG on (`make run`) Django logs every query a connection runs, its parameters spelled
# into the SQL, up to 9000 per connection: a worker importing a 2.4 MB mbox kept 12 MB of
# logged SQL, most of a bulk insert's text. A worker has no debug toolbar to show them; it
# keeps the last few for a traceback's sake.
WORKER_QUERIES_KEPT = 100


@worker_init.connect
@worker_process_init.connect
def _limit_logged_queries(**kwargs):
    """In a worker process, keep only the last WORKER_QUERIES_KEPT queries per connection:
    for the connections already open and for those its threads open later."""
    from django.db import connections
    from django.db.backends.base.base import BaseDatabaseWrapper

    BaseDatabaseWrapper.queries_limit = WORKER_QUERIES_KEPT
    for connection in connections.all(initialized_only=True):
        connection.queries_log = deque(connection.queries_log, maxlen=WORKER_QUERIES_KEPT)

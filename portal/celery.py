"""The Celery app. Workers run `celery -A portal worker`; configuration comes from settings."""

import atexit
import logging
import os
import sys
import threading
import time

from celery import Celery
from celery.signals import worker_ready

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

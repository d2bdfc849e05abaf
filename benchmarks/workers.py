"""Duties every Celery worker carries out beside its tasks: a thread, started once the worker is
ready, that runs a check at an interval (the simulation watchdog re-queues the points of a dead
worker, the regression sweep resends lost detection jobs). A failing check is logged and tried
again at the next interval; it never stops the worker."""

import logging
import threading
from collections.abc import Callable

from django.db import DatabaseError, connection

log = logging.getLogger(__name__)


def run_in_every_worker(*, name: str, every: Callable[[], float],
                        duty: Callable[[], object]) -> None:
    """From the app's ready(): when a worker process is ready, run `duty` every `every()`
    seconds in a daemon thread named `name` (once per process, however often it is ready)."""
    from celery.signals import worker_ready

    started = threading.Event()

    def forever() -> None:
        pause = threading.Event()  # never set: the thread ends with the worker
        while not pause.wait(every()):
            try:
                duty()
            except DatabaseError:
                log.exception("%s: check failed", name)
            finally:
                connection.close()  # no connection left open across a pool fork

    def on_ready(**_kwargs) -> None:
        if started.is_set():
            return
        started.set()
        threading.Thread(target=forever, daemon=True, name=name).start()

    worker_ready.connect(on_ready, weak=False, dispatch_uid=name)

"""Celery tasks. Tasks take ids, re-fetch, tolerate deletion and are safe to run twice."""

import os
import socket

from celery import shared_task
from django.db import connection

from benchmarks.models import Run


@shared_task(name="benchmarks.ping")
def ping(run_id: int | None = None) -> dict:
    """A health check that proves a worker shares the broker and the database with the site."""
    found = Run.objects.filter(pk=run_id).exists() if run_id is not None else None
    return {"hostname": socket.gethostname(), "pid": os.getpid(), "run_found": found,
            "queries_kept": connection.queries_log.maxlen}

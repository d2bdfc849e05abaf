"""Celery tasks of traces: ingesting an uploaded trace. The task takes the job's id and
re-reads it (traces.jobs.trace_job_run tolerates deletion, re-delivery and failures)."""

from celery import shared_task

from . import jobs


@shared_task(name=jobs.INGEST_TASK, acks_late=True, ignore_result=True)
def ingest_trace(job_id: int) -> str:
    return jobs.trace_job_run(job_id=job_id)

"""Celery tasks: detection after an ingest, mail about new findings. They take ids, re-read
the database (a run deleted meanwhile simply drops out) and are safe to run twice."""

from celery import shared_task

from . import notifications, services


@shared_task(name=services.DETECT_TASK, acks_late=True, ignore_result=True)
def detect_runs(run_ids: list[int]) -> int:
    return len(services.regressions_detect_runs(run_ids=run_ids))


@shared_task(name=services.MAIL_TASK, ignore_result=True)
def mail_new(regression_ids: list[int]) -> int:
    # Not acks_late: mail sent twice after a crash is worse than mail lost once.
    return notifications.new_findings_mail(regression_ids=regression_ids)

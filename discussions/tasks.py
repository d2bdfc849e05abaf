"""Celery tasks of discussions: mbox imports and follower mail. They take ids, re-fetch and
tolerate deletion; an import re-run after a lost worker skips the messages already stored."""

from celery import shared_task

from . import importjobs, notifications


@shared_task(name=importjobs.IMPORT_TASK, acks_late=True, ignore_result=True)
def import_mbox(job_id: int) -> str:
    return importjobs.import_job_run(job_id=job_id)


@shared_task(name=notifications.POST_MAIL_TASK, ignore_result=True)
def mail_post(post_id: int, site_url: str = "") -> int:
    # Not acks_late: mail sent twice after a crash is worse than mail lost once.
    return notifications.post_mail_send(post_id=post_id, site_url=site_url)


@shared_task(name=notifications.IMPORT_MAIL_TASK, ignore_result=True)
def mail_import(thread_id: int, new_posts: int, site_url: str = "") -> int:
    return notifications.import_mail_send(thread_id=thread_id, new_posts=new_posts,
                                          site_url=site_url)

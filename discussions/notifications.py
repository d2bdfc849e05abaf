"""Mail to the people following a thread. The request (or the import) only queues a task once
its transaction commits; the task re-reads the post or thread and sends, so a slow mail server
never holds a request."""

from celery import current_app
from django.core.mail import get_connection, send_mass_mail
from django.db import transaction

from .models import Post, Thread

MAX_BODY_IN_MAIL = 20_000
POST_MAIL_TASK = "discussions.mail_post"
IMPORT_MAIL_TASK = "discussions.mail_import"


def _recipients(thread, exclude_user_id=None) -> list[str]:
    follows = thread.follows.select_related("user").exclude(user__email="")
    if exclude_user_id is not None:
        follows = follows.exclude(user_id=exclude_user_id)
    return sorted({follow.user.email for follow in follows if follow.user.is_active})


def _send(messages: list[tuple]) -> None:
    if messages:
        send_mass_mail(messages, fail_silently=True, connection=get_connection())


def _queue_on_commit(task_name: str, *args) -> None:
    # By name through the registry (tasks.py is imported when the app is ready): this module
    # and tasks.py do not import each other.
    transaction.on_commit(lambda: current_app.tasks[task_name].delay(*args))


def notify_followers_on_commit(*, post, site_url: str = "") -> None:
    """One mail per follower for a new post; the writer does not hear about their own post."""
    if _recipients(post.thread, exclude_user_id=post.user_id):
        _queue_on_commit(POST_MAIL_TASK, post.pk, site_url)


def notify_import_on_commit(*, thread, new_posts: int, site_url: str = "") -> None:
    """An import adds many posts at once: followers get one mail per thread, not hundreds."""
    if new_posts and _recipients(thread):
        _queue_on_commit(IMPORT_MAIL_TASK, thread.pk, new_posts, site_url)


def post_mail_send(*, post_id: int, site_url: str) -> int:
    """Run by the task: the mail about one new post; nothing if it was deleted meanwhile."""
    post = Post.objects.select_related("thread").filter(pk=post_id, deleted=False).first()
    if post is None:
        return 0
    recipients = _recipients(post.thread, exclude_user_id=post.user_id)
    link = f"{site_url}{post.get_absolute_url()}"
    body = f"{post.author} wrote on {post.date:%Y-%m-%d %H:%M} UTC:\n\n" \
           f"{post.body[:MAX_BODY_IN_MAIL]}\n\n-- \n{link}\n" \
           "You get this because you follow this thread on schedbench."
    subject = f"[schedbench] {post.subject}"
    _send([(subject, body, None, [to]) for to in recipients])
    return len(recipients)


def import_mail_send(*, thread_id: int, new_posts: int, site_url: str) -> int:
    thread = Thread.objects.filter(pk=thread_id).first()
    if thread is None:
        return 0
    recipients = _recipients(thread)
    link = f"{site_url}{thread.get_absolute_url()}"
    body = f"{new_posts} message(s) were imported into \"{thread.subject}\".\n\n-- \n{link}\n"
    subject = f"[schedbench] {thread.subject}: {new_posts} imported"
    _send([(subject, body, None, [to]) for to in recipients])
    return len(recipients)

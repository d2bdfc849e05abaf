"""Mail to the people following a thread, sent after the transaction that made the post commits."""

from django.core.mail import get_connection, send_mass_mail
from django.db import transaction

MAX_BODY_IN_MAIL = 20_000


def _recipients(thread, exclude_user_id=None) -> list[str]:
    follows = thread.follows.select_related("user").exclude(user__email="")
    if exclude_user_id is not None:
        follows = follows.exclude(user_id=exclude_user_id)
    return sorted({follow.user.email for follow in follows if follow.user.is_active})


def _send(messages: list[tuple]) -> None:
    if messages:
        send_mass_mail(messages, fail_silently=True, connection=get_connection())


def notify_followers_on_commit(*, post, site_url: str = "") -> None:
    """One mail per follower for a new post; the writer does not hear about their own post."""
    recipients = _recipients(post.thread, exclude_user_id=post.user_id)
    if not recipients:
        return
    link = f"{site_url}{post.get_absolute_url()}"
    body = f"{post.author} wrote on {post.date:%Y-%m-%d %H:%M} UTC:\n\n" \
           f"{post.body[:MAX_BODY_IN_MAIL]}\n\n-- \n{link}\n" \
           "You get this because you follow this thread on schedbench."
    subject = f"[schedbench] {post.subject}"
    transaction.on_commit(lambda: _send([(subject, body, None, [to]) for to in recipients]))


def notify_import_on_commit(*, thread, new_posts: int, site_url: str = "") -> None:
    """An import adds many posts at once: followers get one mail per thread, not hundreds."""
    recipients = _recipients(thread)
    if not recipients or not new_posts:
        return
    link = f"{site_url}{thread.get_absolute_url()}"
    body = f"{new_posts} message(s) were imported into \"{thread.subject}\".\n\n-- \n{link}\n"
    subject = f"[schedbench] {thread.subject}: {new_posts} imported"
    transaction.on_commit(lambda: _send([(subject, body, None, [to]) for to in recipients]))

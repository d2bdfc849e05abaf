"""Writes for discussions. Every function takes keyword arguments only.

Views and API views authorise and parse; these functions check the rules that hold whatever the
entry point (rate limit, who may edit), write, and keep each thread's stored layout current.
"""

from datetime import timedelta
from email.utils import make_msgid

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import connection, transaction
from django.utils import timezone

from benchmarks import errors
from benchmarks.errors import InputError

from . import notifications
from .models import Post, PostSource, Thread, ThreadFollow
from .ordering import Node, thread_layout
from .render import rendered_fields
from .targets import Target

MAX_SUBJECT = 300
MAX_BODY = 200_000
MAX_REFERENCES = 20
REPLY_PREFIXES = ("re:", "aw:", "sv:", "fwd:", "fw:")


class DiscussionError(InputError):
    """Input a post cannot be made from; the message says what to fix."""


class RateLimited(DiscussionError, errors.RateLimited):
    """Answered with 429."""


def posts_per_hour() -> int:
    return settings.DISCUSSIONS_POSTS_PER_HOUR


def mail_domain() -> str:
    return settings.DISCUSSIONS_MAIL_DOMAIN


def can_edit(user, post: Post) -> bool:
    if not user or not user.is_authenticated or post.deleted:
        return False
    return user.is_staff or (post.user_id is not None and post.user_id == user.pk)


def thread_subject(subject: str) -> str:
    """The subject without the `Re:` chain mail clients pile up."""
    subject = " ".join((subject or "").split())
    while subject.lower().startswith(REPLY_PREFIXES):
        subject = subject.split(":", 1)[1].strip()
    return subject[:MAX_SUBJECT] or "(no subject)"


def reply_subject(subject: str) -> str:
    return f"Re: {thread_subject(subject)}"[:MAX_SUBJECT]


def _clean_subject(subject) -> str:
    if subject is not None and not isinstance(subject, str):
        raise DiscussionError("subject must be text")
    return " ".join((subject or "").split())[:MAX_SUBJECT]  # no header injection via newlines


def _clean_body(body) -> str:
    if not isinstance(body, str) or not body.strip():
        raise DiscussionError("body: write something")
    if len(body) > MAX_BODY:
        raise DiscussionError(f"body: at most {MAX_BODY} characters")
    return body.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


def _check_rate(user) -> None:
    since = timezone.now() - timedelta(hours=1)
    recent = Post.objects.filter(user=user, created__gte=since).exclude(source=PostSource.MAIL)
    if recent.count() >= posts_per_hour():
        raise RateLimited(f"at most {posts_per_hour()} posts an hour; try again later")


def _author_name(user) -> str:
    return (user.get_full_name() or user.get_username())[:300]


def thread_relayout(*, thread: Thread) -> None:
    """Recompute parents, thread_order and depth from the headers; write only what changed."""
    rows = list(thread.posts.values_list(
        "id", "message_id", "in_reply_to", "references", "date", "parent_id", "thread_order",
        "depth"))
    places = thread_layout([Node(r[0], r[1], r[2], r[3].split(), r[4]) for r in rows])
    changed = [
        (r[0], places[r[0]].parent, places[r[0]].order, places[r[0]].depth)
        for r in rows
        if (r[5], r[6], r[7]) != (places[r[0]].parent, places[r[0]].order, places[r[0]].depth)
    ]
    _posts_places_write(changed)
    latest = max((r[4] for r in rows), default=thread.last_activity)
    Thread.objects.filter(pk=thread.pk).update(post_count=len(rows), last_activity=latest)
    thread.post_count, thread.last_activity = len(rows), latest


def posts_parents_write(*, pairs: list[tuple[int, int]]) -> None:
    """Set parent_id for (post id, parent id) pairs: one statement per BATCH posts."""
    _posts_places_write([(post, parent, None, None) for post, parent in pairs])


WRITE_BATCH = 500


def _posts_places_write(rows: list[tuple[int, int | None, int | None, int | None]]) -> None:
    """(id, parent_id, thread_order, depth) per post, None order/depth meaning unchanged: one
    UPDATE with CASE per batch. Django's bulk_update builds an expression object per value,
    which cost more than the database's work (seconds per thousand posts)."""
    table = connection.ops.quote_name(Post._meta.db_table)
    columns = [("parent_id", 1), ("thread_order", 2), ("depth", 3)]
    with connection.cursor() as cursor:
        for start in range(0, len(rows), WRITE_BATCH):
            part = rows[start:start + WRITE_BATCH]
            sets, params = [], []
            for column, position in columns:
                if all(row[position] is None for row in part) and position > 1:
                    continue
                # typed: a batch whose values are all NULL must still be a number to the
                # database (PostgreSQL takes an untyped CASE for text)
                cases = " ".join(["WHEN %s THEN CAST(%s AS BIGINT)"] * len(part))
                sets.append(f"{connection.ops.quote_name(column)} = CASE "
                            f"{connection.ops.quote_name('id')} {cases} END")
                params += [value for row in part for value in (row[0], row[position])]
            ids = ", ".join(["%s"] * len(part))
            cursor.execute(f"UPDATE {table} SET {', '.join(sets)} "
                           f"WHERE {connection.ops.quote_name('id')} IN ({ids})",
                           [*params, *(row[0] for row in part)])


def lock_thread(thread: Thread) -> None:
    """Serialise writers of one thread, so concurrent replies never get the same place."""
    list(Thread.objects.select_for_update().filter(pk=thread.pk).values_list("pk"))


def _new_post(*, thread, user, body, subject, parent, source) -> Post:
    lock_thread(thread)
    references = [*parent.reference_ids, parent.message_id][-MAX_REFERENCES:] if parent else []
    message_id = make_msgid(domain=mail_domain()).strip("<>")
    post = Post.objects.create(
        thread=thread, parent=parent, message_id=message_id,
        in_reply_to=parent.message_id if parent else "", references=" ".join(references),
        root_id=(references or [message_id])[0],
        author=_author_name(user), user=user, date=timezone.now(), subject=subject,
        body=body, source=source, **rendered_fields(body),
    )
    ThreadFollow.objects.get_or_create(thread=thread, user=user)  # you hear about the replies
    thread_relayout(thread=thread)
    return post


def thread_create(*, user, subject, body, target: Target | None = None,
                  source: str = PostSource.WEB, site_url: str = "") -> Thread:
    """Start a thread (optionally attached to a run, comparison or simulation)."""
    subject, body = _clean_subject(subject), _clean_body(body)
    if not subject:
        raise DiscussionError("subject: give the thread a subject")
    _check_rate(user)
    with transaction.atomic():
        thread = Thread.objects.create(
            subject=subject, started_by=user,
            target_type=target.type if target else "", target_id=target.id if target else "",
        )
        _new_post(thread=thread, user=user, body=body, subject=subject, parent=None,
                  source=source)
    return thread


def post_reply(*, user, thread: Thread, body, subject=None, parent: Post | None = None,
               source: str = PostSource.WEB, site_url: str = "") -> Post:
    """Reply to `parent` (a post of `thread`), or to the thread's first post."""
    body, subject = _clean_body(body), _clean_subject(subject)
    if parent is not None and parent.thread_id != thread.pk:
        raise DiscussionError("in_reply_to: that message belongs to another thread")
    parent = parent or thread.posts.in_thread_order().first()
    _check_rate(user)
    with transaction.atomic():
        post = _new_post(thread=thread, user=user, body=body, source=source, parent=parent,
                         subject=subject or reply_subject(parent.subject if parent else
                                                          thread.subject))
        notifications.notify_followers_on_commit(post=post, site_url=site_url)
    return post


def post_edit(*, user, post: Post, body, subject=None) -> Post:
    if not can_edit(user, post):
        raise PermissionDenied("only the author or staff can edit this message")
    post.body = _clean_body(body)
    if subject is not None and _clean_subject(subject):
        post.subject = _clean_subject(subject)
    post.edited = timezone.now()
    for name, value in rendered_fields(post.body).items():
        setattr(post, name, value)
    post.save(update_fields=["body", "subject", "edited", "body_html", "render_version"])
    return post


def post_delete(*, user, post: Post) -> None:
    """Hide a message's text; the post stays so its replies keep their place in the thread."""
    if not can_edit(user, post):
        raise PermissionDenied("only the author or staff can delete this message")
    with transaction.atomic():
        post.attachments.all().delete()
        post.deleted, post.body, post.body_html, post.edited = True, "", "", timezone.now()
        post.save(update_fields=["deleted", "body", "body_html", "edited"])


def thread_follow(*, user, thread: Thread, follow: bool = True) -> bool:
    if follow:
        ThreadFollow.objects.get_or_create(thread=thread, user=user)
    else:
        ThreadFollow.objects.filter(thread=thread, user=user).delete()
    return follow

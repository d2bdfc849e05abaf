from django import template
from django.db.models import OuterRef, Subquery

from discussions import boxes
from discussions.models import Post, Thread
from discussions.selectors import threads_listed

register = template.Library()

THREADS_SHOWN = 20


@register.filter
def post_box(post):
    return boxes.post_box(post)


def threads_about_queryset(target_type, target_id):
    """The threads about a target as the ORM writes them (threads_listed's order), each with
    its first message's id: what threads_about reads, kept to test it against."""
    first = Post.objects.filter(thread=OuterRef("pk")).order_by("thread_order")
    threads = threads_listed(target_type=target_type, target_id=str(target_id))
    return threads.annotate(root_message_id=Subquery(first.values("message_id")[:1]))


# threads_about_queryset() as the SQL it compiles to: building that queryset (a filter, an
# annotated subquery) cost more CPU than the database took to answer it, on every run page.
_THREADS_ABOUT_SQL = (
    "SELECT t.id, t.subject, t.target_type, t.target_id, t.started_by_id, t.created, "
    "t.last_activity, t.post_count, (SELECT p.message_id FROM {post} p WHERE p.thread_id = t.id "
    "ORDER BY p.thread_order LIMIT 1) AS root_message_id FROM {thread} t "
    "WHERE t.target_type = %s AND t.target_id = %s ORDER BY t.last_activity DESC, t.id DESC "
    "LIMIT {limit}")


def threads_about_read(target_type, target_id):
    """The newest THREADS_SHOWN of threads_about_queryset(), read with its SQL
    (Thread.objects.raw applies the fields' database converters as the queryset would)."""
    sql = _THREADS_ABOUT_SQL.format(post=Post._meta.db_table, thread=Thread._meta.db_table,
                                    limit=THREADS_SHOWN)
    return Thread.objects.raw(sql, [target_type, str(target_id)])


@register.simple_tag
def threads_about(target_type, target_id):
    """Threads about a target (the newest THREADS_SHOWN), each with its first message's id (to
    reply to the thread)."""
    return list(threads_about_read(target_type, target_id))

from django import template
from django.db.models import OuterRef, Subquery

from discussions import boxes
from discussions.models import Post
from discussions.selectors import threads_listed

register = template.Library()


@register.filter
def post_box(post):
    return boxes.post_box(post)


@register.simple_tag
def threads_about(target_type, target_id):
    """Threads about a target, each with its first message's id (to reply to the thread)."""
    first = Post.objects.filter(thread=OuterRef("pk")).order_by("thread_order")
    threads = threads_listed(target_type=target_type, target_id=str(target_id))
    return list(threads.annotate(root_message_id=Subquery(first.values("message_id")[:1]))[:20])

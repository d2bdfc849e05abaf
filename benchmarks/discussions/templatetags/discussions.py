from django import template

from benchmarks.discussions import boxes
from benchmarks.discussions.selectors import threads_listed

register = template.Library()


@register.filter
def post_box(post):
    return boxes.post_box(post)


@register.simple_tag
def threads_about(target_type, target_id):
    return list(threads_listed(target_type=target_type, target_id=str(target_id))[:20])

from django import template

from benchmarks.discussions import render
from benchmarks.discussions.selectors import MAX_INDENT, threads_listed

register = template.Library()


@register.filter
def mail_body(text):
    return render.render_body(text)


@register.filter
def post_body(post):
    return render.post_body_html(post)


@register.filter
def attachment_body(attachment):
    return render.render_attachment_text(
        attachment.filename, attachment.content_type, attachment.text)


@register.filter
def indent(depth):
    return min(int(depth or 0), MAX_INDENT)


@register.simple_tag
def threads_about(target_type, target_id):
    return list(threads_listed(target_type=target_type, target_id=str(target_id))[:20])


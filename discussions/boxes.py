"""A post's box (header, body, attachments, runs, actions) as HTML, built in Python.

The thread page shows up to 2,000 of these; a template include per post cost more than the
rest of the page together. Every value taken from the post is escaped here; the body and
attachments come from the restricted renderer.
"""

from html import escape
from urllib.parse import quote

from django.template.defaultfilters import filesizeformat
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from .models import URL_SAFE
from .render import post_body_html, render_attachment_text
from .selectors import MAX_INDENT


def _head(post) -> str:
    extras = []
    if post.depth > MAX_INDENT:
        extras.append(f'<span class="muted">(depth {post.depth})</span>')
    if post.source == "mail":
        extras.append('<span class="tag source-mail">mail</span>')
    if post.edited and not post.deleted:
        extras.append('<span class="muted">edited</span>')
    when = timezone.localtime(post.date).strftime("%Y-%m-%d %H:%M")
    return (f'<header class="post-head"><a class="post-subject" href="{escape(post.url)}">'
            f'{escape(post.subject)}</a> <span class="post-author">{escape(post.author)}</span> '
            f'<time>{when} UTC</time> {" ".join(extras)}</header>')


def _attachment(post, attachment) -> str:
    name = escape(attachment.filename or "unnamed attachment")
    meta = f"{escape(attachment.content_type)} · {filesizeformat(attachment.size)}"
    content = (render_attachment_text(attachment.filename, attachment.content_type,
                                      attachment.text) if attachment.text else "")
    return (f'<figure class="attachment"><figcaption><a href="{escape(post.url)}attachments/'
            f'{attachment.position}/">{name}</a> <span class="muted">{meta}</span></figcaption>'
            f"{content}</figure>")


def _run_link(link) -> str:
    anchor = f'<a class="run-link" href="/runs/{link.run_id}/">#{link.run_id}</a>'
    if not link.reported_in:
        return anchor
    if link.reported_in == "upload":
        return f'{anchor} <span class="muted repeat">(already stored)</span>'
    where = escape(f"/m/{quote(link.reported_in, safe=URL_SAFE)}/")
    return (f'{anchor} <span class="muted repeat">(already reported in <a href="{where}">'
            f"{escape('<' + link.reported_in + '>')}</a>)</span>")


def _runs(post) -> str:
    links = post.run_link_list
    if not links:
        return ""
    joined = ",".join(str(link.run_id) for link in links)
    return (f'<p class="post-runs">Runs from this message: '
            f'{" ".join(_run_link(link) for link in links)} · '
            f'<a class="compare-these" href="/compare/?runs={joined}">compare these</a></p>')


def _actions(post) -> str:
    url = escape(post.url)
    return (f'<footer class="post-actions"><a href="{url}reply/">reply</a> '
            f'<a class="reply-quote" href="{url}reply/?quote=1">reply with quote</a> '
            f'<a href="{url}">permalink</a> <a href="{url}raw/">raw</a></footer>')


def post_box(post) -> SafeString:
    if post.deleted:
        content = '<p class="muted">This message was deleted.</p>'
    else:
        content = (str(post_body_html(post))
                   + "".join(_attachment(post, a) for a in post.attachment_list) + _runs(post))
    classes = f"post indent-{min(post.depth, MAX_INDENT)}" + (" deleted" if post.deleted else "")
    return mark_safe(  # noqa: S308 - every value above is escaped or from the renderer
        f'<article class="{classes}" id="m-{post.pk}" data-depth="{post.depth}">'
        f"{_head(post)}{content}{_actions(post)}</article>")

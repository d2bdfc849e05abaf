"""A post's box (header, body, attachments, runs, actions) as HTML, built in Python.

The thread page shows up to 2,000 of these; a template include per post cost more than the
rest of the page together. The box is built with the renderer's `tag` (render.py), which
escapes every value taken from the post; the body and attachments come from the renderer too.
"""

from urllib.parse import quote

from django.template.defaultfilters import filesizeformat
from django.urls import get_script_prefix
from django.utils import timezone
from django.utils.safestring import SafeString

from .models import URL_SAFE
from .render import join, post_body_html, render_attachment_text, tag
from .selectors import MAX_INDENT


def _head(post) -> SafeString:
    extras = []
    if post.depth > MAX_INDENT:
        extras.append(tag("span", f"(depth {post.depth})", class_="muted"))
    if post.source == "mail":
        extras.append(tag("span", "mail", class_="tag source-mail"))
    if post.edited and not post.deleted:
        extras.append(tag("span", "edited", class_="muted"))
    when = timezone.localtime(post.date).strftime("%Y-%m-%d %H:%M")
    return tag("header", tag("a", post.subject, class_="post-subject", href=post.url), " ",
               tag("span", post.author, class_="post-author"), " ", tag("time", f"{when} UTC"),
               " ", join(extras, " "), class_="post-head")


def _attachment(post, attachment) -> SafeString:
    link = tag("a", attachment.filename or "unnamed attachment",
               href=f"{post.url}attachments/{attachment.position}/")
    meta = tag("span", f"{attachment.content_type} · {filesizeformat(attachment.size)}",
               class_="muted")
    content = (render_attachment_text(attachment.filename, attachment.content_type,
                                      attachment.text) if attachment.text else None)
    return tag("figure", tag("figcaption", link, " ", meta), content, class_="attachment")


def _run_link(link, prefix: str) -> SafeString:
    anchor = tag("a", f"#{link.run_id}", class_="run-link", href=f"{prefix}runs/{link.run_id}/")
    if not link.reported_in:
        return anchor
    if link.reported_in == "upload":
        return join([anchor, " ", tag("span", "(already stored)", class_="muted repeat")])
    where = tag("a", f"<{link.reported_in}>",
                href=f"{prefix}m/{quote(link.reported_in, safe=URL_SAFE)}/")
    return join([anchor, " ", tag("span", "(already reported in ", where, ")",
                                  class_="muted repeat")])


def _runs(post) -> SafeString | None:
    links = post.run_link_list
    if not links:
        return None
    prefix = get_script_prefix()
    joined = ",".join(str(link.run_id) for link in links)
    return tag("p", "Runs from this message: ", join((_run_link(ln, prefix) for ln in links), " "),
               " · ", tag("a", "compare these", class_="compare-these",
                          href=f"{prefix}compare/?runs={joined}"),
               class_="post-runs")


def _actions(post) -> SafeString:
    url = post.url
    return tag("footer", tag("a", "reply", href=f"{url}reply/"), " ",
               tag("a", "reply with quote", class_="reply-quote", href=f"{url}reply/?quote=1"),
               " ", tag("a", "permalink", href=url), " ", tag("a", "raw", href=f"{url}raw/"),
               class_="post-actions")


def post_box(post) -> SafeString:
    if post.deleted:
        content = [tag("p", "This message was deleted.", class_="muted")]
    else:
        content = [post_body_html(post), *(_attachment(post, a) for a in post.attachment_list),
                   _runs(post)]
    classes = f"post indent-{min(post.depth, MAX_INDENT)}" + (" deleted" if post.deleted else "")
    return tag("article", _head(post), *content, _actions(post),
               class_=classes, id=f"m-{post.pk}", data_depth=post.depth)

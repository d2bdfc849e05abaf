"""The one renderer for user text. Everything is escaped; the only markup it emits is its own.

A body becomes fixed-width text blocks (pasted tables line up), quotes fold into <details>
labelled with the quoted author and line count, attribution lines and `-- ` signatures get a
class, http(s) URLs become nofollow links, inline patches and code attachments are monospaced.
"""

import re

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from .quoting import attribution_author, is_quote, is_signature_separator, unquote_once

RENDER_VERSION = 2  # bump when the output changes: stored renderings are then ignored
URL_RE = re.compile(r"\bhttps?://[^\s<>\"'`]+", re.I)
URL_TRAILING = ".,;:!?)]}"
MAX_QUOTE_NESTING = 12
# Quotes of up to this many lines stay open at any depth: that is the context a reply answers,
# and folding it only makes the reader click. Longer quotes (a whole earlier mail) fold.
OPEN_QUOTE_LINES = 6
PATCH_START_RE = re.compile(r"^(diff --git |diff -u|Index: \S)")
CODE_SUFFIXES = (".c", ".h", ".py", ".sh", ".pl", ".awk", ".js", ".rs", ".go", ".cpp", ".S")
PATCH_SUFFIXES = (".patch", ".diff")


def _linked(line: str) -> str:
    """Escape a line, turning http(s) URLs into links whose text and href are escaped too."""
    pieces, last = [], 0
    for match in URL_RE.finditer(line):
        url = match.group(0).rstrip(URL_TRAILING)
        start, end = match.start(), match.start() + len(url)
        pieces.append(escape(line[last:start]))
        pieces.append(f'<a href="{escape(url)}" rel="nofollow noopener noreferrer">'
                      f"{escape(url)}</a>")
        last = end
    pieces.append(escape(line[last:]))
    return "".join(pieces)


def _text_block(lines: list[str]) -> str:
    rendered = []
    for line in lines:
        if attribution_author(line) is not None:
            rendered.append(f'<span class="attribution">{_linked(line)}</span>')
        else:
            rendered.append(_linked(line))
    return f'<pre class="mail-text">{chr(10).join(rendered)}</pre>'


def _patch_line(line: str) -> str:
    kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "")
    if line.startswith(("+++", "---", "diff ", "Index: ")):
        kind = "file"
    return f'<span class="{kind}">{escape(line)}</span>' if kind else escape(line)


def _patch_block(lines: list[str]) -> str:
    return f'<pre class="patch">{chr(10).join(_patch_line(line) for line in lines)}</pre>'


def _quoted_author(lines: list[str]) -> str | None:
    for line in reversed(lines):
        if line.strip():
            return attribution_author(line)
    return None


def _quote_block(block: list[str], author: str | None, level: int) -> str:
    count = len(block)
    who = escape(author) if author else "quoted text"
    open_attr = " open" if count <= OPEN_QUOTE_LINES else ""
    inner = _render([unquote_once(line) for line in block], level + 1)
    return (f'<details class="quote level-{min(level, 5)}"{open_attr}>'
            f'<summary><span class="quote-who">{who}</span> '
            f'<span class="quote-lines">{count} line{"s" if count != 1 else ""}</span>'
            f'</summary><div class="quote-body">{inner}</div></details>')


def _render(lines: list[str], level: int) -> str:
    if level > MAX_QUOTE_NESTING:
        return _text_block(lines)
    out, text = [], []

    def flush():
        if text:
            out.append(_text_block(text))
            text.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        if is_quote(line):
            end = index
            while end < len(lines) and is_quote(lines[end]):
                end += 1
            author = _quoted_author(text)
            flush()
            out.append(_quote_block(lines[index:end], author, level))
            index = end
        elif is_signature_separator(line):
            flush()
            out.append(f'<pre class="mail-signature">{_text_lines(lines[index:])}</pre>')
            break
        elif PATCH_START_RE.match(line):
            flush()
            end = next((i for i in range(index, len(lines))
                        if is_signature_separator(lines[i])), len(lines))
            out.append(_patch_block(lines[index:end]))
            index = end
        else:
            text.append(line)
            index += 1
    flush()
    return "".join(out)


def _text_lines(lines: list[str]) -> str:
    return "\n".join(_linked(line) for line in lines)


def render_body(text: str) -> SafeString:
    """Mail text as HTML. The input is never trusted: every character of it is escaped."""
    lines = (text or "").replace("\r\n", "\n").replace("\r", "\n").rstrip("\n").split("\n")
    return mark_safe(f'<div class="mail-body">{_render(lines, 0)}</div>')  # noqa: S308


def attachment_kind(filename: str, content_type: str, text: str) -> str:
    name = (filename or "").lower()
    if name.endswith(PATCH_SUFFIXES) or "diff" in content_type or "patch" in content_type \
            or text.startswith(("diff ", "--- ", "Index: ")):
        return "patch"
    if name.endswith(CODE_SUFFIXES) or content_type.startswith("text/x-"):
        return "code"
    return "text"


def render_attachment_text(filename: str, content_type: str, text: str) -> SafeString:
    kind = attachment_kind(filename, content_type, text)
    lines = text.replace("\r\n", "\n").split("\n")
    if kind == "patch":
        return mark_safe(_patch_block(lines))  # noqa: S308
    return mark_safe(f'<pre class="{kind}">{escape(text)}</pre>')  # noqa: S308


def rendered_fields(text: str) -> dict:
    """What a post stores of its rendering: the HTML and the renderer version that made it."""
    return {"body_html": str(render_body(text)), "render_version": RENDER_VERSION}


def post_body_html(post) -> SafeString:
    """The post's stored rendering when current, else a fresh one (never trusted otherwise)."""
    if post.render_version == RENDER_VERSION and post.body_html:
        return mark_safe(post.body_html)  # noqa: S308 - produced by render_body above
    return render_body(post.body)

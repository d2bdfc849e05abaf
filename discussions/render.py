"""The one renderer for user text. Everything is escaped; the only markup it emits is its own.

A body becomes fixed-width text blocks (pasted tables line up), quotes fold into <details>
labelled with the quoted author and line count, attribution lines and `-- ` signatures get a
class, http(s) URLs become nofollow links, inline patches and code attachments are monospaced.
All of it, and the post boxes around it (boxes.py), is built with `tag`, which escapes every
attribute value and every child it did not build itself: no HTML is assembled from user text
by string formatting.
"""

import re
from html import escape  # what django.utils.html.escape calls, without its lazy-string wrapper

from django.utils.safestring import SafeData, SafeString, mark_safe

from .quoting import attribution_author, is_quote, is_signature_separator, unquote_once

RENDER_VERSION = 3  # bump when the output changes: stored renderings are then ignored
URL_RE = re.compile(r"\bhttps?://[^\s<>\"'`]+", re.I)
URL_TRAILING = ".,;:!?)]}"
# Control characters HTML does not allow in text (NUL among them): shown as U+FFFD, as a browser
# would show a NUL, instead of being handed to it. Tab, newline and form feed stay.
CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0d-\x1f\x7f]")
_control_sub = CONTROL_RE.sub
REPLACEMENT = "\ufffd"
# Most values (names, dates, URLs, labels) hold nothing to escape: one search says so, cheaper
# than the substitution and five replacements that escaping them would cost.
_needs_escape = re.compile(r"[&<>\"'\x00-\x08\x0b\x0d-\x1f\x7f]").search
NAME_RE = re.compile(r"^[a-z][a-z0-9-]*$")
MAX_QUOTE_NESTING = 12
# Quotes of up to this many lines stay open at any depth: that is the context a reply answers,
# and folding it only makes the reader click. Longer quotes (a whole earlier mail) fold.
OPEN_QUOTE_LINES = 6
PATCH_START_RE = re.compile(r"^(diff --git |diff -u|Index: \S)")
CODE_SUFFIXES = (".c", ".h", ".py", ".sh", ".pl", ".awk", ".js", ".rs", ".go", ".cpp", ".S")
PATCH_SUFFIXES = (".patch", ".diff")


def _text(value) -> str:
    value = str(value)
    return escape(_control_sub(REPLACEMENT, value)) if _needs_escape(value) else value


def plain(value) -> SafeString:
    """Any value as HTML text: escaped, control characters replaced."""
    return SafeString(_text(value))


def join(parts, separator: str = "") -> SafeString:
    """Pieces side by side; a piece `tag` or `plain` did not make is escaped first."""
    return SafeString(_text(separator).join(
        [part if isinstance(part, SafeData) else _text(part) for part in parts
         if part is not None]))


_NAMES: dict[str, str] = {}


def _name(key: str) -> str:
    """A tag or attribute name as HTML spells it (class_ -> class, data_depth -> data-depth).

    Names come from this code, never from users; each is checked once, then remembered.
    """
    name = _NAMES.get(key)
    if name is None:
        name = key.rstrip("_").replace("_", "-")
        if not NAME_RE.match(name):
            raise ValueError(f"not a tag or attribute name: {key!r}")
        _NAMES[key] = name
    return name


def tag(name: str, *children, **attributes) -> SafeString:
    """<name attributes>children</name>: the one way this renderer and the post boxes make markup.

    Every attribute value is escaped (even a SafeString: it is a value, not markup); a child is
    escaped unless `tag`, `plain` or `join` made it. Attributes that are None or False are left
    out, True ones are bare. Written for speed (some twenty calls per post, 2,000 posts a page).
    """
    # Loops and local names instead of helpers and comprehensions: each call saved is about a
    # microsecond a post on the 2,000-post page.
    attrs = ""
    for key, value in attributes.items():
        if value is True:
            attrs += " " + (_NAMES.get(key) or _name(key))
        elif value is not None and value is not False:
            value = str(value)
            if _needs_escape(value):
                value = escape(_control_sub(REPLACEMENT, value))
            attrs += f' {_NAMES.get(key) or _name(key)}="{value}"'
    inner = ""
    for child in children:
        if isinstance(child, SafeData):
            inner += child
        elif child is not None:
            child = str(child)
            inner += escape(_control_sub(REPLACEMENT, child)) if _needs_escape(child) else child
    name = _NAMES.get(name) or _name(name)
    return SafeString(f"<{name}{attrs}>{inner}</{name}>")


def _linked(line: str) -> SafeString:
    """Escape a line, turning http(s) URLs into links whose text and href are escaped too."""
    if "://" not in line:  # no URL can match: the line is its escaped text (most lines)
        return plain(line)
    return _linked_by_pattern(line)


def _linked_by_pattern(line: str) -> SafeString:
    """_linked without its shortcut: every line searched for URLs."""
    pieces, last = [], 0
    for match in URL_RE.finditer(line):
        url = match.group(0).rstrip(URL_TRAILING)
        start, end = match.start(), match.start() + len(url)
        pieces.append(plain(line[last:start]))
        pieces.append(tag("a", url, href=url, rel="nofollow noopener noreferrer"))
        last = end
    pieces.append(plain(line[last:]))
    return join(pieces)


def _text_block(lines: list[str]) -> SafeString:
    rendered = [tag("span", _linked(line), class_="attribution")
                if attribution_author(line) is not None else _linked(line) for line in lines]
    return tag("pre", join(rendered, "\n"), class_="mail-text")


def _patch_line(line: str) -> SafeString:
    kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "")
    if line.startswith(("+++", "---", "diff ", "Index: ")):
        kind = "file"
    return tag("span", line, class_=kind) if kind else plain(line)


def _patch_block(lines: list[str]) -> SafeString:
    return tag("pre", join((_patch_line(line) for line in lines), "\n"), class_="patch")


def _quoted_author(lines: list[str]) -> str | None:
    for line in reversed(lines):
        if line.strip():
            return attribution_author(line)
    return None


def _quote_block(block: list[str], author: str | None, level: int) -> SafeString:
    count = len(block)
    summary = tag("summary", tag("span", author or "quoted text", class_="quote-who"), " ",
                  tag("span", f"{count} line{'s' if count != 1 else ''}", class_="quote-lines"))
    inner = _render([unquote_once(line) for line in block], level + 1)
    return tag("details", summary, tag("div", inner, class_="quote-body"),
               class_=f"quote level-{min(level, 5)}", open=count <= OPEN_QUOTE_LINES)


def _render(lines: list[str], level: int) -> SafeString:
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
            out.append(tag("pre", join((_linked(line) for line in lines[index:]), "\n"),
                           class_="mail-signature"))
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
    return join(out)


def render_body(text: str) -> SafeString:
    """Mail text as HTML. The input is never trusted: every character of it is escaped."""
    lines = (text or "").replace("\r\n", "\n").replace("\r", "\n").rstrip("\n").split("\n")
    return tag("div", _render(lines, 0), class_="mail-body")


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
        return _patch_block(lines)
    return tag("pre", text, class_=kind)


def rendered_fields(text: str) -> dict:
    """What a post stores of its rendering: the HTML and the renderer version that made it."""
    return {"body_html": str(render_body(text)), "render_version": RENDER_VERSION}


def post_body_html(post) -> SafeString:
    """The post's stored rendering when current, else a fresh one (never trusted otherwise)."""
    if post.render_version == RENDER_VERSION and post.body_html:
        return mark_safe(post.body_html)  # noqa: S308 - produced by render_body above
    return render_body(post.body)

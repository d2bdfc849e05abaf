"""The format help page: docs/formats.md shown in the site, and links into it from refusals.

Only the Markdown that file uses is understood (headings, paragraphs, fenced code, lists,
tables, inline code and bold); everything is HTML-escaped before any tag is added. Each section
about a format gets the anchor `format-<name>`, so a refusal can link the example of the layout
closest to what was pasted.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.urls import reverse
from django.utils.html import escape

from benchmarks import parsers

DOC_PATH = Path(settings.BASE_DIR) / "docs" / "formats.md"
_INLINE_CODE_RE = re.compile(r"`([^`]+)`")
_BOLD_RE = re.compile(r"\*\*([^*]+)\*\*")
_FORMAT_IN_HEADING_RE = re.compile(r"`([a-z][a-z0-9-]*)`")
_LIST_ITEM_RE = re.compile(r"^(\s*)(?:[-*]|\d+\.)\s+(.*)$")


def anchor(name: str) -> str:
    return f"format-{name}"


def layout_hint(name: str | None) -> dict:
    """`{"layout", "help"}` for an error body: the closest layout and the link to its example."""
    if not name or name not in parsers.PARSERS:
        return {"help": reverse("formats")} if name is None else {}
    return {"layout": name, "help": f"{reverse('formats')}#{anchor(name)}"}


def _inline(text: str) -> str:
    html = escape(text)
    html = _INLINE_CODE_RE.sub(lambda m: f"<code>{m.group(1)}</code>", html)
    return _BOLD_RE.sub(lambda m: f"<strong>{m.group(1)}</strong>", html)


def _heading(line: str, used: set[str]) -> str:
    level = len(line) - len(line.lstrip("#"))
    text = line[level:].strip()
    named = _FORMAT_IN_HEADING_RE.search(text)
    if named and named.group(1) in parsers.PARSERS and anchor(named.group(1)) not in used:
        ident = anchor(named.group(1))
    else:
        ident = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
        while ident in used:
            ident += "-more"
    used.add(ident)
    return f'<h{level + 1} id="{ident}">{_inline(text)}</h{level + 1}>'


def _code_block(lines: list[str], language: str) -> str:
    code = escape("\n".join(lines))
    label = escape(language or "text")
    return (f'<div class="example"><button type="button" class="copy secondary" '
            f'data-copy>Copy</button><pre class="mono" data-language="{label}"><code>'
            f"{code}</code></pre></div>")


def _table(rows: list[str]) -> str:
    cells = [[cell.strip() for cell in row.strip().strip("|").split("|")] for row in rows]
    body = [row for row in cells[1:] if not all(set(c) <= set("-: ") for c in row)]
    head = "".join(f"<th>{_inline(c)}</th>" for c in cells[0])
    rows_html = "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>"
                        for row in body)
    return f'<table class="data"><thead><tr>{head}</tr></thead><tbody>{rows_html}</tbody></table>'


def _list(items: list[str], ordered: bool) -> str:
    tag = "ol" if ordered else "ul"
    return f"<{tag}>" + "".join(f"<li>{_inline(item)}</li>" for item in items) + f"</{tag}>"


def render_markdown(text: str) -> str:
    """HTML for the Markdown subset used in docs/*.md."""
    out: list[str] = []
    used: set[str] = set()
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("```"):
            end = index + 1
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            out.append(_code_block(lines[index + 1:end], line[3:].strip()))
            index = end + 1
        elif line.startswith("#"):
            out.append(_heading(line, used))
            index += 1
        elif line.startswith("|"):
            end = index
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            out.append(_table(lines[index:end]))
            index = end
        elif _LIST_ITEM_RE.match(line):
            index = _read_list(lines, index, out)
        elif line.strip():
            end = index
            while end < len(lines) and lines[end].strip() and not _starts_block(lines[end]):
                end += 1
            out.append(f"<p>{_inline(' '.join(s.strip() for s in lines[index:end]))}</p>")
            index = end
        else:
            index += 1
    return "\n".join(out)


def _starts_block(line: str) -> bool:
    return line.startswith(("```", "#", "|")) or bool(_LIST_ITEM_RE.match(line))


def _read_list(lines: list[str], index: int, out: list[str]) -> int:
    ordered = bool(re.match(r"\s*\d+\.", lines[index]))
    items: list[str] = []
    while index < len(lines) and lines[index].strip() and not lines[index].startswith(
            ("```", "#", "|")):
        match = _LIST_ITEM_RE.match(lines[index])
        if match and len(match.group(1)) == 0:
            items.append(match.group(2))
        elif items:  # a continuation line of the item above
            items[-1] += " " + lines[index].strip()
        index += 1
    out.append(_list(items, ordered))
    return index


@lru_cache(maxsize=4)
def _rendered(mtime: float) -> str:
    return render_markdown(DOC_PATH.read_text(encoding="utf-8"))


def formats_html() -> str:
    """docs/formats.md as HTML, re-rendered only when the file changes."""
    return _rendered(DOC_PATH.stat().st_mtime)

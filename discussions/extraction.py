"""Benchmark tables in a message's own text (never its quotes), ready for the ingestion service.

A message is cut into paragraphs; consecutive paragraphs the parsers recognise form a table.
When the table does not name its kernels, the nearest kernel named in the writer's prose around
it labels its rows (before the table, else after it, else in the subject). A table whose rows
still have no kernel has its paragraphs parsed one by one, each with its own nearby kernel, so
"On 2.6.24: ... On 2.6.25: ..." gives two runs, not one mixed one.
"""

from dataclasses import dataclass

from benchmarks import parsers
from benchmarks.parsers.base import find_kernel

from .quoting import own_lines

DETECT_THRESHOLD = 0.3  # the registry's own threshold: below it a guess is not trusted


@dataclass
class Table:
    text: str
    format: str
    kernel_hint: str | None
    first_line: int  # line number in the message body


@dataclass
class Paragraph:
    first_line: int
    lines: list[str]
    format: str | None = None

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _paragraphs(text: str) -> list[Paragraph]:
    paragraphs, current = [], None
    for number, line in own_lines(text):
        if not line.strip():
            current = None
            continue
        if current is None:
            current = Paragraph(number, [])
            paragraphs.append(current)
        current.lines.append(line)
    return paragraphs


def _detected_format(paragraph: Paragraph) -> str | None:
    ranked = parsers.detect(paragraph.text)
    return ranked[0][0] if ranked and ranked[0][1] >= DETECT_THRESHOLD else None


def _kernel_in(paragraphs: list[Paragraph]) -> str | None:
    for paragraph in paragraphs:
        for line in reversed(paragraph.lines):
            kernel = find_kernel(line)
            if kernel:
                return kernel
    return None


def _kernel_hint(prose_before, table, prose_after, subject) -> str | None:
    """Nearest kernel named in prose: inside the table's own unparsed lines or before it,
    then after it, then the subject."""
    return (_kernel_in([table[0]] + list(reversed(prose_before)))
            or _kernel_in(prose_after[:1]) or find_kernel(subject or ""))


def _parsed_without_kernel(text: str, format: str) -> bool | None:
    """True when some result set lacks a kernel; None when the text does not parse at all."""
    try:
        result = parsers.parse_text(text, format)
    except parsers.ParseError:
        return None
    return any(not r.kernel for r in result.results)


def find_tables(text: str, subject: str = "") -> list[Table]:
    paragraphs = _paragraphs(text)
    for paragraph in paragraphs:
        paragraph.format = _detected_format(paragraph)
    tables, index = [], 0
    while index < len(paragraphs):
        if paragraphs[index].format is None:
            index += 1
            continue
        end = index
        while end < len(paragraphs) and paragraphs[end].format == paragraphs[index].format:
            end += 1
        tables.extend(_tables_from(paragraphs, index, end, subject))
        index = end
    return tables


def _tables_from(paragraphs: list[Paragraph], start: int, end: int, subject: str) -> list[Table]:
    group = paragraphs[start:end]
    before = [p for p in paragraphs[:start] if p.format is None]
    after = [p for p in paragraphs[end:] if p.format is None]
    fmt = group[0].format
    text = "".join(p.text + "\n" for p in group)
    missing = _parsed_without_kernel(text, fmt)
    if missing is None:
        return []
    if not missing or len(group) == 1:
        hint = _kernel_hint(before, group, after, subject) if missing else None
        return [Table(text, fmt, hint, group[0].first_line)]
    tables = []
    for offset, paragraph in enumerate(group):
        earlier = before + group[:offset]  # a table paragraph's prose line can name a kernel
        hint = _kernel_hint(earlier, [paragraph], after, subject)
        tables.append(Table(paragraph.text, fmt, hint, paragraph.first_line))
    return tables

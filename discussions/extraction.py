"""Benchmark tables in a message's own text (never its quotes), ready for the ingestion service.

A message is cut into paragraphs; consecutive paragraphs the parsers recognise form a table.
When the table does not name its kernels, the nearest kernel named in the writer's prose around
it labels its rows (before the table, else after it, else in the subject). A table whose rows
still have no kernel has its paragraphs parsed one by one, each with its own nearby kernel, so
"On 2.6.24: ... On 2.6.25: ..." gives two runs, not one mixed one.

Published tables (a kernel test robot report, mmtests compare tables) are read whole: their
parts (the robot's header line and commits, an mmtests heading and its Duration block) sit in
paragraphs of their own. Such a table quoted in a forwarded mail is read too; one quoted in a
reply (under "X wrote:") is the earlier message's and is never read again.
"""

import re
from dataclasses import dataclass
from functools import lru_cache

from benchmarks import parsers
from benchmarks.parsers.base import HEAD_SIZE, find_kernel

from .quoting import attribution_author, is_quote, own_lines, unquote_once

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


def _paragraphs(text: str, lines: list[tuple[int, str]] | None = None) -> list[Paragraph]:
    """Paragraphs of the writer's own lines (`lines`: own_lines(text), when already known)."""
    paragraphs, current = [], None
    for number, line in own_lines(text) if lines is None else lines:
        if not line.strip():
            current = None
            continue
        if current is None:
            current = Paragraph(number, [])
            paragraphs.append(current)
        current.lines.append(line)
    return paragraphs


def _ranked_format(text: str) -> str | None:
    """The registry's best format for `text`, or None below the threshold."""
    ranked = parsers.detect(text)
    return ranked[0][0] if ranked and ranked[0][1] >= DETECT_THRESHOLD else None


# Mail repeats paragraphs ("Thanks,", "Hi Ingo,", Signed-off-by lines, a table pasted again in
# a thread): detection is a pure function of the text and runs every detector of the registry,
# so an import asks once per distinct short paragraph. Bounded in count and in length (a long
# paragraph is rarely repeated and would hold memory), so at most a few megabytes are kept.
CACHED_PARAGRAPH_CHARS = 1000
_cached_format = lru_cache(maxsize=4096)(_ranked_format)


def _detected_format(paragraph: Paragraph) -> str | None:
    text = paragraph.text
    if len(text) > CACHED_PARAGRAPH_CHARS:
        return _ranked_format(text)
    return _cached_format(text)


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


WHOLE_FORMATS = ("robot", "mmtests")
FORWARD_RE = re.compile(r"^\s*(?:-+\s*(?:Forwarded|Original) message\s*-+|Begin forwarded "
                        r"message:)\s*$", re.I)
FORWARD_SUBJECT_RE = re.compile(r"^\s*(?:\[[^]]*\]\s*)*(?:fwd?|fw)\s*:", re.I)
# The words every FORWARD_RE line holds, with its flags: a text without them has no marker.
FORWARD_WORDS_RE = re.compile(r"(?:Forwarded|Original) message|Begin forwarded message:", re.I)


def _whole_format_ranked(text: str) -> str | None:
    """A published format when it ranks first among all detectors (the plain way)."""
    ranked = parsers.detect(text)
    if ranked and ranked[0][0] in WHOLE_FORMATS and ranked[0][1] >= DETECT_THRESHOLD:
        return ranked[0][0]
    return None


def _whole_score(name: str, head: str) -> float:
    """One detector's score as parsers.detect computes it (errors count as 0)."""
    try:
        return float(parsers.PARSERS[name].detect(head))
    except Exception:  # noqa: BLE001 - as the registry: a detector bug is no detection
        return 0.0


def _whole_format(text: str) -> str | None:
    """_whole_format_ranked's answer, asking every detector only when it can be yes: the
    winner can be a published format only if that format's own detector reaches the
    threshold, and almost no message gets there (every message's whole text is asked)."""
    head = text[:HEAD_SIZE]
    if "\x00" in head or all(_whole_score(name, head) < DETECT_THRESHOLD
                             for name in WHOLE_FORMATS):
        return None
    return _whole_format_ranked(text)


def _published_table(lines: list[tuple[int, str]]) -> Table | None:
    """A robot report or mmtests tables in these (number, line) pairs, read as one table."""
    text = "\n".join(line for _, line in lines) + "\n"
    fmt = _whole_format(text)
    if fmt is None:
        return None
    first = next((number for number, line in lines if line.strip()), 1)
    if fmt == "mmtests":
        text = _mmtests_text(_paragraphs(text))
    return Table(text, fmt, None, first)


def _mmtests_text(paragraphs: list[Paragraph]) -> str:
    """The paragraphs holding mmtests rows, each with the lone heading line above it."""
    kept = []
    for index, paragraph in enumerate(paragraphs):
        if _detected_format(paragraph) != "mmtests":
            continue
        previous = paragraphs[index - 1] if index else None
        if previous is not None and len(previous.lines) == 1 and \
                len(previous.lines[0].split()) == 1 and previous not in kept:
            kept.append(previous)
        kept.append(paragraph)
    return "".join(p.text + "\n" for p in kept)


def _forwarded_blocks(text: str, subject: str) -> list[list[tuple[int, str]]]:
    """_forwarded_blocks_read, skipping the reading where nothing can be forwarded (a block is
    kept only under a Fwd: subject or a marker line): most mail is neither."""
    if not FORWARD_SUBJECT_RE.match(subject or "") and not FORWARD_WORDS_RE.search(text):
        return []
    return _forwarded_blocks_read(text, subject)


def _forwarded_blocks_read(text: str, subject: str) -> list[list[tuple[int, str]]]:
    """Quoted blocks of a forward (subject Fwd:, or a forward marker above the block), without
    their quote marks. A block under an attribution line ("X wrote:") is a reply's quote."""
    blocks, current, forwarded = [], None, bool(FORWARD_SUBJECT_RE.match(subject or ""))
    attributed = False
    for number, line in enumerate(text.split("\n"), 1):
        if is_quote(line):
            if current is None:
                current = []
                if forwarded and not attributed:
                    blocks.append(current)
            current.append((number, unquote_once(line)))
            continue
        current = None
        if not line.strip():
            continue
        attributed = attribution_author(line) is not None
        if FORWARD_RE.match(line):
            forwarded = True
    return blocks


def _published_tables(text: str, subject: str, own: list[tuple[int, str]]) -> list[Table]:
    table = _published_table(own)
    if table is not None:
        return [table]
    found = (_published_table(block) for block in _forwarded_blocks(text, subject))
    return [table for table in found if table is not None]


def find_tables(text: str, subject: str = "") -> list[Table]:
    lines = own_lines(text)
    published = _published_tables(text, subject, lines)
    if published:
        return published
    paragraphs = _paragraphs(text, lines)
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

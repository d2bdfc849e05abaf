"""Sweep table: loop-size headings, then one `<kernel>  time N ms` row per kernel.

    Loop to 1M:
    2.6.22\t\ttime 4015 ms
    <missed 2.6.24 here>
    2.6.24-git19\ttime 8286 ms

    2M:
    2.6.22\t\ttime 7574 ms

Each (loop size, kernel) is a result set with params {"loops": 1000000}; a `<...>` line is a
hole (warned about, nothing recorded).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .base import (
    NUMBER_RE,
    ParseError,
    Parser,
    ParseResult,
    ResultGroups,
    Warnings,
    fraction,
    head_lines,
    numbered_lines,
    parse_count,
    parse_number,
)
from .timing import COUNT

HEADING_RE = re.compile(rf"(?:loops?\s+(?:(?:to|of|=)\s*)?)?({COUNT})(?:\s*loops?)?\s*:", re.I)
HOLE_RE = re.compile(r"<([^<>]*)>")
MALFORMED_ROW_RE = re.compile(r"\S+\s+time\b", re.I)
LOOP_WORD_RE = re.compile(r"loops?\s+(?:to|of|=)", re.I)


def split_row(text: str) -> tuple[str, str] | None:
    """(kernel, time token) for `<kernel> [time[:]] N ms`; kernel names may contain blanks.

    Done on words rather than with one regex: a lazy "anything" group before the number made
    the match time explode on long junk lines.
    """
    words = text.split()
    last = words[-1].rstrip(".") if words else ""
    if last.lower() == "ms" and len(words) >= 2:
        number, rest = words[-2], words[:-2]
    elif last.lower().endswith("ms"):
        number, rest = last[:-2], words[:-1]
    else:
        return None
    if rest and rest[-1].lower().rstrip(":=") == "time":
        rest = rest[:-1]
    kernel = " ".join(rest).rstrip(":").strip()
    if not kernel or kernel.lower() == "time" or not NUMBER_RE.fullmatch(number):
        return None
    return kernel, number


class SweepParser(Parser):
    name = "sweep"
    version = 1
    description = "loop-size sweep table"

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        headings = [text for text in lines if HEADING_RE.fullmatch(text)]
        if not headings:
            return 0.0
        share = fraction(lines, lambda t: bool(
            HEADING_RE.fullmatch(t) or split_row(t) or HOLE_RE.search(t)))
        rows = sum(1 for text in lines if split_row(text))
        if not rows:
            return 0.0
        bonus = 0.1 if any(LOOP_WORD_RE.match(text) for text in headings) else 0.0
        return min(0.97, 0.5 + 0.37 * share + bonus)

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        groups = ResultGroups()
        loops = None
        for lineno, text in numbered_lines(lines, warnings):
            text = text.strip()
            heading = HEADING_RE.fullmatch(text)
            if heading:
                loops = parse_count(heading.group(1), line=lineno)
                continue
            hole = HOLE_RE.search(text)  # "<missed 2.6.24 here>", alone or after a kernel
            if hole:
                warnings.add(lineno, f"hole: {hole.group(1).strip()}")
                continue
            row = split_row(text)
            if row:
                if loops is None:
                    raise ParseError("result row before any 'Loop to N:' heading", line=lineno)
                kernel, token = row
                value = parse_number(token, line=lineno, what="time in ms")
                result_set = groups.get(lineno, benchmark="threadtest", kernel=kernel,
                                        params={"loops": loops})
                result_set.add("time_ms", value)
            elif MALFORMED_ROW_RE.match(text):
                raise ParseError("malformed sweep row, expected '<kernel>  time N ms'",
                                 line=lineno)
            else:
                warnings.add(lineno, "ignored unrecognised line")
        return self.result(groups.results(), warnings)

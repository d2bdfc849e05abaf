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
    NUMBER,
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

HEADING_RE = re.compile(rf"(?:loops?\s+(?:to|of|=)?\s*)?({COUNT})\s*(?:loops?)?\s*:", re.I)
ROW_RE = re.compile(rf"(?!time\b)(\S.*?):?\s+(?:time\s*[:=]?\s*)?({NUMBER})\s*ms\.?", re.I)
HOLE_RE = re.compile(r"<([^<>]*)>")
MALFORMED_ROW_RE = re.compile(r"\S+\s+time\b", re.I)
LOOP_WORD_RE = re.compile(r"loops?\s+(?:to|of|=)", re.I)


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
            HEADING_RE.fullmatch(t) or ROW_RE.fullmatch(t) or HOLE_RE.search(t)))
        rows = sum(1 for text in lines if ROW_RE.fullmatch(text))
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
            row = ROW_RE.fullmatch(text)
            if row:
                if loops is None:
                    raise ParseError("result row before any 'Loop to N:' heading", line=lineno)
                kernel = row.group(1)
                value = parse_number(row.group(2), line=lineno, what="time in ms")
                result_set = groups.get(lineno, benchmark="threadtest", kernel=kernel,
                                        params={"loops": loops})
                result_set.add("time_ms", value)
            elif MALFORMED_ROW_RE.match(text):
                raise ParseError("malformed sweep row, expected '<kernel>  time N ms'",
                                 line=lineno)
            else:
                warnings.add(lineno, "ignored unrecognised line")
        return self.result(groups.results(), warnings)

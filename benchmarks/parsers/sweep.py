"""Sweep table: loop-size headings, then one `<kernel>  time N ms` row per kernel.

    Loop to 1M:
    2.6.22\t\ttime 4015 ms
    <missed 2.6.24 here>
    2.6.24-git19\ttime 8286 ms

    2M:
    2.6.22\t\ttime 7574 ms

Each (loop size, kernel) is a result set with params {"loops": 1000000}; a `<...>` line is a
hole (warned about, nothing recorded). The other orientation, per-kernel sweeps, is read too:

    2.6.22.17:
    Loop to 1M: 5210 ms
    Loop to 10M: 24030 ms

Every line is read or skipped by a named rule (skips.py: mail attribution, damaged loop or
kernel heading, shell command, setup description, prose); a line holding a number none explains
refuses the input. Sure or says so: a skipped line breaks the hold of the headings above it, so
rows after it (until the next heading of the kind they need) form an UNASSIGNED block, as do rows
before any heading; a row's kernel must look like a kernel (headings.py), else the line is unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .base import (
    NUMBER_RE,
    Accounting,
    ParseError,
    Parser,
    ParseResult,
    ResultGroups,
    Warnings,
    fraction,
    head_lines,
    numbered_lines,
    parse_count,
)
from .headings import parse_heading
from .skips import ATTRIBUTION, KERNEL_HEADING, LOOP_HEADING, SETUP, SHELL, LineRules, hole
from .timing import COUNT, match_measurement, to_ms

HEADING_RE = re.compile(rf"(?:loops?\s+(?:(?:to|of|=)\s*)?)?({COUNT})(?:\s*loops?)?\s*:", re.I)
HOLE_RE = re.compile(r"<([^<>]*)>")
MALFORMED_ROW_RE = re.compile(r"\S+\s+time\b", re.I)
LOOP_WORD_RE = re.compile(r"loops?\s+(?:to|of|=)", re.I)


ROW_UNITS = ("ms", "us", "s")
RULES = LineRules(ATTRIBUTION, LOOP_HEADING, KERNEL_HEADING, SHELL, SETUP)


def split_row(text: str) -> tuple[str, str, str] | None:
    """(kernel, time token, unit) for `<kernel> [time[:]] N ms`; kernel names may contain blanks.

    Done on words rather than with one regex: a lazy "anything" group before the number made
    the match time explode on long junk lines.
    """
    words = text.split()
    last = words[-1].rstrip(".").lower() if words else ""
    if last in ROW_UNITS and len(words) >= 2:
        number, rest, unit = words[-2], words[:-2], last
    elif last.endswith(ROW_UNITS):
        unit = next(u for u in ROW_UNITS if last.endswith(u))
        number, rest = words[-1].rstrip(".")[:-len(unit)], words[:-1]
    else:
        return None
    if rest and rest[-1].lower().rstrip(":=") == "time":
        rest = rest[:-1]
    kernel = " ".join(rest).rstrip(":").strip()
    if not kernel or kernel.lower() == "time" or not NUMBER_RE.fullmatch(number):
        return None
    return kernel, number, unit


class SweepParser(Parser):
    name = "sweep"
    version = 2
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
        accounting = Accounting(self.description)
        state = _Context()
        for lineno, text in numbered_lines(lines, warnings):
            self._feed(text.strip(), lineno, state, groups, warnings, accounting)
        accounting.check()
        return self.result(groups.results(), warnings)

    def _feed(self, text, lineno, state, groups, warnings, accounting) -> None:
        heading = HEADING_RE.fullmatch(text)
        if heading:
            state.set("loops", parse_count(heading.group(1), line=lineno), lineno)
            return
        missed = hole(text)  # "<missed 2.6.24 here>", alone or after a kernel
        if missed is not None:
            warnings.add(lineno, f"hole: {missed}")
            return
        found = match_measurement(text, lineno)
        if found is not None and found.kind == "loops":  # "Loop to 1M: 5210 ms" under a kernel
            state.add(groups, lineno, found.samples[0][1], loops=found.loops)
            return
        kernel = parse_heading(text)
        if kernel:
            state.set("kernel", kernel, lineno)
            return
        row = split_row(text)
        row_kernel = parse_heading(row[0]) if row else None
        if row and row_kernel:
            value = to_ms(row[1], row[2], lineno)
            state.add(groups, lineno, value, kernel=row_kernel)
        elif MALFORMED_ROW_RE.match(text) and parse_heading(text.split()[0]):
            raise ParseError("malformed sweep row, expected '<kernel>  time N ms'",
                             line=lineno)
        else:
            # Skipped by a named rule or unexplained (refused at the end): the headings above
            # no longer surely hold for the rows after it.
            state.lose()
            RULES.skip(lineno, text, warnings, accounting)


class _Context:
    """The loop size and kernel the headings above set, and whether they still surely hold."""

    def __init__(self):
        self.values: dict[str, Any] = {"loops": None, "kernel": None}
        self.lines: dict[str, int | None] = {"loops": None, "kernel": None}
        self.lost = {"loops": False, "kernel": False}
        self.block: int | None = None

    def set(self, what: str, value, lineno: int) -> None:
        self.values[what], self.lines[what], self.lost[what] = value, lineno, False
        self.block = None

    def lose(self) -> None:
        for what, value in self.values.items():
            if value is not None:
                self.lost[what] = True
        self.block = None

    def add(self, groups, lineno: int, value, *, loops=None, kernel=None) -> None:
        """One time_ms sample; what the row does not say itself comes from the headings."""
        missing: list[str] = []
        if loops is None:
            loops = self._held("loops", missing, "param.loops")
        if kernel is None:
            kernel = self._held("kernel", missing, "kernel")
            kernel_line = self.lines["kernel"]
        else:
            kernel_line = lineno
        block = None
        if missing:
            self.block = self.block or lineno
            block, kernel_line = self.block, (None if "kernel" in missing else kernel_line)
        result_set = groups.get(
            lineno, benchmark="threadtest", kernel=kernel.kernel if kernel else None,
            params={} if loops is None else {"loops": loops},
            labels={"remark": kernel.remark} if kernel and kernel.remark else {},
            missing=missing, kernel_line=kernel_line, block=block)
        result_set.add("time_ms", value)

    def _held(self, what: str, missing: list, name: str):
        if self.values[what] is None or self.lost[what]:
            missing.append(name)
            return None
        return self.values[what]

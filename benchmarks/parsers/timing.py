"""Grammar of the one-line results threadtest-style programs print, shared by several parsers.

    time 5210 ms                                          -> time_ms
    10000000 loops time 14321 ms                          -> time_ms, params loops
    2.6.30: 1234 ms                                       -> time_ms, kernel
    time: 10612345 (us)  work: 20000000  wait: 201234  idx: 1.88   -> burn metrics
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from .base import (
    KERNEL,
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

COUNT = r"\d+(?:\.\d+)?(?:\s*[kKmMgG])?"
# "time 5", "time: 5", "time=5". Written as alternatives, never `\s*[:=]?\s*`: two optional
# blank runs side by side backtrack quadratically on a long run of blanks.
SEP = r"(?:\s*[:=]\s*|\s*)"
COMMA = r"(?:\s*,\s*|\s*)"

TIME_RE = re.compile(rf"time{SEP}({NUMBER})\s*ms\.?", re.I)
LOOPS_RE = re.compile(
    rf"({COUNT})\s+loops?(?:\s*[:,]\s*|\s*)time{SEP}({NUMBER})\s*ms\.?", re.I)
KERNEL_TIME_RE = re.compile(rf"({KERNEL})\s*:\s*(?:time{SEP})?({NUMBER})\s*ms\.?", re.I)
BURN_RE = re.compile(
    rf"time\s*:\s*({NUMBER})\s*\(us\){COMMA}work\s*:\s*({NUMBER}){COMMA}"
    rf"wait\s*:\s*({NUMBER}){COMMA}idx\s*:\s*({NUMBER})",
    re.I,
)
# "100 x 100 ms" or "10 x 1s:" heading a burn sweep block: iterations x burn time per thread.
BURN_SETUP_RE = re.compile(rf"({COUNT})\s*[x*\u00d7]\s*({NUMBER})\s*(s|ms|us)\s*:?", re.I)
# Something that wants to be a result line but is not well formed: an error, not a warning.
NEAR_MISS_RE = re.compile(rf"(time\b{SEP}\S|{COUNT}\s+loops?\b|{KERNEL}\s*:.*\bms\b)", re.I)

BURN_METRICS = ("time_us", "work_us", "wait_us", "idx")
_TO_US = {"s": 1_000_000, "ms": 1_000, "us": 1}


class Measurement(NamedTuple):  # a NamedTuple: cheap to build once per line
    kind: str  # "time", "loops", "kernel", "burn"
    benchmark: str
    samples: tuple[tuple[str, int | float], ...]
    loops: int | float | None = None
    kernel: str | None = None


def match_measurement(text: str, lineno: int | None = None) -> Measurement | None:
    """The measurement on a stripped line, or None if the line is not a result line."""
    match = TIME_RE.fullmatch(text)  # the most common line first
    if match:
        return Measurement("time", "threadtest", _time_sample(match.group(1), lineno))
    match = BURN_RE.fullmatch(text)
    if match:
        values = [parse_number(group, line=lineno) for group in match.groups()]
        return Measurement("burn", "threadtest-burn", tuple(zip(BURN_METRICS, values, strict=True)))
    match = LOOPS_RE.fullmatch(text)
    if match:
        loops = parse_count(match.group(1), line=lineno)
        return Measurement("loops", "threadtest", _time_sample(match.group(2), lineno), loops=loops)
    match = KERNEL_TIME_RE.fullmatch(text)
    if match:
        return Measurement("kernel", "threadtest", _time_sample(match.group(2), lineno),
                           kernel=match.group(1))
    return None


def _time_sample(token: str, lineno: int | None) -> tuple[tuple[str, int | float], ...]:
    value = int(token) if token.isdigit() else parse_number(token, line=lineno, what="time in ms")
    return (("time_ms", value),)


def near_miss(text: str) -> bool:
    return NEAR_MISS_RE.match(text) is not None


def burn_setup(text: str, lineno: int) -> dict | None:
    """Params from a burn sweep heading such as "100 x 100 ms:", else None."""
    match = BURN_SETUP_RE.fullmatch(text)
    if not match:
        return None
    iterations = parse_count(match.group(1), line=lineno)
    burn_us = parse_number(match.group(2), line=lineno) * _TO_US[match.group(3).lower()]
    if isinstance(burn_us, float) and burn_us.is_integer():
        burn_us = int(burn_us)
    return {"iterations": iterations, "burn_us": burn_us}


def measurement_setup(found: Measurement, params: dict) -> dict:
    """Keyword arguments for ResultGroups.get describing a measurement's setup."""
    merged = dict(params)
    if found.loops is not None:
        merged["loops"] = found.loops
    return {"benchmark": found.benchmark, "kernel": found.kernel, "params": merged}


def add_samples(result_set, found: Measurement) -> None:
    for metric, value in found.samples:
        result_set.add(metric, value)


class TimingLinesParser(Parser):
    """A file of one kind of result line; other lines are warned about and skipped."""

    kind = ""
    example = ""

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        share = fraction(lines, self._is_own_line)
        return 0.9 * share if share else 0.0

    def _is_own_line(self, text: str) -> bool:
        try:
            found = match_measurement(text)
        except ParseError:
            return False
        return found is not None and found.kind == self.kind

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        groups = ResultGroups()
        params: dict = {}
        # (loops, kernel) -> result set for the current params: skips building the setup dict
        # for every one of possibly millions of lines.
        current: dict = {}
        for lineno, text in numbered_lines(lines, warnings):
            text = text.strip()
            found = match_measurement(text, lineno)
            if found is not None and found.kind == self.kind:
                result_set = current.get((found.loops, found.kernel))
                if result_set is None:
                    result_set = groups.get(lineno, **measurement_setup(found, params))
                    current[(found.loops, found.kernel)] = result_set
                add_samples(result_set, found)
                continue
            setup = self.setup_line(text, lineno)
            if setup is not None:
                params = setup
                current = {}
            elif found is not None or near_miss(text):
                raise ParseError(f"expected a line like {self.example!r}", line=lineno)
            else:
                warnings.add(lineno, "ignored unrecognised line")
        return self.result(groups.results(), warnings)

    def setup_line(self, text: str, lineno: int) -> dict | None:
        """Params announced by a heading line, for parsers whose files have headings."""
        return None

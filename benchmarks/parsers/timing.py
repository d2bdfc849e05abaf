"""Grammar of the one-line results threadtest-style programs print, shared by several parsers.

    time 5210 ms                                          -> time_ms
    10000000 loops time 14321 ms                          -> time_ms, params loops
    Loop to 1M: 5210 ms                                   -> time_ms, params loops
    2.6.30: 1234 ms                                       -> time_ms, kernel
    2.6.24-rc7 + sched-devel (2nd try): 1234 ms           -> time_ms, kernel, remark
    time: 10612345 (us)  work: 20000000  wait: 201234  idx: 1.88   -> burn metrics

Times may be given in s, ms or us (`time 5.21 s`, `1M: 5210000 us`); they are stored as time_ms,
converted exactly in decimal so 5.21 s is 5210 ms, not 5210.000000000001.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal
from typing import NamedTuple

from .base import (
    KERNEL,
    NUMBER,
    Accounting,
    ParseError,
    Parser,
    ParseResult,
    ResultGroups,
    ResultSet,
    Warnings,
    fraction,
    head_lines,
    numbered_lines,
    parse_count,
    parse_number,
)
from .headings import MAX_KERNEL, parse_heading, too_long_heading
from .skips import ATTRIBUTION, SETUP, SHELL, LineRules

COUNT = r"\d+(?:\.\d+)?(?:\s*[kKmMgG])?"
# "time 5", "time: 5", "time=5". Written as alternatives, never `\s*[:=]?\s*`: two optional
# blank runs side by side backtrack quadratically on a long run of blanks.
SEP = r"(?:\s*[:=]\s*|\s*)"
COMMA = r"(?:\s*,\s*|\s*)"

# Time units people print, to milliseconds. "(ms)" with parentheses is a burn-line habit.
UNIT = (r"(?:\(\s*)?(ms|msecs?|milliseconds?|s|secs?|seconds?|us|usecs?|microseconds?|\u00b5s)"
        r"(?:\s*\))?")
_TO_MS: dict[str, int | Decimal] = {
    "ms": 1, "msec": 1, "msecs": 1, "millisecond": 1, "milliseconds": 1,
    "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
    "us": Decimal("0.001"), "usec": Decimal("0.001"), "usecs": Decimal("0.001"),
    "microsecond": Decimal("0.001"), "microseconds": Decimal("0.001"),
    "\u00b5s": Decimal("0.001")}
TIME_RE = re.compile(rf"time{SEP}({NUMBER})\s*{UNIT}\.?", re.I)
LOOPS_RE = re.compile(
    rf"({COUNT})\s+loops?(?:\s*[:,]\s*|\s*)time{SEP}({NUMBER})\s*{UNIT}\.?", re.I)
# "Loop to 1M: 5210 ms", "Loops of 10k: 40 ms", "1M loops: 4015 ms", "1M: 4015 ms". A bare
# number without a suffix ("10: 40 ms") is more likely a run number than a loop count.
LOOP_TO_RE = re.compile(
    rf"(?:loops?\s+(?:(?:to|of|=)\s*)?({COUNT})|({COUNT})\s*loops?|(\d+(?:\.\d+)?\s*[kKmMgG]))"
    rf"\s*:\s*(?:time{SEP})?({NUMBER})\s*{UNIT}\.?", re.I)
# The end of "<kernel heading>: [time] N ms"; what is before the colon must be a heading.
KERNEL_TIME_TAIL_RE = re.compile(rf":\s*(?:time{SEP})?({NUMBER})\s*{UNIT}\.?$", re.I)
BURN_RE = re.compile(
    rf"time\s*:\s*({NUMBER})\s*\(us\){COMMA}work\s*:\s*({NUMBER}){COMMA}"
    rf"wait\s*:\s*({NUMBER}){COMMA}idx\s*:\s*({NUMBER})",
    re.I,
)
# "100 x 100 ms" or "10 x 1s:" heading a burn sweep block: iterations x burn time per thread.
BURN_SETUP_RE = re.compile(rf"({COUNT})\s*[x*\u00d7]\s*({NUMBER})\s*(s|ms|us)\s*:?", re.I)
# Something that wants to be a result line but is not well formed: an error, not a warning.
NEAR_MISS_RE = re.compile(
    rf"(time\b{SEP}\S|{COUNT}\s+loops?\b|{KERNEL}\s*:.*\bms\b|loops?\s+(?:to|of)\s+{COUNT}\s*:\s*\S)",
    re.I)
# "<missed 2.6.24 here>", "Loop to 10M: <crashed>": a hole, nothing measured there.
HOLE_RE = re.compile(r"<([^<>]*)>")

BURN_METRICS = ("time_us", "work_us", "wait_us", "idx")
_TO_US = {"s": 1_000_000, "ms": 1_000, "us": 1}


class Measurement(NamedTuple):  # a NamedTuple: cheap to build once per line
    kind: str  # "time", "loops", "kernel", "burn"
    benchmark: str
    samples: tuple[tuple[str, int | float], ...]
    loops: int | float | None = None
    kernel: str | None = None
    remark: str | None = None


def match_measurement(text: str, lineno: int | None = None) -> Measurement | None:
    """The measurement on a stripped line, or None if the line is not a result line."""
    match = TIME_RE.fullmatch(text)  # the most common line first
    if match:
        return Measurement("time", "threadtest", _time_sample(match, lineno))
    match = BURN_RE.fullmatch(text)
    if match:
        values = [parse_number(group, line=lineno) for group in match.groups()]
        return Measurement("burn", "threadtest-burn", tuple(zip(BURN_METRICS, values, strict=True)))
    match = LOOPS_RE.fullmatch(text)
    if match:
        loops = parse_count(match.group(1), line=lineno)
        return Measurement("loops", "threadtest", _time_sample(match, lineno, 2), loops=loops)
    match = LOOP_TO_RE.fullmatch(text)
    if match:
        count = match.group(1) or match.group(2) or match.group(3)
        return Measurement("loops", "threadtest", _time_sample(match, lineno, 4),
                           loops=parse_count(count, line=lineno))
    return _kernel_measurement(text, lineno)


def _kernel_measurement(text: str, lineno: int | None) -> Measurement | None:
    if ":" not in text:
        return None
    match = KERNEL_TIME_TAIL_RE.search(text)
    if not match:
        return None
    heading = parse_heading(text[:match.start()])
    if heading is None:
        return None
    return Measurement("kernel", "threadtest", _time_sample(match, lineno),
                       kernel=heading.kernel, remark=heading.remark)


def _time_sample(match, lineno: int | None, group: int = 1) -> tuple[tuple[str, int | float], ...]:
    return (("time_ms", to_ms(match.group(group), match.group(group + 1), lineno)),)


def to_ms(token: str, unit: str, lineno: int | None = None) -> int | float:
    """A time in milliseconds, converted in decimal so no binary rounding creeps in."""
    factor = _TO_MS[unit.lower()]
    if factor == 1:
        return int(token) if token.isdigit() else parse_number(token, line=lineno,
                                                                what="time in ms")
    parse_number(token, line=lineno, what="time")  # refuses nan, inf and junk first
    value = Decimal(token) * factor
    return int(value) if value == value.to_integral_value() else float(value)


BURN_FIELD_RE = re.compile(rf"\b(?:time|work|wait|idx)\s*[:=]\s*{NUMBER}", re.I)


def burn_like(text: str) -> bool:
    """A value the burn format would read: one of its fields, or a sweep heading's `N x D`."""
    return BURN_FIELD_RE.search(text) is not None or BURN_SETUP_RE.search(text) is not None


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
    setup = {"benchmark": found.benchmark, "kernel": found.kernel, "params": merged}
    if found.remark:
        setup["labels"] = {"remark": found.remark}
    return setup


def add_samples(result_set, found: Measurement) -> None:
    for metric, value in found.samples:
        result_set.add(metric, value)


class TimingLinesParser(Parser):
    """A file of one kind of result line; any other line is skipped by a rule the format names
    (skips.py), with a warning, or refuses the input when it holds a number none explains."""

    kind = ""
    example = ""
    rules = LineRules(ATTRIBUTION, SHELL, SETUP)

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
        accounting = Accounting(self.description)
        params: dict = {}
        # (loops, kernel) -> result set for the current params: skips building the setup dict
        # for every one of possibly millions of lines.
        current: dict = {}
        # After an unknown line the heading's params no longer surely hold: the values that
        # follow (until the next heading) are an unassigned block starting at `unsure_from`.
        unsure, unsure_from = False, None
        for lineno, text in numbered_lines(lines, warnings):
            text = text.strip()
            found = match_measurement(text, lineno)
            if found is not None and found.kind == self.kind:
                if unsure:
                    unsure_from = unsure_from or lineno
                    result_set: ResultSet | None = groups.get(lineno,
                                                              **measurement_setup(found, {}),
                                            missing=[f"param.{name}" for name in params],
                                            block=unsure_from)
                    add_samples(result_set, found)
                    continue
                result_set = current.get((found.loops, found.kernel))
                if result_set is None:
                    result_set = groups.get(lineno, **measurement_setup(found, params),
                                            kernel_line=lineno if found.kernel else None)
                    current[(found.loops, found.kernel)] = result_set
                else:
                    result_set.touch(lineno)
                add_samples(result_set, found)
                continue
            setup = self.setup_line(text, lineno)
            if setup is not None:
                params, current, unsure, unsure_from = setup, {}, False, None
            elif found is not None or near_miss(text):
                raise ParseError(f"expected a line like {self.example!r}", line=lineno)
            elif (length := too_long_heading(text)) is not None:
                # a kernel heading, too long to store: say so here, not "no kernel" later
                raise ParseError(f"this kernel heading names a kernel of {length:,} characters; a "
                                 f"kernel name has at most {MAX_KERNEL}", line=lineno)
            else:
                # Skipped by a named rule or unexplained (refused below): either way the
                # heading's params no longer surely hold for the values after it.
                self.rules.skip(lineno, text, warnings, accounting)
                if params:
                    unsure, unsure_from = True, None
        accounting.check()
        return self.result(groups.results(), warnings)

    def setup_line(self, text: str, lineno: int) -> dict | None:
        """Params announced by a heading line, for parsers whose files have headings."""
        return None

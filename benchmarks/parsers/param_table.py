"""Two-column tables: a setup knob and a measurement, as in schedule() cost posts.

    2.4.36
    runqueue length    microseconds
    1                  0.41
    2                  0.44

The first column becomes a param named from the header (`runqueue_length`); the second a metric
named from the header (`microseconds` after a runqueue length -> `schedule_us`, `time (ms)` ->
`time_ms`). A `uname -r` line sets the kernel for the table after it. Any other line is skipped
by a named rule (skips.py: mail attribution, shell command, setup description, prose) or, holding
a number none explains, refuses the input.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .base import (
    Accounting,
    ParseError,
    Parser,
    ParseResult,
    ResultGroups,
    Warnings,
    head_lines,
    is_number,
    is_uname,
    numbered_lines,
    parse_number,
    slug,
)
from .skips import ATTRIBUTION, SETUP, SHELL, LineRules, reads_cells

UNIT_WORDS = {
    "us": {"microseconds", "microsecond", "usec", "usecs", "us", "\u00b5s"},
    "ms": {"milliseconds", "millisecond", "msec", "msecs", "ms"},
    "ns": {"nanoseconds", "nanosecond", "nsec", "nsecs", "ns"},
    "s": {"seconds", "second", "sec", "secs", "s"},
}
UNIT_IN_PARENS_RE = re.compile(r"(.*?)\s*\(\s*([^)]*)\)\s*")
RULES = LineRules(ATTRIBUTION, SHELL, SETUP, result_like=reads_cells)


def split_header(text: str) -> list[str] | None:
    names = [name for name in re.split(r"\s{2,}|\t", text.strip()) if name]
    if len(names) == 1:  # "nr_running usec": single-spaced, so only one word per column
        names = text.split()
    if len(names) == 2 and not any(is_number(name) for name in names):
        return names
    return None


def is_pair(text: str) -> bool:
    tokens = text.split()
    return len(tokens) == 2 and all(is_number(token) for token in tokens)


def unit_of(word: str) -> str | None:
    for unit, words in UNIT_WORDS.items():
        if word.strip().lower() in words:
            return unit
    return None


def metric_name(header: str, param: str) -> str:
    unit = unit_of(header)
    if unit:
        base = "schedule" if param.startswith(("runqueue", "nr_running")) else "value"
        return f"{base}_{unit}"
    match = UNIT_IN_PARENS_RE.fullmatch(header)
    if match and unit_of(match.group(2)):
        return f"{slug(match.group(1)) or 'value'}_{unit_of(match.group(2))}"
    return slug(header) or "value"


class ParamTableParser(Parser):
    name = "param-table"
    version = 1
    description = "two-column table (param, measurement)"

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        headers = sum(1 for text in lines if split_header(text))
        pairs = sum(1 for text in lines if is_pair(text))
        if not headers or not pairs:
            return 0.0
        kernels = sum(1 for text in lines if is_uname(text.rstrip(":")))
        return 0.5 + 0.45 * (headers + pairs + kernels) / len(lines)

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        groups = ResultGroups()
        accounting = Accounting(self.description)
        kernel = None
        names: tuple[str, str] | None = None
        for lineno, text in numbered_lines(lines, warnings):
            text = text.strip()
            if is_uname(text.rstrip(":")):
                kernel = text.rstrip(":")
            elif header := split_header(text):
                param = slug(header[0]) or "x"
                names = (param, metric_name(header[1], param))
            elif is_pair(text):
                if names is None:
                    raise ParseError("table row before the header naming its columns",
                                     line=lineno)
                self._row(text, names, kernel, groups, lineno)
            elif text.split() and is_number(text.split()[0]):
                raise ParseError("expected two numbers on a table row", line=lineno)
            else:
                RULES.skip(lineno, text, warnings, accounting)  # else refused below
        accounting.check()
        return self.result(groups.results(), warnings)

    @staticmethod
    def _row(text, names, kernel, groups, lineno) -> None:
        param, metric = names
        x, y = (parse_number(token, line=lineno) for token in text.split())
        benchmark = "runqueue-cost" if param.startswith(("runqueue", "nr_running")) else None
        result = groups.get(lineno, benchmark=benchmark, kernel=kernel, params={param: x})
        result.add(metric, y)

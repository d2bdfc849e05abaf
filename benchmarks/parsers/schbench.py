"""schbench latency percentiles, old and new layouts.

    Wakeup Latencies percentiles (usec) runtime 30 (s) (104372 total samples)
    \t  50.0th: 7          (31224 samples)
    \t* 99.0th: 20         (4100 samples)
    \t  min=1, max=1234
    Request Latencies percentiles (usec) runtime 30 (s) (104000 total samples)
    ...
    RPS percentiles (requests) runtime 30 (s) (31 total samples)
    \t* 50.0th: 3468       (12 samples)
    average rps: 3467.20

Metrics: `<section>p<percentile>_us` (wakeup_p99_us, request_p99_9_us; the old single
"Latency percentiles" section has no prefix: p99_us), `<section>min_us`, `<section>max_us`,
rps_p50 and average_rps (per second). A section printed again (periodic reports, or several
runs pasted together) adds samples to the same metrics.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .base import (
    NUMBER,
    ParseError,
    Parser,
    ParseResult,
    ResultSet,
    Warnings,
    head_lines,
    numbered_lines,
    parse_number,
    slug,
)

TITLE_RE = re.compile(r"[\w ]*")
AFTER_TITLE_RE = re.compile(r"\s*\((?P<unit>[^)]*)\)(?P<rest>.*)")
PERCENTILE_RE = re.compile(rf"\*?\s*(\d+(?:\.\d+)?)th\s*:\s*({NUMBER})(?:\s*\(.*\))?")
MIN_MAX_RE = re.compile(rf"min\s*=\s*({NUMBER})\s*,\s*max\s*=\s*({NUMBER})")
AVERAGE_RPS_RE = re.compile(rf"average rps\s*:\s*({NUMBER})", re.I)
RUNTIME_RE = re.compile(r"runtime\s+(\d+)\s*\(s\)")


def section_of(text: str) -> tuple[str, str, str] | None:
    """(title, unit, rest) of "Wakeup Latencies percentiles (usec) runtime 30 (s) ...".

    Split on the keyword with str methods: a lazy title group followed by optional blanks made
    the regex backtrack quadratically on long lines of blanks.
    """
    index = text.lower().find("percentiles")
    if index < 0 or not TITLE_RE.fullmatch(text[:index]):
        return None
    after = AFTER_TITLE_RE.match(text, index + len("percentiles"))
    if after is None:
        return None
    return text[:index].strip(), after.group("unit"), after.group("rest")


def section_names(title: str, unit: str) -> tuple[str, str, str, bool]:
    """(metric prefix, metric suffix, unit, higher_is_better) for a percentile section."""
    prefix = slug(re.sub(r"latenc(y|ies)", "", title, flags=re.I))
    prefix = f"{prefix}_" if prefix else ""
    if unit.strip().lower() in ("usec", "us", "usecs"):
        return prefix, "_us", "us", False
    if prefix == "rps_":
        return prefix, "", "1/s", True
    return prefix, "", unit.strip(), False


def percentile_name(text: str) -> str:
    value = float(text)
    return f"p{int(value)}" if value.is_integer() else "p" + f"{value:g}".replace(".", "_")


class SchbenchParser(Parser):
    name = "schbench"
    version = 1
    description = "schbench latency percentiles"

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        if not any(section_of(text) for text in lines):
            return 0.0
        if any(PERCENTILE_RE.fullmatch(text) for text in lines):
            return 0.97
        return 0.4

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        result = ResultSet(benchmark="schbench")
        section = None
        for lineno, text in numbered_lines(lines, warnings):
            text = text.strip()
            if found := section_of(text):
                title, unit, rest = found
                section = section_names(title, unit)
                self._runtime(result, rest, lineno)
            elif match := AVERAGE_RPS_RE.fullmatch(text):
                result.add("average_rps", parse_number(match.group(1), line=lineno), "1/s", True)
            elif match := PERCENTILE_RE.fullmatch(text):
                self._add(result, section, percentile_name(match.group(1)), match.group(2),
                          lineno)
            elif match := MIN_MAX_RE.fullmatch(text):
                self._add(result, section, "min", match.group(1), lineno)
                self._add(result, section, "max", match.group(2), lineno)
        return self.result([result], warnings)

    @staticmethod
    def _runtime(result: ResultSet, rest: str, lineno: int) -> None:
        if not result.line:
            result.line = lineno
        match = RUNTIME_RE.search(rest)
        if match and "runtime_s" not in result.params:
            result.params["runtime_s"] = int(match.group(1))

    @staticmethod
    def _add(result: ResultSet, section, name: str, token: str, lineno: int) -> None:
        if section is None:
            raise ParseError("percentile line before any 'percentiles' heading", line=lineno)
        prefix, suffix, unit, higher = section
        result.add(f"{prefix}{name}{suffix}", parse_number(token, line=lineno), unit, higher)

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
rps_p50 and average_rps (per second); params runtime_s (of the final report) and worker_threads.
Each run's final block (the one right before `average rps`) is one sample; the interim reports
before it are skipped. Several runs pasted together add samples to the same metrics.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .base import (
    NUMBER,
    Accounting,
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
WORKERS_RE = re.compile(r"setting worker threads to (\d+)", re.I)


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


class _Iteration:
    """The report blocks of one schbench run, the last one being its final report."""

    def __init__(self):
        self.blocks: list[list[tuple]] = []
        self.titles: set[str] = set()

    def section(self, title: str) -> None:
        if not self.blocks or title in self.titles:  # a title seen again opens a new report
            self.blocks.append([])
            self.titles = set()
        self.titles.add(title)

    def add(self, item: tuple) -> None:
        self.blocks[-1].append(item)


class SchbenchParser(Parser):
    name = "schbench"
    version = 2
    description = "schbench latency percentiles"

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        if not any(section_of(text) for text in lines):
            return 0.0
        if any(PERCENTILE_RE.fullmatch(text) for text in lines):
            return 0.97
        return 0.4

    def parse(self, lines: Iterable[str]) -> ParseResult:
        """schbench prints a report every interval (`runtime 10 (s)`, `runtime 20 (s)`...) and
        the final one just before `average rps`: only that final block is read, once per run.
        Output without `average rps` (old schbench: one report at the end) reads every block."""
        warnings = Warnings()
        accounting = Accounting(self.description)
        result = ResultSet(benchmark="schbench")
        current, section, finished = _Iteration(), None, False
        for lineno, text in numbered_lines(lines, warnings):
            text = text.strip()
            if found := section_of(text):
                title, unit, rest = found
                section = section_names(title, unit)
                current.section(title)
                current.add(("runtime", rest, lineno))
            elif match := AVERAGE_RPS_RE.fullmatch(text):
                self._commit(result, current.blocks[-1:], lineno)
                result.add("average_rps", parse_number(match.group(1), line=lineno), "1/s", True)
                current, section, finished = _Iteration(), None, True
            elif match := PERCENTILE_RE.fullmatch(text):
                self._item(current, section, percentile_name(match.group(1)), match.group(2),
                           lineno)
            elif match := MIN_MAX_RE.fullmatch(text):
                self._item(current, section, "min", match.group(1), lineno)
                self._item(current, section, "max", match.group(2), lineno)
            elif match := WORKERS_RE.fullmatch(text):
                result.params["worker_threads"] = int(match.group(1))
            else:
                accounting.unknown(lineno, text)
        accounting.check()
        if not finished:
            self._commit(result, current.blocks, None)
        elif current.blocks:
            warnings.add(None, "skipped interim reports after the last 'average rps' (a run "
                         "that did not finish)")
        return self.result([result], warnings)

    @staticmethod
    def _item(current: _Iteration, section, name: str, token: str, lineno: int) -> None:
        if section is None or not current.blocks:
            raise ParseError("percentile line before any 'percentiles' heading", line=lineno)
        current.add((section, name, token, lineno))

    @classmethod
    def _commit(cls, result: ResultSet, blocks: list[list[tuple]], closing: int | None) -> None:
        for block in blocks:
            for item in block:
                if item[0] == "runtime":
                    cls._runtime(result, item[1], item[2])
                    continue
                (prefix, suffix, unit, higher), name, token, lineno = item
                result.touch(lineno)
                result.add(f"{prefix}{name}{suffix}", parse_number(token, line=lineno), unit,
                           higher)
        if closing:
            result.touch(closing)

    @staticmethod
    def _runtime(result: ResultSet, rest: str, lineno: int) -> None:
        if not result.line:
            result.line = lineno
        result.touch(lineno)
        match = RUNTIME_RE.search(rest)
        if match:
            runtime = int(match.group(1))
            if result.params.setdefault("runtime_s", runtime) != runtime:
                raise ParseError(f"final report of {runtime} s after one of "
                                 f"{result.params['runtime_s']} s: runs of different lengths "
                                 "are different setups; upload them separately", line=lineno)

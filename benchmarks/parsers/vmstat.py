"""vmstat output, possibly several blocks each under a heading naming the kernel or setup.

    2.6.24, volanomark 10 rooms
    procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
     r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
    212 0      0 812344  10232 301244    0    0     0     4 1041 998123 62 38  0  0  0

The banner and header are optional; without a header the columns are assumed from the row
width (16: no `st`, 17: standard, 18: a leading time column). A header may start with a
`Time (sec)` column, stored as `time_s`. Each block becomes a result set with benchmark
"vmstat", series["vmstat"] = {"columns", "rows"}, and a few per-row metrics (see COLUMN_METRICS).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .base import (
    ParseError,
    Parser,
    ParseResult,
    ResultSet,
    Warnings,
    find_kernel,
    head_lines,
    is_number,
    numbered_lines,
    parse_number,
)

HEADING_LINES = 3
STANDARD_COLUMNS = ["r", "b", "swpd", "free", "buff", "cache", "si", "so", "bi", "bo",
                    "in", "cs", "us", "sy", "id", "wa", "st"]
BANNER_RE = re.compile(r"(?:[-\s]*time[-\s]+)?procs\s+-{2,}.*", re.I)

DATE_RE = re.compile(r"\d{4}-\d\d-\d\d")
CLOCK_RE = re.compile(r"\d\d:\d\d:\d\d")
TIMEZONE_RE = re.compile(r"[A-Z]{2,5}")
TIME_COLUMN_RE = re.compile(r"time\s*\(\s*(?:sec|s)\s*\)|time", re.I)
# Columns worth charting on their own: vmstat column -> (metric, unit, higher_is_better).
COLUMN_METRICS = {
    "r": ("runnable", "tasks", False),
    "cs": ("cs_per_s", "1/s", True),
    "id": ("idle_pct", "%", False),
}


def header_columns(text: str) -> list[str] | None:
    """Column names if `text` is a vmstat header row, else None."""
    text = TIME_COLUMN_RE.sub(" time_s ", text, count=1) if text.lower().startswith("time") \
        else text
    tokens = text.split()
    if tokens and TIMEZONE_RE.fullmatch(tokens[-1]):  # `vmstat -t`: timestamp stripped too
        tokens = tokens[:-1]
    if {"r", "b"} <= set(tokens) and ({"cs", "swpd"} & set(tokens)):
        return tokens
    return None


def without_timestamp(text: str) -> str:
    """A `vmstat -t` row minus its trailing date and time (kept out of the numeric series)."""
    words = text.rsplit(None, 2)
    if len(words) == 3 and DATE_RE.fullmatch(words[1]) and CLOCK_RE.fullmatch(words[2]):
        return words[0]
    return text


def is_row(text: str) -> bool:
    tokens = without_timestamp(text).split()
    return 10 <= len(tokens) <= 20 and all(is_number(token) for token in tokens)


def default_columns(width: int, lineno: int) -> list[str]:
    if width == len(STANDARD_COLUMNS):
        return list(STANDARD_COLUMNS)
    if width == len(STANDARD_COLUMNS) - 1:
        return STANDARD_COLUMNS[:-1]
    if width == len(STANDARD_COLUMNS) + 1:
        return ["time_s", *STANDARD_COLUMNS]
    raise ParseError(f"vmstat row with {width} columns and no header row", line=lineno)


class _Block:
    def __init__(self, heading: list[tuple[int, str]], lineno: int):
        self.heading = " / ".join(text for _, text in heading)
        self.line = heading[0][0] if heading else lineno
        self.columns: list[str] | None = None
        self.rows: list[list] = []

    def to_result(self) -> ResultSet:
        result = ResultSet(benchmark="vmstat", kernel=find_kernel(self.heading), line=self.line,
                           series={"vmstat": {"columns": self.columns, "rows": self.rows}})
        if self.heading:
            result.labels["heading"] = self.heading
        columns = self.columns or []  # no header and no row: nothing to read
        for column, (metric, unit, higher) in COLUMN_METRICS.items():
            if column in columns:
                index = columns.index(column)
                for row in self.rows:
                    result.add(metric, row[index], unit, higher)
        return result


class VmstatParser(Parser):
    name = "vmstat"
    version = 1
    description = "vmstat output"

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        rows = sum(1 for text in lines if is_row(text))
        if not rows:
            return 0.0
        if any(BANNER_RE.fullmatch(t) or header_columns(t) for t in lines):
            return 0.97
        return 0.3 + 0.4 * rows / len(lines)

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        results: list[ResultSet] = []
        heading: list[tuple[int, str]] = []
        block: _Block | None = None
        for lineno, text in numbered_lines(lines, warnings):
            text = without_timestamp(text.strip())
            if BANNER_RE.fullmatch(text):
                continue
            columns = header_columns(text)
            if columns is not None and block is not None and block.rows \
                    and columns != block.columns:  # a different header starts a new block
                results.append(block.to_result())
                block = None
            # Inside a block any all-number line is a row, so a truncated one is an error.
            inside_row = block is not None and all(is_number(t) for t in text.split())
            if columns is not None or inside_row or is_row(text):
                if block is None:
                    block = _Block(heading, lineno)
                    heading = []
                self._feed(block, columns, text, lineno)
                continue
            if block is not None:  # a heading after rows closes the block
                results.append(block.to_result())
                block = None
            # Only the last few lines before a block name it; older ones are chatter.
            heading = [*heading[-(HEADING_LINES - 1):], (lineno, text)]
        if block is not None:
            results.append(block.to_result())
        return self.result([r for r in results if r.series["vmstat"]["rows"]], warnings)

    @staticmethod
    def _feed(block: _Block, columns: list[str] | None, text: str, lineno: int) -> None:
        if columns is not None:
            block.columns = columns
            return
        values = [parse_number(token, line=lineno) for token in text.split()]
        if block.columns is None:
            block.columns = default_columns(len(values), lineno)
        if len(values) != len(block.columns):
            raise ParseError(f"vmstat row has {len(values)} values, header has "
                             f"{len(block.columns)} columns", line=lineno)
        block.rows.append(values)

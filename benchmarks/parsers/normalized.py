"""Tables normalised to a baseline, as posted in patch threads.

                              tip     tip + patch
    hackbench                 1       0.955 (4.5% degradation)
    sysbench [threads=64]     1       0.91  (9% degradation)

The header names the columns (split on runs of two or more blanks or tabs). Each row is a
benchmark name, an optional `[note]`, one value per column and an optional trailing `(note)`.
One result set per (row, column): benchmark = the row's name, kernel and labels["column"] = the
column name, metric "normalized". `-` or `n/a` marks a missing value.
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
    head_lines,
    is_number,
    numbered_lines,
    parse_number,
)

RULE_RE = re.compile(r"[-=+|_ \t]+")
HOLES = {"-", "n/a", "N/A", "--"}


def split_header(text: str) -> list[str]:
    names = [name for name in re.split(r"\s{2,}|\t", text.strip()) if name]
    return names if len(names) >= 2 else text.split()


def split_row(text: str) -> tuple[str, list[str], str | None]:
    """(name part, trailing value tokens, trailing parenthesised note)."""
    note = None
    text = text.rstrip()
    opening = text.rfind("(")
    if text.endswith(")") and opening >= 0 and ")" not in text[opening:-1]:
        note = text[opening + 1:-1].strip()
        text = text[:opening]
    tokens = text.split()
    count = 0
    while count < len(tokens) and (is_number(tokens[-1 - count]) or tokens[-1 - count] in HOLES):
        count += 1
    cut = len(tokens) - count
    return " ".join(tokens[:cut]), tokens[cut:], note


def split_variant(name: str) -> tuple[str, str | None]:
    """"sysbench [threads=64]" -> ("sysbench", "threads=64")."""
    opening = name.find("[")
    closing = name.find("]", opening + 1)
    if opening < 0 or closing < 0:
        return name, None
    benchmark = (name[:opening] + name[closing + 1:]).strip()
    return benchmark or name, name[opening + 1:closing].strip()


def is_row(text: str) -> bool:
    name, values, _ = split_row(text)
    return bool(name) and any(is_number(token) for token in values)


class NormalizedParser(Parser):
    name = "normalized"
    version = 1
    description = "normalised table"

    def detect(self, head: str) -> float:
        lines = [t for t in head_lines(head) if not RULE_RE.fullmatch(t)]
        # The header is the line right above the first row; anything earlier is chatter.
        first_row = next((i for i, text in enumerate(lines) if is_row(text)), None)
        if not first_row:
            return 0.0
        start = first_row - 1
        width = len(split_header(lines[start]))
        rows = [split_row(text) for text in lines[start + 1:] if is_row(text)]
        # A row carries one value per column (or the header also names the label column).
        fitting = [values for _, values, _ in rows if width - 1 <= len(values) <= width + 1]
        if width < 2 or not fitting:
            return 0.0
        score = 0.45 + 0.3 * len(fitting) / (len(lines) - start - 1)
        if all(values[0] in ("1", "1.0", "1.00", "1.000") for values in fitting):
            score += 0.2
        return score

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        results: list[ResultSet] = []
        columns: list[str] | None = None
        for lineno, text in numbered_lines(lines, warnings):
            if RULE_RE.fullmatch(text):
                continue
            if not is_row(text):
                columns = split_header(text)
            elif columns is None:
                warnings.add(lineno, "ignored row before the header naming the columns")
            else:
                results.extend(self._row(text, columns, lineno))
        return self.result(results, warnings)

    def _row(self, text: str, columns: list[str], lineno: int) -> list[ResultSet]:
        name, values, note = split_row(text)
        if len(values) > len(columns):  # extra leading numbers belong to the name ("tbench 16")
            name = " ".join([name, *values[:len(values) - len(columns)]])
            values = values[len(values) - len(columns):]
        if len(values) == len(columns) - 1:  # the header also named the row-label column
            columns = columns[1:]
        if len(values) != len(columns):
            raise ParseError(f"expected {len(columns)} values ({', '.join(columns)}), "
                             f"found {len(values)}", line=lineno)
        benchmark, variant = split_variant(name)
        results = []
        for position, (column, token) in enumerate(zip(columns, values, strict=True)):
            if token in HOLES:
                continue
            labels = {"column": column, "row": name}
            if variant:
                labels["variant"] = variant
            if note and position == len(columns) - 1:
                labels["note"] = note
            result = ResultSet(benchmark=benchmark, kernel=column, labels=labels, line=lineno)
            result.add("normalized", parse_number(token, line=lineno))
            results.append(result)
        return results

"""Tables normalised to a baseline, as posted in patch threads.

                              tip     tip + patch
    hackbench                 1       0.955 (4.5% degradation)
    sysbench [threads=64]     1       0.91  (9% degradation)

    Without the patch With the patch
    Ingo's pipe test 1.00 2.51 (~150% better)

The header names the columns (the sides compared). Its names are split on runs of two or more
blanks or tabs; a single-spaced header is split only where the split is sure: as many words as
columns, or exactly one way to cut it so that every name is a kernel, or every later name
extends the first (`mainline mainline + fix`), or each name starts with a capital and no other
word does (`Without the patch With the patch`). Otherwise the header line is refused by number.

Each row is a benchmark name (it may hold blanks, digits, apostrophes), values, and notes in
brackets or parentheses anywhere (`[threads=64]`, `(~150% better)`) or percentages (`-4.5%`).
A note before the values is the row's variant; a note after a value belongs to that value's
column. One result set per (row, column): benchmark = the row's name, kernel and labels["column"]
= the column name, metric "normalized". `-` or `n/a` marks a missing value. Rows after a line
that is neither a row nor a header this grammar can split are an UNASSIGNED block.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import combinations, pairwise
from typing import NamedTuple

from .base import (
    Accounting,
    ParseError,
    Parser,
    ParseResult,
    ResultSet,
    Warnings,
    head_lines,
    is_number,
    numbered_lines,
    parse_count,
    parse_number,
)
from .headings import kernel_name

RULE_RE = re.compile(r"[-=+|_ \t]+")
HOLES = {"-", "n/a", "N/A", "--"}
TOKEN_RE = re.compile(r"\[[^\[\]]*\]|\([^()]*\)|\S+")
PERCENT_RE = re.compile(r"[-+~]?\d+(?:\.\d+)?%")
LABEL_WORDS = {"benchmark", "benchmarks", "test", "tests", "workload", "name", "bench"}
MAX_HEADER_WORDS = 16


class Row(NamedTuple):
    name: str
    values: list[str]
    notes: dict[int, str]  # value index -> note after it; -1 = before the values (variant)


def split_row(text: str) -> Row:
    """The name, the trailing values and the notes of a table row (values may be empty)."""
    tokens = TOKEN_RE.findall(text.strip())
    values: list[str] = []
    pending: list[str] = []  # notes seen (from the right) before their value
    notes_after: list[list[str]] = []
    cut = len(tokens)
    while cut > 0:
        token = tokens[cut - 1]
        if _is_note(token):
            pending.insert(0, _note_text(token))
        elif is_number(token) or token in HOLES:
            values.insert(0, token)
            notes_after.insert(0, pending)
            pending = []
        else:
            break
        cut -= 1
    name_tokens = tokens[:cut]
    variant = [_note_text(t) for t in name_tokens if t[0] in "[("] + pending
    name = " ".join(t for t in name_tokens if t[0] not in "[(")
    notes = {index: "; ".join(found) for index, found in enumerate(notes_after) if found}
    if variant:
        notes[-1] = "; ".join(variant)
    return Row(name, values, notes)


def _is_note(token: str) -> bool:
    return token[0] in "[(" and token[-1] in "])" or PERCENT_RE.fullmatch(token) is not None


def _note_text(token: str) -> str:
    return token[1:-1].strip() if token[0] in "[(" else token


def is_row(text: str) -> bool:
    row = split_row(text)
    return bool(row.name) and any(is_number(token) for token in row.values)


def split_header(text: str) -> list[str]:
    """Column names as written, split on wide gaps (single blanks when there are none)."""
    names = [name for name in re.split(r"\s{2,}|\t", text.strip()) if name]
    return names if len(names) >= 2 else text.split()


def header_names(text: str, count: int) -> list[str] | None:
    """The `count` column names of a header line, or None when they cannot surely be told apart.

    A header may also name the row-label column (`benchmark  base  patched`)."""
    if count < 2:
        return None  # one column compares nothing
    wide = [name for name in re.split(r"\s{2,}|\t", text.strip()) if name]
    if len(wide) == count + 1:
        return wide[1:]
    if len(wide) == count:
        return wide
    if len(wide) > 1:
        return None
    words = text.split()
    if len(words) > count and words[0].lower() in LABEL_WORDS:
        words = words[1:]
    if len(words) == count:
        return words
    if len(words) < count or len(words) > MAX_HEADER_WORDS:
        return None
    sure = [groups for groups in _cuts(words, count) if _sure_cut(groups)]
    return [" ".join(group) for group in sure[0]] if len(sure) == 1 else None


def _cuts(words: list[str], count: int):
    """Every way to cut `words` into `count` non-empty runs."""
    for points in combinations(range(1, len(words)), count - 1):
        bounds = (0, *points, len(words))
        yield [words[a:b] for a, b in pairwise(bounds)]


def _sure_cut(groups: list[list[str]]) -> bool:
    if any(group[0] == "+" or group[-1] == "+" for group in groups):
        return False  # "tip + patch" is one name: a plus joins its neighbours
    names = [" ".join(group) for group in groups]
    if all(kernel_name(name) for name in names):
        return True
    first = groups[0]
    if all(group[:len(first)] == first and len(group) > len(first) for group in groups[1:]):
        return True  # mainline | mainline + fix
    return all(group[0][:1].isupper() and not any(w[:1].isupper() for w in group[1:])
               for group in groups)  # Without the patch | With the patch


def split_variant(name: str) -> tuple[str, str | None]:
    """"sysbench [threads=64]" -> ("sysbench", "threads=64")."""
    opening = name.find("[")
    closing = name.find("]", opening + 1)
    if opening < 0 or closing < 0:
        return name, None
    benchmark = (name[:opening] + name[closing + 1:]).strip()
    return benchmark or name, name[opening + 1:closing].strip()


class NormalizedParser(Parser):
    name = "normalized"
    version = 2
    description = "normalised table"

    def detect(self, head: str) -> float:
        lines = [t for t in head_lines(head) if not RULE_RE.fullmatch(t)]
        # The header is the line right above the first row; anything earlier is chatter.
        first_row = next((i for i, text in enumerate(lines) if is_row(text)), None)
        if not first_row:
            return 0.0
        start = first_row - 1
        rows = [split_row(text) for text in lines[start + 1:] if is_row(text)]
        if all(_is_count(row.name) for row in rows):
            return 0.0  # "1M  4015  8286": a time table of kernels by loop size
        width = len(rows[0].values)
        names = header_names(lines[start], width) or header_names(lines[start], width - 1)
        fitting = [row for row in rows if len(row.values) >= 2
                   and (names is None or len(names) <= len(row.values) <= width)]
        if not fitting:
            return 0.0
        score = 0.45 + 0.3 * len(fitting) / (len(lines) - start - 1)
        says_normalized = all(row.values[0] in ("1", "1.0", "1.00", "1.000") for row in fitting)
        if names is not None and all(name[:1] in "([" for name in names):
            names = None  # "(secs)  (real time)": units under another header, not sides
        if names is None and not says_normalized:
            # Only a table that names its sides or says it is normalised is this format: a
            # generic shape of name-then-numbers is not a signature.
            return 0.0
        if names is None:
            score -= 0.1  # still this format, so the refusal names the header line
        return score + (0.2 if says_normalized else 0.0)

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        accounting = Accounting(self.description)
        results: list[ResultSet] = []
        table = _Table()
        for lineno, text in numbered_lines(lines, warnings):
            if RULE_RE.fullmatch(text):
                continue
            if not is_row(text):
                if table.pending is not None:
                    warnings.add(table.pending[0], "ignored unrecognised line")
                    accounting.unknown(*table.pending)
                table.pending = (lineno, text)
                continue
            row = split_row(text)
            if table.pending is not None:
                table.start(row, lineno, warnings, accounting)
            if table.columns is None:
                warnings.add(lineno, "ignored row before the header naming the columns")
                accounting.unknown(lineno, text)
                continue
            results.extend(self._row(row, table, lineno))
        if table.pending is not None:
            accounting.unknown(*table.pending)
        accounting.check()
        return self.result(results, warnings)

    def _row(self, row: Row, table: _Table, lineno: int) -> list[ResultSet]:
        name, values, notes = row
        columns = table.columns
        assert columns is not None  # parse() skips the rows before a header
        extra = len(values) - len(columns)
        if extra > 0:  # extra leading numbers belong to the name ("dbench 8")
            name = " ".join([name, *values[:extra]])
            values = values[extra:]
            notes = {index - extra: note for index, note in notes.items() if index >= extra
                     or index == -1}
        if len(values) != len(columns):
            raise ParseError(f"expected {len(columns)} values ({', '.join(columns)}), "
                             f"found {len(values)}", line=lineno)
        benchmark, variant = split_variant(name)
        variant = "; ".join(v for v in (variant, notes.get(-1)) if v) or None
        results = []
        for position, (column, token) in enumerate(zip(columns, values, strict=True)):
            if token in HOLES:
                continue
            labels = {"column": column, "row": name}
            if variant:
                labels["variant"] = variant
            if position in notes:
                labels["note"] = notes[position]
            result = ResultSet(benchmark=benchmark, kernel=column, labels=labels, line=lineno,
                               kernel_line=table.header_line)
            if table.unsure_from is not None:
                result.kernel, result.kernel_line, result.missing = None, None, ["kernel"]
                result.block = f"{table.unsure_from}.{position + 1}"
                result.labels.pop("column")
            result.touch(lineno)
            result.add("normalized", parse_number(token, line=lineno))
            results.append(result)
        return results


class _Table:
    """The columns in force, the non-row line waiting to be a header, and how sure we are."""

    def __init__(self):
        self.columns: list[str] | None = None
        self.header_line: int | None = None
        self.pending: tuple[int, str] | None = None
        self.unsure_from: int | None = None

    def start(self, row: Row, lineno: int, warnings: Warnings, accounting: Accounting) -> None:
        """The line above the first row of a block: a header if it surely splits."""
        assert self.pending is not None  # parse() calls start() only with a line pending
        header_line, text = self.pending
        self.pending = None
        count = len(row.values)
        names = None
        for width in range(count, 1, -1):  # extra leading numbers may belong to the name
            names = header_names(text, width)
            if names:
                break
        wide = [name for name in re.split(r"\s{2,}|\t", text.strip()) if name]
        if not names and len(wide) >= 2:
            names = wide  # clearly columns; the row's value count will be checked against them
        if names:
            self.columns, self.header_line, self.unsure_from = names, header_line, None
        elif self.columns is None:
            raise ParseError("cannot tell where the column names of this header split; "
                             "separate them with two blanks or a tab", line=header_line)
        else:
            warnings.add(header_line, "ignored unrecognised line")
            accounting.unknown(header_line, text)
            self.unsure_from = lineno


def _is_count(name: str) -> bool:
    try:
        parse_count(name)
    except ParseError:
        return False
    return True

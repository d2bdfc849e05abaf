"""Times in a grid of kernels by a setup knob, as sweep results get posted.

    loops   2.6.22  2.6.24  2.6.25              kernel        1M     10M
    1M      4015    8286    4100         or     2.6.22        4015   24030
    10M     24030   30120   25010               2.6.24 + fix  8286   -

One orientation has kernels as columns and the knob's values as rows, the other the reverse.
The knob is named by the header's first word (`loops`, `threads`); with no name there, counts
written with a suffix (`1M`, `10k`) are loop counts, anything else is refused. Values are times:
milliseconds unless the header says otherwise (`loops (s)`, `ms`, `usec`), stored as time_ms and
lower is better. A table of ratios against a baseline is the `normalized` format, not this one.

Columns are split on runs of two or more blanks or tabs (so `2.6.24 + fix` is one kernel), or on
single blanks when that is the only way every name is a kernel. `-`, `--`, `n/a` are holes.
Any other line is skipped by a named rule (skips.py: mail attribution, shell command, setup
description, prose) or, holding a number none explains, refuses the input. A row after a
skipped line, with no new header, is an UNASSIGNED block: the columns above may not be its.
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
    numbered_lines,
    parse_count,
    slug,
)
from .headings import kernel_name
from .skips import ATTRIBUTION, SETUP, SHELL, LineRules, reads_cells
from .timing import to_ms

HOLES = {"-", "--", "n/a", "N/A", "x", "?"}
RULE_RE = re.compile(r"[-=+|_ \t]+")
COUNT_RE = re.compile(r"\d+(?:\.\d+)?\s*[kKmMgG]")
UNIT_RE = re.compile(r"^(.*?)\s*[(\[]?\s*\b(ms|msecs?|s|secs?|us|usecs?)\b\s*[)\]]?\s*$", re.I)
KERNEL_WORDS = {"kernel", "kernels", "version", "tree"}
RULES = LineRules(ATTRIBUTION, SHELL, SETUP, result_like=reads_cells)


class Table:
    """One header: which way round it is, its kernels or knob values, its unit."""

    def __init__(self, kernels_across: bool, names: list, param: str, unit: str, line: int):
        self.kernels_across, self.names, self.param = kernels_across, names, param
        self.unit, self.line = unit, line


def _columns(text: str) -> list[list[str]]:
    """Candidate splits of a header line: on wide gaps first, then on every blank."""
    wide = [name for name in re.split(r"\s{2,}|\t", text.strip()) if name]
    narrow = text.split()
    return [wide, narrow] if wide != narrow else [wide]


def _is_count(token: str) -> bool:
    return bool(COUNT_RE.fullmatch(token)) or is_number(token)


def read_header(text: str, lineno: int) -> Table | None:
    """The table a header line announces, or None when the line is not such a header."""
    unit = "ms"
    for names in _columns(text):
        if len(names) < 2:
            continue
        first, rest = names[0], names[1:]
        match = UNIT_RE.match(first)
        if match and match.group(1):
            first, unit = match.group(1), match.group(2).lower().rstrip("s") or "s"
            unit = {"m": "ms", "msec": "ms", "u": "us", "usec": "us", "sec": "s", "": "s"}.get(
                unit, unit)
        kernels = [kernel_name(name) for name in rest]
        if all(kernels) and kernel_name(first) is None and not _is_count(first):
            return Table(True, kernels, slug(first), unit, lineno)
        all_kernels = [kernel_name(name) for name in names]
        if all(all_kernels) and len(names) >= 2:
            return Table(True, all_kernels, "", unit, lineno)
        if all(COUNT_RE.fullmatch(name) for name in rest) and (
                first.lower() in KERNEL_WORDS or COUNT_RE.fullmatch(first)):
            counts = rest if first.lower() in KERNEL_WORDS else names
            return Table(False, [parse_count(c, line=lineno) for c in counts], "loops", unit,
                         lineno)
    return None


def split_cells(text: str) -> tuple[str, list[str]] | None:
    """(row label, value cells) of a row; the label may hold blanks (`2.6.24 + fix`)."""
    text = text.rstrip()
    while text.endswith((")", "]")):  # a trailing "(noisy)" or "[rebooted]" note
        opening = text.rfind("(" if text.endswith(")") else "[")
        if opening <= 0:
            return None
        text = text[:opening].rstrip()
    tokens = text.split()
    count = 0
    while count < len(tokens) and (is_number(tokens[-1 - count]) or tokens[-1 - count] in HOLES):
        count += 1
    if count == 0 or count == len(tokens) and count < 2:
        return None
    if count == len(tokens):  # "1000000 4015 8286": the first number is the label
        return tokens[0], tokens[1:]
    return " ".join(tokens[:len(tokens) - count]), tokens[len(tokens) - count:]


class KernelTableParser(Parser):
    name = "kernel-table"
    version = 1
    description = "time table of kernels by loop size (either way round)"

    def detect(self, head: str) -> float:
        lines = [text for text in head_lines(head) if not RULE_RE.fullmatch(text)]
        for index, text in enumerate(lines[:-1]):
            table = read_header(text, 0)
            if table is None:
                continue
            rows = [split_cells(row) for row in lines[index + 1:index + 50]]
            fitting = [row for row in rows if row and len(row[1]) == len(table.names)
                       and self._label_fits(table, row[0])]
            if fitting:
                return min(0.97, 0.8 + 0.05 * len(fitting))
        return 0.0

    @staticmethod
    def _label_fits(table: Table, label: str) -> bool:
        return _is_count(label) if table.kernels_across else kernel_name(label) is not None

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        groups = ResultGroups()
        accounting = Accounting(self.description)
        table: Table | None = None
        lost_at: int | None = None  # the first row line after an unknown line, if any
        for lineno, text in numbered_lines(lines, warnings):
            text = text.strip()
            if RULE_RE.fullmatch(text):
                continue
            cells = split_cells(text)
            # A row of the table in force is the common case: skip the header test for it.
            fits = (table is not None and cells is not None
                    and len(cells[1]) == len(table.names) and self._label_fits(table, cells[0]))
            header = None if fits else read_header(text, lineno)
            if header is not None:
                table, lost_at = header, None
                continue
            if cells is None or table is None or not self._label_fits(table, cells[0]):
                if table is not None and lost_at is None:
                    lost_at = -1  # the next row starts an unassigned block
                RULES.skip(lineno, text, warnings, accounting)  # else refused at the end
                continue
            if lost_at == -1:
                lost_at = lineno
            self._row(table, cells, lineno, lost_at, groups, warnings)
        accounting.check()
        return self.result(groups.results(), warnings)

    def _row(self, table, cells, lineno, lost_at, groups, warnings) -> None:
        label, values = cells
        if len(values) != len(table.names):
            raise ParseError(f"expected {len(table.names)} values (one per column of the header "
                             f"on line {table.line}), found {len(values)}", line=lineno)
        param = table.param or self._default_param(table, label, lineno)
        for position, token in enumerate(values):
            if token in HOLES:
                continue
            if table.kernels_across:
                kernel, knob = table.names[position], parse_count(label, line=lineno)
            else:
                kernel, knob = kernel_name(label), table.names[position]
            setup = {"benchmark": "threadtest" if param == "loops" else None,
                     "params": {param: knob}}
            if lost_at is None:
                setup["kernel"] = kernel
                kernel_line = table.line if table.kernels_across else lineno
                result = groups.get(lineno, **setup, kernel_line=kernel_line)
            else:  # the header above may not be this row's header
                result = groups.get(lineno, **setup, kernel=None, missing=["kernel"],
                                    block=f"{lost_at}.{position + 1}")
            result.add("time_ms", to_ms(token, table.unit, lineno))
        if not table.param and table.kernels_across and param == "loops" and not warnings.items:
            warnings.add(table.line, "first column unnamed: counts like 1M read as loops")

    @staticmethod
    def _default_param(table: Table, label: str, lineno: int) -> str:
        if not table.kernels_across or COUNT_RE.fullmatch(label):
            return "loops"
        raise ParseError("the header does not name the first column (loops? threads?); "
                         "add its name before the kernels", line=table.line)

"""Our own CSV format (docs/formats.md, "schedbench CSV", has the full rules).

    # comment lines start with '#', anywhere
    kernel,loops,iterations,cpus,time_ms
    2.6.22,10000,500,2,3332

Columns, by name (case-insensitive):
- kernel, benchmark, policy, machine: dimensions (text; empty means unknown);
- run, repeat: repeat indices, not stored (repeats are the samples of one result set);
- tunable.NAME, or any name starting with sched_: a tunable; param.NAME: a param;
  label.NAME, label, note, notes: a label (text);
- metric.NAME, a known metric name (idx, normalized, ...) or a unit suffix (_ms, _us, _ns, _s,
  _per_s, _pct): a metric; known setup knobs (loops, iterations, burn_us, ...) stay params;
- anything else: a param (a number where it parses as one, `1M` and `10k` included).
Rows sharing every non-metric value form one result set; each metric cell is one sample and an
empty metric cell is a hole.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable

from .base import (
    ParseError,
    Parser,
    ParseResult,
    ResultGroups,
    Warnings,
    head_lines,
    maybe_number,
    numbered_lines,
    parse_number,
)
from .units import looks_like_metric

DIMENSIONS = ("kernel", "benchmark", "policy", "machine")
REPEAT_COLUMNS = ("run", "repeat")
LABEL_COLUMNS = ("label", "note", "notes")
TUNABLE_NAMES = ("rr_interval", "yield_type")
COLUMN_NAME_RE = re.compile(r"[A-Za-z_][\w.\-]*")


def classify(column: str) -> tuple[str, str]:
    """(role, stored name) for a header cell; role is dimension/repeat/metric/param/..."""
    key = column.strip()
    lowered = key.lower()
    for prefix, role in (("tunable.", "tunable"), ("param.", "param"), ("label.", "label"),
                         ("metric.", "metric")):
        if lowered.startswith(prefix) and len(key) > len(prefix):
            return role, key[len(prefix):]
    if lowered in DIMENSIONS:
        return "dimension", lowered
    if lowered in REPEAT_COLUMNS:
        return "repeat", lowered
    if lowered in LABEL_COLUMNS:
        return "label", lowered
    if lowered.startswith("sched_") or lowered in TUNABLE_NAMES:
        return "tunable", key
    if looks_like_metric(lowered):
        return "metric", key
    return "param", key


def split_csv(text: str, lineno: int) -> list[str]:
    try:
        rows = list(csv.reader([text], skipinitialspace=True))
    except csv.Error as exc:
        raise ParseError(f"bad CSV: {exc}", line=lineno) from None
    return [cell.strip() for cell in rows[0]] if rows else []


def header_roles(cells: list[str], lineno: int) -> list[tuple[str, str]]:
    roles = [classify(cell) for cell in cells]
    names = [f"{role}:{name}" for role, name in roles]
    if any(not COLUMN_NAME_RE.fullmatch(cell) for cell in cells):
        raise ParseError("CSV header cells must be names like kernel or time_ms", line=lineno)
    if len(set(names)) != len(names):
        raise ParseError("duplicate column in CSV header", line=lineno)
    if not any(role == "metric" for role, _ in roles):
        raise ParseError("no metric column in CSV header (name metrics with a unit suffix "
                         "such as _ms, _us, _s or _per_s)", line=lineno)
    return roles


class SchedbenchCsvParser(Parser):
    name = "schedbench-csv"
    version = 1
    description = "schedbench CSV"

    def detect(self, head: str) -> float:
        lines = [text for text in head_lines(head) if not text.startswith("#")]
        if len(lines) < 2 or "," not in lines[0]:
            return 0.0
        cells = [cell.strip() for cell in lines[0].split(",")]
        if not all(COLUMN_NAME_RE.fullmatch(cell) for cell in cells):
            return 0.0
        roles = {classify(cell)[0] for cell in cells}
        if "metric" not in roles:
            return 0.2
        width = len(cells)
        consistent = sum(1 for text in lines[1:] if text.count(",") == width - 1)
        return 0.6 + 0.38 * consistent / (len(lines) - 1)

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        groups = ResultGroups()
        roles = None
        for lineno, text in numbered_lines(lines, warnings):
            if text.lstrip().startswith("#"):
                continue
            cells = split_csv(text, lineno)
            if roles is None:
                roles = header_roles(cells, lineno)
                continue
            if len(cells) != len(roles):
                raise ParseError(f"expected {len(roles)} fields, found {len(cells)}",
                                 line=lineno)
            self._row(roles, cells, lineno, groups, warnings)
        return self.result(groups.results(), warnings)

    @staticmethod
    def _row(roles, cells, lineno, groups, warnings) -> None:
        setup: dict = {"params": {}, "tunables": {}, "labels": {}}
        samples = []
        for (role, name), cell in zip(roles, cells, strict=True):
            if cell == "":
                continue
            if role == "dimension":
                setup[name] = cell
            elif role == "repeat":
                parse_number(cell, line=lineno, what=f"repeat index in {name!r}")
            elif role == "metric":
                samples.append((name, parse_number(cell, line=lineno, what=f"value for {name}")))
            elif role == "label":
                setup["labels"][name] = cell
            else:
                setup[f"{role}s"][name] = maybe_number(cell)
        if not samples:
            warnings.add(lineno, "row without any metric value")
            return
        result = groups.get(lineno, **setup)
        for name, value in samples:
            result.add(name, value)

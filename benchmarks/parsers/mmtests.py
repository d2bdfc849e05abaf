"""mmtests comparison tables (`compare-kernels.sh` output), pasted alone or inside a mail.

    hackbench-process-pipes
                                 6.1.0                  6.1.0
                               vanilla               fix-v2r1
    Amean     1        0.2357 (   0.00%)      0.2330 (   1.15%)
    Amean     4        0.6403 (   0.00%)      0.6250 *   2.39%*
    Stddev    4        0.0032 (   0.00%)      0.0040 ( -25.00%)
    CoeffVar  4        0.50 (   0.00%)      0.64 ( -28.00%)

                   6.1.0       6.1.0
                 vanilla    fix-v2r1
    Duration User         123.45      120.01
    Duration Elapsed       45.67       44.10

The heading is the benchmark; the first header line names each column's kernel, the second its
config (the run's label, part of its identity). A row is a statistic, the benchmark's parameter
(groups for hackbench, clients for dbench/tbench/netperf, `threads-8` where mmtests says so,
else `n`) and one cell per column: the value and its change against the first column, `*x%*`
where mmtests found the change significant. Each statistic is stored as a summary, never as
samples: metric `<measure>.<statistic>` (`time_s.amean`, `time_s.bamean-95`); Stddev and
CoeffVar give the Amean's stddev_pct. Duration rows are one measurement each (samples of
`duration_user_s`, ...). Every line is read or skipped by a named rule; a line with numbers
that no rule explains is refused with its number, as is a change that does not match its values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .base import NUMBER, ParseError, ParseResult, Warnings, head_lines, numbered_lines, slug
from .summaries import (
    SummaryParser,
    SummarySet,
    printed_precision,
    relative_change_range,
    summary_dict,
)

STAT_RE = re.compile(r"(Amean|Hmean|Gmean|BAmean-\d{1,2}|Stddev|CoeffVar|Min|Max)\s+(\S+)\s+(.*)",
                     re.I)
CELL = rf"({NUMBER})\s*(?:\(\s*({NUMBER})%\s*\)|\*\s*({NUMBER})%\s*\*)"
CELL_RE = re.compile(CELL)
CELLS_RE = re.compile(rf"(?:\s*{CELL})+\s*")
DURATION_RE = re.compile(r"Duration\s+(User|System|Elapsed)\s+(.*)", re.I)
OPS_RE = re.compile(r"Ops\s+\S.*", re.I)
HEADING_RE = re.compile(r"[A-Za-z][\w.+-]{0,99}")
DIGIT_RE = re.compile(r"\d")
KEY_PARAM_RE = re.compile(r"(.*?)-(\d+(?:\.\d+)?)")
PARAM_WORDS = {"threads", "clients", "groups", "procs", "processes", "tasks"}
MEANS = ("amean", "hmean", "gmean")

# heading prefix -> (parameter of the row number, measured quantity, unit, higher is better);
# None where the table itself must say which way is better (the sign of its changes).
BENCHMARKS: list[tuple[str, str, str, str, bool | None]] = [
    ("hackbench", "groups", "time_s", "s", False),
    ("tbench", "clients", "throughput_mb_per_s", "MB/s", True),
    ("dbench", "clients", "result", "", None),
    ("netperf", "clients", "result", "", None),
    ("sysbench", "threads", "result", "", None),
    ("schbench", "threads", "result", "", None),
]


def benchmark_traits(heading: str | None) -> tuple[str, str, str, bool | None]:
    name = (heading or "").lower()
    for prefix, param, measure, unit, higher in BENCHMARKS:
        if name.startswith(prefix):
            return param, measure, unit, higher
    return "n", "result", "", None


def _number(token: str) -> float:
    return float(token)


@dataclass
class Cell:
    value: float
    text: str
    change: float
    change_text: str
    significant: bool


@dataclass
class Row:
    line: int
    statistic: str  # amean, bamean-95, stddev, coeffvar, ...
    key: str
    cells: list[Cell]


@dataclass
class Block:
    benchmark: str | None
    heading_line: int | None
    header_line: int
    columns: list[tuple[str, str]]  # (kernel, config)
    rows: list[Row] = field(default_factory=list)
    durations: list[tuple[int, str, list[float]]] = field(default_factory=list)
    # No heading of its own: a Duration block belongs to the benchmark above it, a block of
    # statistics names no benchmark (the uploader must).
    inherited: bool = False


def _cells(text: str, width: int, line: int) -> list[Cell]:
    if not CELLS_RE.fullmatch(text):
        raise ParseError("mmtests row: expected one `value (change%)` or `value *change%*` per "
                         "column", line=line)
    cells = []
    for value, plain, marked in CELL_RE.findall(text):
        change = plain or marked
        cells.append(Cell(_number(value), value, _number(change), change, bool(marked)))
    if len(cells) != width:
        raise ParseError(f"mmtests row has {len(cells)} values for {width} columns", line=line)
    return cells


def _change_matches(cell: Cell, base: Cell, higher: bool) -> bool:
    """Does the printed change agree with the printed values (within their rounding)?"""
    span = relative_change_range(base.text, cell.text)
    if span is None:
        return True
    low, high = span if higher else (-span[1], -span[0])
    tolerance = printed_precision(cell.change_text) + 0.01
    return low - tolerance <= cell.change <= high + tolerance


def _direction(block: Block, declared: bool | None) -> bool | None:
    """Higher is better? Read from the table's own signs (mmtests' change means "better")."""
    votes = set()
    for row in block.rows:
        if row.statistic not in MEANS and not row.statistic.startswith("bamean"):
            continue
        base = row.cells[0]
        for cell in row.cells[1:]:
            if cell.change and cell.value != base.value:
                votes.add((cell.value > base.value) == (cell.change > 0))
    if len(votes) > 1:
        raise ParseError("mmtests block: its changes say both higher and lower is better; "
                         "the columns are not read right", line=block.header_line)
    return votes.pop() if votes else declared


def _check_changes(block: Block, higher: bool | None) -> None:
    if higher is None:
        return
    for row in block.rows:
        if row.statistic in ("stddev", "coeffvar"):
            continue
        for cell in row.cells[1:]:
            if not _change_matches(cell, row.cells[0], higher):
                raise ParseError(f"mmtests row: change {cell.change_text}% does not match "
                                 f"{row.cells[0].text} -> {cell.text}", line=row.line)


def _key(key: str, default_param: str) -> tuple[str, dict]:
    """(sub-measure, params) of a row's second column: `4`, `threads-8`, `send-64`, `elapsed`."""
    try:
        return "", {default_param: _as_param(key)}
    except ValueError:
        pass
    match = KEY_PARAM_RE.fullmatch(key)
    if match:
        word = slug(match.group(1))
        if word in PARAM_WORDS:
            return "", {word: _as_param(match.group(2))}
        return word, {default_param: _as_param(match.group(2))}
    return slug(key), {}


def _as_param(text: str):
    value = float(text)
    return int(value) if value.is_integer() else value


class MmtestsParser(SummaryParser):
    name = "mmtests"
    version = 1
    description = "mmtests compare-kernels table"

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        rows = [t for t in lines if (m := STAT_RE.fullmatch(t)) and CELLS_RE.fullmatch(m.group(3))]
        durations = [t for t in lines if DURATION_RE.fullmatch(t)]
        if not rows and not durations:
            return 0.0
        return 1.0 if rows else 0.6

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        blocks = self._blocks(numbered_lines(lines, warnings, keep_blank=True), warnings)
        sets: dict[tuple, SummarySet] = {}
        for block in blocks:
            self._read_block(block, sets, warnings)
        return self.result(list(sets.values()), warnings)

    # ---------------------------------------------------------------- lines into blocks

    def _blocks(self, numbered, warnings: Warnings) -> list[Block]:
        blocks: list[Block] = []
        pending: list[tuple[int, str]] = []  # lines since the last row ("" for a blank)
        heading: tuple[int, str] | None = None
        for lineno, text in numbered:
            stripped = text.strip()
            stat = STAT_RE.fullmatch(stripped)
            duration = DURATION_RE.fullmatch(stripped)
            if not stat and not duration:
                if OPS_RE.fullmatch(stripped):
                    warnings.add(lineno, "skipped mmtests monitor counter (Ops): not a result")
                    continue
                pending.append((lineno, stripped))
                continue
            if any(text for _, text in pending) or not blocks:
                heading = self._new_block(pending, blocks, heading, lineno, warnings)
            pending = []
            block = blocks[-1]
            if stat:
                cells = _cells(stat.group(3), len(block.columns), lineno)
                block.rows.append(Row(lineno, stat.group(1).lower(), stat.group(2), cells))
            else:
                assert duration is not None  # a line that matches neither was skipped above
                values = duration.group(2).split()
                if len(values) != len(block.columns) or \
                        not all(re.fullmatch(NUMBER, v) for v in values):
                    raise ParseError(f"mmtests Duration row: expected {len(block.columns)} "
                                     "numbers, one per column", line=lineno)
                block.durations.append((lineno, duration.group(1).lower(),
                                        [_number(v) for v in values]))
        self._account(pending, warnings, "after the last table")
        return blocks

    def _new_block(self, pending, blocks, heading, row_line, warnings):
        """The two lines right above a row are its header; a lone word above them heads it."""
        texts = [(n, t) for n, t in pending if t]
        if len(texts) < 2 or texts[-1][0] != row_line - 1 or texts[-2][0] != row_line - 2:
            raise ParseError("mmtests row without its two header lines (kernels, then configs) "
                             "right above it", line=row_line)
        (kernels_line, kernels), (configs_line, configs) = texts[-2], texts[-1]
        kernel_names, config_names = kernels.split(), configs.split()
        if len(kernel_names) != len(config_names):
            raise ParseError(f"mmtests header: {len(kernel_names)} kernels but "
                             f"{len(config_names)} configs", line=configs_line)
        before = texts[:-2]
        found = next(((n, t) for n, t in reversed(before) if HEADING_RE.fullmatch(t)), None)
        if found is not None:
            heading = found
        self._account([(n, t) for n, t in before if (n, t) != found], warnings,
                      "before an mmtests header")
        blocks.append(Block(heading[1] if heading else None, heading[0] if heading else None,
                            kernels_line, list(zip(kernel_names, config_names, strict=True)),
                            inherited=found is None))
        return heading

    @staticmethod
    def _account(lines, warnings: Warnings, where: str) -> None:
        for lineno, text in lines:
            if not text:
                continue
            if DIGIT_RE.search(text):
                raise ParseError(f"line with numbers {where} that is no part of an mmtests "
                                 "table", line=lineno)
            warnings.add(lineno, "skipped text without numbers")

    # ---------------------------------------------------------------- blocks into sets

    def _read_block(self, block: Block, sets: dict, warnings: Warnings) -> None:
        if block.inherited and block.rows:
            block.benchmark = None
        param, measure, unit, declared = benchmark_traits(block.benchmark)
        higher = _direction(block, declared)
        _check_changes(block, higher)
        spread: dict[tuple, dict] = {}
        for row in block.rows:
            sub, params = _key(row.key, param)
            name = ".".join(part for part in (measure, sub) if part)
            for column, cell in enumerate(row.cells):
                target = self._set(block, column, params, sets, row.line)
                if row.statistic in ("stddev", "coeffvar"):
                    spread.setdefault((id(target), name), {"set": target})[row.statistic] = \
                        (cell.value, row.line)
                    continue
                target.add_summary(f"{name}.{row.statistic}", summary_dict(
                    statistic=row.statistic, value=cell.value,
                    significant=None if column == 0 else cell.significant, line=row.line),
                    unit=unit, higher_is_better=bool(higher))
        self._attach_spread(spread, warnings)
        for lineno, kind, values in block.durations:
            for column, value in enumerate(values):
                target = self._set(block, column, {}, sets, lineno)
                target.line = target.line or lineno
                target.add(f"duration_{kind}_s", value, unit="s", higher_is_better=False)

    @staticmethod
    def _set(block: Block, column: int, params: dict, sets: dict, line: int) -> SummarySet:
        kernel, config = block.columns[column]
        key = (block.benchmark, kernel, config, tuple(sorted(params.items())))
        found = sets.get(key)
        if found is None:
            found = sets[key] = SummarySet(
                benchmark=block.benchmark, kernel=kernel, params=dict(params), line=line,
                kernel_line=block.header_line, label=config, baseline=column == 0)
        found.touch(line)
        return found

    @staticmethod
    def _attach_spread(spread: dict, warnings: Warnings) -> None:
        """CoeffVar (stddev as % of the mean) is the Amean's stddev_pct; Stddev gives it too."""
        for (_, name), found in spread.items():
            target: SummarySet = found["set"]
            mean = target.summaries.get(f"{name}.amean")
            line = (found.get("coeffvar") or found.get("stddev"))[1]
            if mean is None:
                warnings.add(line, f"{name}: Stddev/CoeffVar without an Amean row; not stored")
                continue
            if "coeffvar" in found:
                mean["stddev_pct"] = found["coeffvar"][0]
            elif mean["value"]:
                mean["stddev_pct"] = found["stddev"][0] / abs(mean["value"]) * 100

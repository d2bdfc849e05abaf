"""The parser registry: every format by name, auto-detection and the parse entry points."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from itertools import chain

from .base import (
    HAS_DIGIT_RE,
    HEAD_SIZE,
    ParseError,
    Parser,
    ParseResult,
    Unexplained,
    UnknownFormat,
    clean_line,
)
from .burn import BurnParser
from .cyclictest import CyclictestParser
from .dbench import DbenchParser
from .hackbench import HackbenchParser
from .hyperfine_json import HyperfineJsonParser
from .kernel_table import KernelTableParser
from .kernel_time import KernelTimeParser
from .lkp import LkpOutputParser, LkpStatsParser
from .loops_time import LoopsTimeParser
from .metric_lines import MetricLinesParser
from .mmtests import MmtestsParser
from .normalized import NormalizedParser
from .param_table import ParamTableParser
from .perf_bench import PerfBenchParser
from .results_file import ResultsFileParser
from .robot import RobotParser
from .schbench import SchbenchParser
from .schedbench_csv import SchedbenchCsvParser
from .schedbench_json import SchedbenchJsonParser
from .stress_ng import StressNgParser
from .sweep import SweepParser
from .sysbench import SysbenchParser
from .time_ms import TimeMsParser
from .vmstat import VmstatParser

# Below this nothing is trusted: better to ask the user to pick a format than to guess wrong.
DETECT_THRESHOLD = 0.3

PARSERS: dict[str, Parser] = {
    parser.name: parser
    for parser in (
        # Published summaries and LKP's files first: their signatures are specific, and a tie
        # goes to the earlier parser (parsers.summaries, .mmtests, .robot, .lkp).
        MmtestsParser(), RobotParser(), LkpStatsParser(), LkpOutputParser(),
        TimeMsParser(), LoopsTimeParser(), KernelTimeParser(), ResultsFileParser(), BurnParser(),
        SweepParser(), VmstatParser(), NormalizedParser(), ParamTableParser(), PerfBenchParser(),
        HackbenchParser(), SchbenchParser(), SysbenchParser(), HyperfineJsonParser(),
        SchedbenchCsvParser(), SchedbenchJsonParser(), MetricLinesParser(), KernelTableParser(),
        StressNgParser(), DbenchParser(), CyclictestParser(),
    )
}


# Formats that may take over an input the detected format could not account for: they account
# for every line (base.Accounting, skips.py; mmtests refuses a line with numbers outside its
# tables) and each line they read carries their own signature (a unit, a banner, a field name).
# Grids of bare numbers (normalized, kernel-table, param-table, metric-lines) are left out: they
# would read a refused table of times as ratios, or anything as pairs.
TAKE_OVER = frozenset({
    "results-file", "sweep", "time-ms", "loops-time", "kernel-time", "burn", "mmtests",
    "perf-bench-sched", "hackbench", "schbench", "sysbench", "stress-ng", "dbench", "cyclictest",
})


def formats() -> list[str]:
    return sorted(PARSERS)


def detect(head: str) -> list[tuple[str, float]]:
    """(format, confidence) for every format scoring above zero, best first."""
    if not isinstance(head, str) or "\x00" in head:
        return []
    head = head[:HEAD_SIZE]
    scores = []
    for name, parser in PARSERS.items():
        try:
            score = float(parser.detect(head))
        except Exception:  # noqa: BLE001 - a detector bug must not hide the other formats
            score = 0.0
        if score > 0:
            scores.append((name, min(score, 1.0)))
    return sorted(scores, key=lambda pair: -pair[1])


def choose(head: str, format: str | None = None) -> Parser:
    """The forced parser, or the best detected one; UnknownFormat when there is none."""
    if format:
        if format not in PARSERS:
            ranked = detect(head)
            raise UnknownFormat(f"unknown format {format!r}", formats=formats(),
                                best_guess=ranked[0][0] if ranked else None)
        return PARSERS[format]
    if not isinstance(head, str) or not head.strip():
        raise ParseError("empty input")
    if "\x00" in head:
        raise UnknownFormat("binary data (NUL byte) in input", formats=formats())
    ranked = detect(head)
    if not ranked or ranked[0][1] < DETECT_THRESHOLD:
        best = ranked[0][0] if ranked else None
        line = first_number_line(head)
        raise UnknownFormat("could not recognise the input format; choose one explicitly"
                            + (f" (line {line} holds numbers no format explains)" if line else ""),
                            formats=formats(), best_guess=best, line=line)
    return PARSERS[ranked[0][0]]


def first_number_line(head: str) -> int | None:
    """The first line holding a digit: where an input no format accounts for is refused."""
    for number, text in enumerate(head.splitlines(), 1):
        if HAS_DIGIT_RE.search(text):
            return number
    return None


def parse_text(text: str, format: str | None = None) -> ParseResult:
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}")
    return parse_lines(io.StringIO(text, newline=""), head=text[:HEAD_SIZE], format=format)


def parse_lines(lines: Iterable, *, head: str | None = None,
                format: str | None = None) -> ParseResult:
    """Parse a stream of lines (e.g. an open text file). `head` is the first ~64 KiB of the
    same input for detection; when None it is read from `lines` and replayed.

    A paste that is quoted as a whole (every line starts with `>`: results forwarded in a reply)
    is read without its quote marks; quoted lines inside an unquoted paste stay someone else's.
    """
    source = lines
    if head is None:
        head, lines = sniff(lines)
    depth = quote_depth(head) if isinstance(head, str) else 0
    if depth:
        head = "".join(unquote(line, depth) for line in head.splitlines(keepends=True))
        lines = (unquote(line, depth) for line in lines)
    parser = choose(head, format)
    try:
        result = _run(parser, lines)
    except Unexplained as refusal:
        # Detected, not forced: the format that fits the input's signature best could not
        # account for it; the next one that does reads it, else the first refusal stands.
        fallback = None if format else _next_best(parser, refusal, head, source, depth)
        if fallback is None:
            raise
        result = fallback
    if depth:
        result.warnings.insert(0, "the whole input was quoted (> ): read without the quote marks")
    return result


_QUOTE_RE = re.compile(r"[ \t]*>[ \t]?")


def quote_depth(head: str) -> int:
    """How many `>` levels every non-blank line of `head` shares (0 when some line has none)."""
    depth = None
    for line in head.splitlines():
        if not line.strip():
            continue
        level, rest = 0, line
        while match := _QUOTE_RE.match(rest):
            level, rest = level + 1, rest[match.end():]
        depth = level if depth is None else min(depth, level)
        if depth == 0:
            return 0
    return depth or 0


def unquote(line, depth: int):
    """`line` without its first `depth` quote marks (a blank line stays blank)."""
    if isinstance(line, bytes | bytearray):
        line = bytes(line).decode("utf-8", errors="replace")
    for _ in range(depth):
        match = _QUOTE_RE.match(line)
        if not match:
            break
        line = line[match.end():]
    return line


def sniff(lines: Iterable) -> tuple[str, Iterator]:
    """Read about HEAD_SIZE characters of lines for detection; return them and an iterator
    that yields every line again, the sniffed ones first."""
    iterator = iter(lines)
    taken: list = []
    size = 0
    for raw in iterator:
        taken.append(raw)
        size += len(raw)
        if size >= HEAD_SIZE:
            break
    head = "".join(clean_line(raw, number) + "\n" for number, raw in enumerate(taken, 1))
    return head, chain(taken, iterator)


def _next_best(refused: Parser, refusal: Unexplained, head: str, source,
               depth: int) -> ParseResult | None:
    """The input read by the best-scoring other format that accounts for every line of it,
    or None. Needs the lines again: only a seekable stream or a list can be read twice."""
    if isinstance(source, list | tuple):
        def replay():
            return iter(source)
    elif callable(getattr(source, "seekable", None)) and source.seekable():
        def replay():
            source.seek(0)
            return source
    else:
        return None
    for name, score in detect(head):
        if score < DETECT_THRESHOLD or name == refused.name or name not in TAKE_OVER:
            continue
        lines = replay()
        if depth:
            lines = (unquote(line, depth) for line in lines)
        try:
            result = _run(PARSERS[name], lines)
        except ParseError:
            continue
        shown = ", ".join(map(str, refusal.lines))
        result.warnings.insert(0, f"read as {name}: {refused.name} could not account for "
                               f"line(s) {shown}")
        return result
    return None


def _run(parser: Parser, lines: Iterable) -> ParseResult:
    """Run a parser; whatever goes wrong inside reaches the caller as a ParseError."""
    try:
        return parser.parse(lines)
    except ParseError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError,
            RecursionError, UnicodeError, MemoryError) as exc:
        raise ParseError(f"{parser.name}: could not parse input ({type(exc).__name__})") from exc

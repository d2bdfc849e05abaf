"""Shared types and helpers for the result parsers.

Pure Python on purpose: the simulator, the harness tests and the Django app all import this, and
none of that should drag Django in.
"""

from __future__ import annotations

import json
import math
import re
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from benchmarks.errors import InputError

from .units import metric_info

HEAD_SIZE = 64 * 1024
BOM = "\ufeff"
MAX_WARNINGS = 200
MAX_LINE_CHARS = 4096
MAX_SOURCE_LINES = 500


class ParseError(InputError):
    """Bad input. `line` is 1-based, or None when no single line is to blame."""

    def __init__(self, message: str, *, line: int | None = None):
        super().__init__(message, line=line)
        # str() names the line for logs; the API answer carries it in its own key.
        self.args = (f"line {line}: {message}" if line else message,)


class UnknownFormat(ParseError):
    """No parser recognised the input, or a forced format name does not exist."""

    def __init__(self, message: str, *, formats: list[str], best_guess: str | None = None,
                 line: int | None = None):
        super().__init__(message, line=line)
        self.formats = list(formats)
        self.best_guess = best_guess


@dataclass
class ResultSet:
    """One setup (benchmark x kernel x params x tunables) and every sample measured for it."""

    benchmark: str | None = None
    kernel: str | None = None
    policy: str | None = None
    machine: dict | str | None = None  # a name or a description (ingest takes both)
    params: dict = field(default_factory=dict)
    tunables: dict = field(default_factory=dict)
    metrics: dict[str, array] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    higher_is_better: dict[str, bool] = field(default_factory=dict)
    series: dict[str, dict] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    line: int = 0
    # Where the numbers came from, for the preview: the lines holding them (capped) and the line
    # the kernel was read from (a heading, the row itself, a table header), which the preview
    # uses to apply one correction to every run of that heading.
    source_lines: list[int] = field(default_factory=list)
    kernel_line: int | None = None
    # What the parser could not be sure of ("kernel", "param.loops"): such a set is shown as an
    # UNASSIGNED block and cannot be committed until the user says what it is.
    missing: list[str] = field(default_factory=list)
    # Identifies an unassigned block (its first line, and its column in a table) so the user's
    # assignment reaches exactly the values it was made for.
    block: str | None = None
    last_line: int = 0

    def add(self, metric: str, value: float, unit: str | None = None,
            higher_is_better: bool | None = None) -> None:
        """Append one sample; unit and direction default to what the metric's name implies."""
        number = _finite(value, metric, self.line)
        if metric not in self.metrics:
            default_unit, default_hib = metric_info(metric)
            self.metrics[metric] = array("d")
            self.units[metric] = default_unit if unit is None else unit
            self.higher_is_better[metric] = (
                default_hib if higher_is_better is None else higher_is_better)
        self.metrics[metric].append(number)

    def touch(self, lineno: int) -> None:
        """Record that line `lineno` contributed to this set."""
        if len(self.source_lines) < MAX_SOURCE_LINES and lineno not in self.source_lines[-1:]:
            self.source_lines.append(lineno)
        self.last_line = max(self.last_line, lineno)

    @property
    def unassigned(self) -> bool:
        return bool(self.missing)

    def sample_count(self) -> int:
        return sum(len(values) for values in self.metrics.values())

    def to_dict(self) -> dict:
        """JSON-ready form, shaped like the REST API's run objects."""
        return {
            "benchmark": self.benchmark,
            "kernel": self.kernel,
            "policy": self.policy,
            "machine": self.machine,
            "params": dict(self.params),
            "tunables": dict(self.tunables),
            "metrics": {
                name: {"unit": self.units.get(name, ""),
                       "higher_is_better": self.higher_is_better.get(name, False),
                       "values": list(values)}
                for name, values in self.metrics.items()
            },
            "series": self.series,
            "labels": dict(self.labels),
            "line": self.line,
            "last_line": max(self.last_line, self.line),
            "source_lines": list(self.source_lines),
            "kernel_line": self.kernel_line,
            "missing": list(self.missing),
            "block": self.block,
        }


def _finite(value, metric: str, line: int) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ParseError(f"{metric}: {str(value)[:40]!r} is not a number",
                         line=line or None) from None
    if not math.isfinite(number):
        raise ParseError(f"{metric}: {number} is not a finite number", line=line or None)
    return number


@dataclass
class ParseResult:
    format: str
    version: int
    results: list[ResultSet]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "format": self.format,
            "version": self.version,
            "results": [result.to_dict() for result in self.results],
            "warnings": list(self.warnings),
        }


class Warnings:
    """Collects "line N: ..." warnings, capped so a huge junk file cannot exhaust memory."""

    def __init__(self, limit: int = MAX_WARNINGS):
        self.limit = limit
        self.items: list[str] = []
        self.dropped = 0

    def add(self, line: int | None, message: str) -> None:
        if len(self.items) >= self.limit:
            self.dropped += 1
            return
        self.items.append(f"line {line}: {message}" if line else message)

    def as_list(self) -> list[str]:
        if self.dropped:
            return [*self.items, f"... and {self.dropped} more warnings"]
        return list(self.items)


class Parser:
    """Base class: one subclass per input format, one instance registered by `name`.

    Instances are shared between threads, so `parse` keeps its state in locals, never on self.
    """

    name: str = ""
    version: int = 1
    description: str = ""

    def detect(self, head: str) -> float:
        """Confidence 0..1 that `head` (the first ~64 KiB of the input) is in this format."""
        raise NotImplementedError

    def parse(self, lines: Iterable[str]) -> ParseResult:
        raise NotImplementedError

    def result(self, results: list[ResultSet], warnings: Warnings) -> ParseResult:
        """Wrap the result sets; finding nothing at all is an error, not an empty success."""
        results = [r for r in results if r.metrics or r.series]
        if not results:
            raise ParseError(f"no {self.description or self.name} results found")
        for result_set in results:  # formats that do not track lines still name where they start
            if not result_set.source_lines and result_set.line:
                result_set.touch(result_set.line)
        return ParseResult(self.name, self.version, results, warnings.as_list())


# --------------------------------------------------------------------------- accounting

HAS_DIGIT_RE = re.compile(r"\d")
UNEXPLAINED_SHOWN = 10


class Unexplained(ParseError):
    """The chosen format cannot account for lines holding numbers: nothing is read from such an
    input, as its numbers might belong to something the format does not know."""

    def __init__(self, message: str, *, line: int, lines: list[int]):
        super().__init__(message, line=line)
        self.lines = list(lines)


class Accounting:
    """Every line a format reads is consumed by it or skipped by a rule it names (banner,
    progress line, interim report...). A line holding a number that is neither is unexplained,
    and `check` refuses the whole input naming those lines. Lines without any digit are prose
    (headings, usage text) and explain themselves."""

    def __init__(self, description: str):
        self.description = description
        self.unexplained: list[int] = []
        self.count = 0
        self.first_text = ""
        self.skipped: dict[str, int] = {}

    def skip(self, rule: str) -> None:
        self.skipped[rule] = self.skipped.get(rule, 0) + 1

    def unknown(self, lineno: int, text: str) -> None:
        """A line the format did not consume: fine when it holds no number."""
        if HAS_DIGIT_RE.search(text) is None:
            self.skip("text without numbers")
            return
        self.count += 1
        if len(self.unexplained) < UNEXPLAINED_SHOWN:
            self.unexplained.append(lineno)
            if not self.first_text:
                self.first_text = text.strip()[:80]

    def check(self) -> None:
        if not self.count:
            return
        shown = ", ".join(map(str, self.unexplained))
        more = f" and {self.count - len(self.unexplained)} more" if self.count > len(
            self.unexplained) else ""
        which = "line" if self.count == 1 else "lines"
        verb = "holds" if self.count == 1 else "hold"
        raise Unexplained(
            f"{self.description}: {which} {shown}{more} {verb} numbers this layout does not "
            f"explain ({self.first_text!r}); nothing was read. Upload the tool's untouched "
            f"output, or choose the format that fits", line=self.unexplained[0],
            lines=self.unexplained)


# --------------------------------------------------------------------------- line handling

QUOTED_RE = re.compile(r"^\s*>")
_LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")


def is_quoted(text: str) -> bool:
    """Mail quoting (`> `, `>> `, `> > `): someone else's numbers, never ours to parse."""
    return QUOTED_RE.match(text) is not None


def clean_line(raw, lineno: int) -> str:
    """Strip the line ending; reject binary junk. Accepts str or bytes lines."""
    if isinstance(raw, bytes | bytearray):
        raw = bytes(raw).decode("utf-8", errors="replace")
    elif not isinstance(raw, str):
        raise ParseError(f"expected text lines, got {type(raw).__name__}", line=lineno)
    if "\x00" in raw:
        raise ParseError("binary data (NUL byte) in input", line=lineno)
    if lineno == 1:
        raw = raw.lstrip(BOM)  # editors on Windows (and Excel's CSV export) start with one
    return raw.rstrip("\r\n")


def numbered_lines(lines: Iterable, warnings: Warnings | None = None,
                   *, keep_blank: bool = False) -> Iterator[tuple[int, str]]:
    """Yield (line number, text without line ending or trailing blanks), lazily.

    Quoted lines are dropped (with a warning); blank lines are dropped unless `keep_blank`,
    because several formats use them as block separators.
    """
    try:
        iterator = iter(lines)
    except TypeError as exc:
        raise ParseError("input is not an iterable of lines") from exc
    for lineno, raw in enumerate(iterator, 1):
        # Hot loop (millions of lines): the common str case avoids clean_line's checks.
        if raw.__class__ is not str or "\x00" in raw or lineno == 1:
            raw = clean_line(raw, lineno)
        text = raw.rstrip()
        if not text:
            if keep_blank:
                yield lineno, ""
            continue
        if len(text) > MAX_LINE_CHARS:
            # No format here has lines this long; skipping them also bounds regex work.
            if warnings is not None:
                warnings.add(lineno, f"ignored line longer than {MAX_LINE_CHARS} characters")
            continue
        if text[0] == ">" or (text[0] in " \t" and is_quoted(text)):
            if warnings is not None:
                warnings.add(lineno, "skipped quoted line")
            continue
        yield lineno, text


def head_lines(head: str, limit: int = 2000) -> list[str]:
    """Meaningful (non-blank, unquoted) lines of a detection head, stripped.

    A head cut at HEAD_SIZE probably ends mid-line, so that last fragment is dropped.
    The registry asks every detector in turn about the same head, and most of them start
    here: the last head's lines are kept and handed out again (a fresh list each time, so a
    detector may change its own) while the very same string object is asked about. A string
    cannot change, and the one kept cannot be freed and its address reused, so identity is
    enough; split_head_lines is the plain computation.
    """
    global _last_split
    last = _last_split  # one read: another thread may replace it meanwhile
    if last[0] is head and last[1] == limit:
        return list(last[2])
    lines = split_head_lines(head, limit)
    _last_split = (head, limit, tuple(lines))
    return lines


# (head, limit, its lines) of the latest head_lines call.
_last_split: tuple[object, int, tuple[str, ...]] = (None, 0, ())


def split_head_lines(head: str, limit: int = 2000) -> list[str]:
    """head_lines, computed afresh."""
    if not isinstance(head, str) or "\x00" in head:
        return []
    # Split like the parsers' line iterators (newline=""): \n, \r\n and a lone \r all end a line.
    pieces = _LINE_BREAK_RE.split(head.lstrip(BOM))
    if len(head) >= HEAD_SIZE and not head.endswith(("\n", "\r")):
        pieces = pieces[:-1]
    result = []
    for piece in pieces:
        text = piece.strip()
        if text and not is_quoted(text):
            result.append(text)
            if len(result) >= limit:
                break
    return result


def fraction(lines: list[str], predicate) -> float:
    """Share of `lines` satisfying `predicate` (0 for no lines)."""
    if not lines:
        return 0.0
    return sum(1 for text in lines if predicate(text)) / len(lines)


# --------------------------------------------------------------------------- numbers

# Unambiguous on purpose (digits after the dot only when there is a dot): `\d+\.?\d*` lets a
# long digit run split many ways and the regex engine backtracks quadratically on junk.
NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
NUMBER_RE = re.compile(NUMBER)
_INT_RE = re.compile(r"[-+]?\d+")
_COUNT_RE = re.compile(r"(\d+(?:\.\d+)?)\s*([kKmMgG]?)")
_MULTIPLIERS = {"": 1, "k": 1_000, "m": 1_000_000, "g": 1_000_000_000}


def parse_number(token: str, *, line: int | None = None, what: str = "number") -> int | float:
    """"42" -> 42, "4.5" -> 4.5; anything else (including nan/inf) is a ParseError."""
    token = token.strip()
    if _INT_RE.fullmatch(token):
        return int(token)
    if NUMBER_RE.fullmatch(token):
        value = float(token)
        if math.isfinite(value):
            return value
    raise ParseError(f"expected a {what}, got {token[:40]!r}", line=line)


def parse_count(token: str, *, line: int | None = None) -> int | float:
    """Loop counts as people write them: "1M" -> 1000000, "10k" -> 10000, "2.5M" -> 2500000."""
    match = _COUNT_RE.fullmatch(token.strip())
    if not match:
        raise ParseError(f"expected a count like 10k or 1M, got {token[:40]!r}", line=line)
    value = float(match.group(1)) * _MULTIPLIERS[match.group(2).lower()]
    return int(value) if value.is_integer() else value


def is_number(token: str) -> bool:
    try:
        parse_number(token)
    except ParseError:
        return False
    return True


def maybe_number(text: str):
    """A param or tunable value: a number when it looks like one, else the text itself."""
    text = text.strip()
    try:
        return parse_number(text)
    except ParseError:
        pass
    try:
        return parse_count(text)
    except ParseError:
        return text


# --------------------------------------------------------------------------- kernels

# A `uname -r` string: 2.6.24, 2.6.24-git19, 2.6.22.17-cfs-v24.1-smp, 5.15.0-91-generic.
KERNEL = r"\d+\.\d+(?:\.\d+)*(?:[-+_~][\w.+~-]*)?"
KERNEL_RE = re.compile(KERNEL)
# Standing alone on a line a bare "2.6" or "1.5" is more likely a number than a kernel, so a
# heading needs a third component or a suffix.
_UNAME_RE = re.compile(r"\d+\.\d+(?:\.\d+)+(?:[-+_~][\w.+~-]*)?|\d+\.\d+[-+_~][\w.+~-]+")


def is_uname(token: str) -> bool:
    return _UNAME_RE.fullmatch(token) is not None


def find_kernel(text: str) -> str | None:
    """First uname-looking word in free text such as a vmstat heading."""
    for word in text.split():
        word = word.strip(",;:()[]")
        if is_uname(word):
            return word
    return None


class ResultGroups:
    """Result sets keyed by their setup, in first-seen order: repeats of a setup share one set.

    `kernel_line` is remembered from the first line creating a set, not part of its identity: two
    headings naming the same kernel are one setup. `block` is part of the identity: two
    unassigned blocks are never merged, as nobody knows yet whether they are the same setup.
    """

    def __init__(self):
        self._sets: dict[str, ResultSet] = {}
        self._last: tuple[dict, ResultSet] | None = None

    def get(self, line: int, *, kernel_line: int | None = None, block: int | None = None,
            **setup) -> ResultSet:
        # Long files repeat one setup line after line; comparing small dicts is much cheaper
        # than building the key, which matters at millions of lines.
        keyed = {**setup, "_block": block} if block is not None else setup
        found: ResultSet | None
        if self._last is not None and self._last[0] == keyed:
            found = self._last[1]
        else:
            key = json.dumps(keyed, sort_keys=True, default=str)
            found = self._sets.get(key)
            if found is None:
                found = ResultSet(line=line, kernel_line=kernel_line, **_copied(setup))
                found.block = None if block is None else str(block)
                self._sets[key] = found
            self._last = (_copied(keyed), found)
        found.touch(line)
        return found

    def results(self) -> list[ResultSet]:
        return list(self._sets.values())


def _copied(setup: dict) -> dict:
    # The caller may keep mutating its params/tunables dicts (and lists) for later blocks.
    return {key: dict(value) if isinstance(value, dict) else
            list(value) if isinstance(value, list) else value for key, value in setup.items()}


def slug(text: str) -> str:
    """"runqueue length" -> "runqueue_length"."""
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_")

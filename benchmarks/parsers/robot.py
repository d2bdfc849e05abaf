"""Kernel test robot (LKP, 0-day CI) reports: the `%stddev %change %stddev` tables.

    commit: 1234567890abcdef... ("sched/fair: ...")
    testcase: hackbench
    test machine: 104 threads 2 sockets Intel(R) Xeon(R) ... (Skylake) with 192G memory
    =========================================================================================
    compiler/cpufreq_governor/ipc/kconfig/mode/nr_threads/rootfs/tbox_group/testcase:
      gcc-12/performance/pipe/x86_64-rhel-8.3/process/100%/debian-12.cgz/lkp-skl-fpga01/hackbench

    commit:
      a1b2c3d4e5 ("sched/fair: Prepare for rework")
      1234567890 ("sched/fair: Rework wakeup preemption")

    a1b2c3d4e5f6a7b8 1234567890abcdef
    ---------------- ---------------------------
             %stddev     %change         %stddev
                 \\          |                \\
        123456 ±  2%      -5.1%     117154        hackbench.throughput
          0.41 ±  3%      -0.1        0.30        mpstat.cpu.all.irq%

Each column is a commit (the kernel is the commit id as printed, with its subject kept as the
run's `commit`); the first is the baseline. A value is the mean over the report's repeats, a
summary (`mean`) whose `± N%` is its stddev_pct; `n` comes from the `fail:runs` section when
the report has one. The change column is checked against the values (a relative % change, or
for `%` metrics an absolute difference), so columns read wrongly are refused, not stored. The
header line's values are params, its `tbox_group` the machine, `test machine:` its topology.
Mail leftovers are handled: a latin-1 `±` read as U+FFFD or as `Â±`, quoted-printable text
(`=C2=B1`, soft breaks `=` at line ends) decoded first, or the table refused.
"""

from __future__ import annotations

import quopri
import re
from collections.abc import Iterable

from .base import NUMBER, ParseError, Warnings, clean_line, head_lines, maybe_number
from .summaries import (
    SummaryParser,
    SummarySet,
    printed_precision,
    relative_change_range,
    summary_dict,
)

MAX_REPORT_LINES = 200_000
PLUS_MINUS = r"(?:±|\ufffd|Â±|\+-)"
VALUE = rf"({NUMBER})(?:\s*{PLUS_MINUS}\s*(\d+(?:\.\d+)?)%)?"
CHANGE = r"([-+]?(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?%?|Inf%))"
HEADER_KEYS_RE = re.compile(r"[\w.-]+(?:/[\w.-]+)+:")
COMMIT_LINE_RE = re.compile(r"([0-9a-f]{7,40})\s+\(\"(.*)\"\)\s*")
TOP_COMMIT_RE = re.compile(r"commit:\s+([0-9a-f]{7,40})\s*(?:\(\"(.*)\"\))?\s*")
IDS_RE = re.compile(r"[0-9a-f]{7,40}(?:\s+[0-9a-f]{7,40})+")
DASHES_RE = re.compile(r"-{4,}(?:\s+-{4,})+")
STDDEV_HEADER_RE = re.compile(r"%stddev(?:\s+%change\s+%stddev)+")
FAIL_HEADER_RE = re.compile(r"fail:runs(?:\s+%reproduction\s+fail:runs)+")
BARS_RE = re.compile(r"[\\|](?:\s+[\\|])+")
FAIL_ROW_RE = re.compile(r"((?:\d+)?:\d+)(?:\s+([-+]?\d+(?:\.\d+)?%)\s+((?:\d+)?:\d+))+\s+(\S+)")
FAIL_CELL_RE = re.compile(r"(\d*):(\d+)")
HEADLINE_RE = re.compile(r"kernel test robot noticed an? ([-+]?\d+(?:\.\d+)?)% "
                         r"(regression|improvement) of (\S+?)(?: on)?:?\s*$", re.I)
MACHINE_RE = re.compile(r"(?:test machine:|(?P<box>[\w.-]+):)\s*(?P<threads>\d+) threads"
                        r"(?:\s+(?P<sockets>\d+) sockets?)?\s*(?P<cpu>.*?)"
                        r"(?:\s+with (?P<mem>\d+(?:\.\d+)?)G memory)?\s*", re.I)
URL_RE = re.compile(r"https?://\S+")
QP_LEFTOVER_RE = re.compile(r"=(?:C2|B1|3D|20|09)|=$")
DIGIT_RE = re.compile(r"\d")
PARAMETERS_RE = re.compile(r"parameters:\s*", re.I)
PARAMETER_RE = re.compile(r"\s+([\w.-]+):\s*(.*)")
KEY_LINE_RE = re.compile(r"(testcase|test-description|test-url|compiler|tree|branch):\s*(.*)",
                         re.I)
NOISE_RES = [  # lines of a report that hold no result, each with the rule that skips it
    (re.compile(r"[=*]{10,}"), None),
    (re.compile(r"[|+].*"), "skipped the report's summary box"),
    (re.compile(r"-{10,}>?"), None),
]


def _row_re(columns: int) -> re.Pattern:
    middle = rf"\s+{CHANGE}\s+{VALUE}" * (columns - 1)
    return re.compile(rf"\s*{VALUE}{middle}\s+(\S+)\s*")


def decode_lines(lines: Iterable, warnings: Warnings) -> list[tuple[int, str]]:
    """Numbered text lines; a quoted-printable copy is decoded (soft breaks joined, the
    logical line numbered by its first physical line)."""
    raw = []
    for number, line in enumerate(lines, 1):
        if number > MAX_REPORT_LINES:
            raise ParseError(f"a robot report of more than {MAX_REPORT_LINES} lines", line=number)
        raw.append((number, clean_line(line, number).rstrip()))
    if not any("=C2=B1" in t or "=B1" in t or (t.endswith("=") and not t.endswith("==")) or
               "=3D" in t for _, t in raw):
        return raw
    warnings.add(None, "the report was quoted-printable (=C2=B1, soft line breaks): decoded")
    decoded, pending, first = [], "", None
    for number, text in raw:
        first = number if first is None else first
        if text.endswith("=") and not text.endswith("=="):
            pending += text[:-1]
            continue
        decoded.append((first, _qp(pending + text, first)))
        pending, first = "", None
    if pending and first is not None:  # first is set whenever pending is
        decoded.append((first, _qp(pending, first)))
    return decoded


def _qp(text: str, line: int) -> str:
    data = quopri.decodestring(text.encode("utf-8"))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


class Report:
    """What the parser knows at a point of the report."""

    def __init__(self):
        self.headline: tuple[str, bool] | None = None  # (metric, higher is better)
        self.machine: dict | None = None
        self.testcase: str | None = None
        self.parameters: dict = {}
        self.provenance: dict = {}
        self.params: dict | None = None
        self.benchmark: str | None = None
        self.box: str | None = None
        self.commits: list[tuple[str, str | None]] = []
        self.columns: list[str] | None = None  # kernel per column, once the ids line is read
        self.runs: list[int] | None = None
        self.rows = 0  # rows read in the current table
        self.block = 0
        self.header_line = 0


class RobotParser(SummaryParser):
    name = "robot"
    version = 1
    description = "kernel test robot (LKP) report"

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        if any(STDDEV_HEADER_RE.fullmatch(t) for t in lines):
            return 0.97
        if any("=C2=B1" in t for t in lines) and any("%stddev" in t for t in lines):
            return 0.9
        return 0.0

    def parse(self, lines: Iterable[str]):
        warnings = Warnings()
        report = Report()
        sets: dict[tuple, SummarySet] = {}
        numbered = decode_lines(lines, warnings)
        index = 0
        while index < len(numbered):
            index = self._line(numbered, index, report, sets, warnings)
        return self.result(list(sets.values()), warnings)

    # ------------------------------------------------------------------ one line

    def _line(self, numbered, index, report: Report, sets, warnings) -> int:
        lineno, text = numbered[index]
        stripped = text.strip()
        if not stripped:
            if report.columns is not None and report.rows:
                report.columns = None  # a blank line ends the table
            return index + 1
        if stripped == "--":
            warnings.add(lineno, "skipped the signature")
            return len(numbered)
        if stripped.startswith(">"):
            warnings.add(lineno, "skipped quoted line")
            return index + 1
        if report.columns is not None and (row := self._row(stripped, report, lineno)):
            self._store_row(row, report, sets, lineno)
            report.rows += 1
            if "\ufffd" in stripped or "Â±" in stripped:
                warnings.add(lineno, "read a latin-1 ± that was decoded wrongly as ±")
            return index + 1
        for handler in (self._headline, self._machine_line, self._header, self._commits,
                        self._table_frame, self._parameters, self._keys, self._links):
            consumed = handler(numbered, index, report, warnings)
            if consumed:
                return index + consumed
        for pattern, rule in NOISE_RES:
            if pattern.fullmatch(stripped):
                if rule:
                    warnings.add(lineno, rule)
                return index + 1
        if QP_LEFTOVER_RE.search(stripped):
            raise ParseError("quoted-printable leftovers (=C2=B1, =3D) that could not be "
                             "decoded; decode the mail before pasting it", line=lineno)
        if report.columns is not None and DIGIT_RE.search(stripped):
            raise ParseError("a line in the robot's table that is not a row of it "
                             "(value [± N%] change value [± N%] metric)", line=lineno)
        warnings.add(lineno, "skipped text" if not DIGIT_RE.search(stripped)
                     else "skipped text outside the report's tables")
        return index + 1

    def _headline(self, numbered, index, report: Report, warnings) -> int:
        match = HEADLINE_RE.search(numbered[index][1])
        if not match:
            return 0
        change, kind, metric = float(match.group(1)), match.group(2).lower(), match.group(3)
        worse = kind == "regression"
        # a regression that went down (or an improvement that went up): higher is better
        report.headline = (metric, (change < 0) == worse)
        return 1

    def _machine_line(self, numbered, index, report: Report, warnings) -> int:
        lineno, text = numbered[index]
        match = MACHINE_RE.fullmatch(text.strip())
        if not match:
            return 0
        machine = {"cpu_model": match.group("cpu").strip()}
        if match.group("sockets"):
            machine["sockets"] = int(match.group("sockets"))
        if match.group("mem"):
            machine["memory_mb"] = int(float(match.group("mem")) * 1024)
        machine["threads"] = int(match.group("threads"))
        if match.group("box"):
            machine["name"] = match.group("box")
        report.machine = machine
        return 1

    def _header(self, numbered, index, report: Report, warnings) -> int:
        lineno, text = numbered[index]
        if not HEADER_KEYS_RE.fullmatch(text.strip()) or index + 1 >= len(numbered):
            return 0
        keys = text.strip()[:-1].split("/")
        values_line, values_text = numbered[index + 1]
        values = values_text.strip().split("/")
        if len(values) != len(keys):
            raise ParseError(f"robot header: {len(keys)} names but {len(values)} values",
                             line=values_line)
        setup = dict(zip(keys, values, strict=True))
        report.block += 1
        report.header_line = lineno
        report.benchmark = setup.pop("testcase", None) or report.testcase
        box = setup.pop("tbox_group", None)
        report.box = box
        report.params = {key: maybe_number(value) for key, value in setup.items()}
        if report.block == 1:
            for key, value in report.parameters.items():
                report.params.setdefault(key, value)
        report.commits, report.columns, report.runs, report.rows = [], None, None, 0
        return 2

    def _commits(self, numbered, index, report: Report, warnings) -> int:
        if numbered[index][1].strip() != "commit:" or report.params is None:
            return 0
        taken = 1
        while index + taken < len(numbered):
            match = COMMIT_LINE_RE.fullmatch(numbered[index + taken][1].strip())
            if not match:
                break
            report.commits.append((match.group(1), match.group(2)))
            taken += 1
        return taken

    def _table_frame(self, numbered, index, report: Report, warnings) -> int:
        lineno, text = numbered[index]
        stripped = text.strip()
        if IDS_RE.fullmatch(stripped) and report.params is not None:
            self._columns(stripped.split(), report, lineno)
            return 1
        if report.columns is None:
            return 0
        if DASHES_RE.fullmatch(stripped) or BARS_RE.fullmatch(stripped) or \
                STDDEV_HEADER_RE.fullmatch(stripped) or FAIL_HEADER_RE.fullmatch(stripped):
            return 1
        match = FAIL_ROW_RE.fullmatch(stripped)
        if match:
            self._fail_row(stripped, report, lineno)
            warnings.add(lineno, "fail:runs row: read for the number of runs, not stored")
            return 1
        return 0

    def _columns(self, ids: list[str], report: Report, lineno: int) -> None:
        printed = report.commits or [(commit, None) for commit in ids]
        if len(printed) != len(ids) or any(not (a.startswith(b) or b.startswith(a))
                                           for (a, _), b in zip(printed, ids, strict=True)):
            raise ParseError("the table's commit ids do not match the report's `commit:` "
                             "lines", line=lineno)
        report.commits = printed
        report.columns = [commit for commit, _ in printed]

    def _fail_row(self, text: str, report: Report, lineno: int) -> None:
        totals = [int(total) for _, total in FAIL_CELL_RE.findall(text)]
        assert report.columns is not None  # _table_frame() reads rows only under the ids line
        if len(totals) != len(report.columns):
            raise ParseError("fail:runs row with a cell count that is not the commits'",
                             line=lineno)
        if report.runs is not None and report.runs != totals:
            report.runs = []  # rows disagree: the number of runs is not known
        elif report.runs is None:
            report.runs = totals

    def _parameters(self, numbered, index, report: Report, warnings) -> int:
        if not PARAMETERS_RE.fullmatch(numbered[index][1].strip()):
            return 0
        taken = 1
        while index + taken < len(numbered):
            text = numbered[index + taken][1]
            if not text.strip():
                taken += 1
                continue
            match = PARAMETER_RE.fullmatch(text)
            if not match:
                break
            report.parameters[match.group(1)] = maybe_number(match.group(2))
            taken += 1
        return taken

    def _keys(self, numbered, index, report: Report, warnings) -> int:
        match = KEY_LINE_RE.fullmatch(numbered[index][1].strip())
        if match:
            if match.group(1).lower() == "testcase":
                report.testcase = match.group(2).strip() or None
            return 1
        top = TOP_COMMIT_RE.fullmatch(numbered[index][1].strip())
        if top:
            report.provenance["commit"] = top.group(1)
            return 1
        return 0

    def _links(self, numbered, index, report: Report, warnings) -> int:
        text = numbered[index][1]
        urls = URL_RE.findall(text)
        if not urls:
            return 0
        links = report.provenance.setdefault("links", [])
        for url in urls:
            if url not in links and len(links) < 20:
                links.append(url.rstrip(".,)>"))
        return 1

    # ------------------------------------------------------------------ rows

    def _row(self, text: str, report: Report, lineno: int):
        assert report.columns is not None  # parse() reads rows only under the ids line
        match = _row_re(len(report.columns)).fullmatch(text)
        if not match:
            return None
        groups = match.groups()
        metric = groups[-1]
        cells, changes = [(groups[0], groups[1])], []
        for position in range(len(report.columns) - 1):
            change, value, stddev = groups[2 + 3 * position: 5 + 3 * position]
            changes.append(change)
            cells.append((value, stddev))
        for (value, _), change in zip(cells[1:], changes, strict=True):
            self._check_change(metric, cells[0][0], value, change, lineno)
        return metric, cells

    @staticmethod
    def _check_change(metric: str, base: str, value: str, change: str, lineno: int) -> None:
        if change.endswith("Inf%"):
            if float(base) != 0:
                raise ParseError(f"{metric}: an infinite change from a non-zero base",
                                 line=lineno)
            return
        if not change.endswith("%"):
            if not metric.endswith("%"):
                raise ParseError(f"{metric}: a change without % is an absolute difference, "
                                 "which the robot prints only for % metrics", line=lineno)
            slack = printed_precision(base) + printed_precision(value) + \
                printed_precision(change) + 1e-9
            if abs(float(value) - float(base) - float(change)) > slack:
                raise ParseError(f"{metric}: change {change} does not match {base} -> {value}",
                                 line=lineno)
            return
        span = relative_change_range(base, value)
        if span is None:
            return
        printed = float(change[:-1])
        slack = printed_precision(change[:-1]) + 0.01
        if not span[0] - slack <= printed <= span[1] + slack:
            raise ParseError(f"{metric}: change {change} does not match {base} -> {value}",
                             line=lineno)

    def _store_row(self, row, report: Report, sets, lineno: int) -> None:
        metric, cells = row
        if len(metric) > 100:
            raise ParseError(f"metric name longer than 100 characters: {metric[:40]}...",
                             line=lineno)
        runs = report.runs if report.runs else [None] * len(cells)
        higher = _higher_is_better(metric, report.headline)
        for column, (value, stddev) in enumerate(cells):
            target = self._set(report, column, sets, lineno)
            target.add_summary(metric, summary_dict(
                statistic="mean", value=float(value),
                stddev_pct=float(stddev) if stddev else None, n=runs[column] or None,
                significant=None, line=lineno), unit="%" if metric.endswith("%") else "",
                higher_is_better=higher)

    @staticmethod
    def _set(report: Report, column: int, sets, lineno: int) -> SummarySet:
        commit, subject = report.commits[column]
        key = (report.block, column)
        found = sets.get(key)
        if found is None:
            machine = dict(report.machine or {})
            threads = machine.pop("threads", None)
            machine["name"] = report.box or machine.get("name") or "unknown machine"
            found = sets[key] = SummarySet(
                benchmark=report.benchmark, kernel=commit, params=dict(report.params or {}),
                machine=machine, line=lineno, kernel_line=report.header_line,
                commit={"id": commit, "subject": subject}, baseline=column == 0,
                provenance={**report.provenance, **({"threads": threads} if threads else {})})
        found.touch(lineno)
        return found


def _higher_is_better(metric: str, headline) -> bool | None:
    if headline and headline[0] == metric:
        return headline[1]
    name = metric.lower()
    if name.endswith((".throughput", "_ops", ".ops", "per_sec", "ops_per_sec", ".score")):
        return True
    return None

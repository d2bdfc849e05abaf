"""`perf bench sched messaging` and `perf bench sched pipe` (also both, from `sched all`).

    # Running 'sched/messaging' benchmark:
    # 20 sender and receiver processes per group
    # 10 groups == 400 processes run

         Total time: 0.158 [sec]

    # Running 'sched/pipe' benchmark:
    # Executed 1000000 pipe operations between two processes

         Total time: 5.855 [sec]

           5.855061 usecs/op
             170792 ops/sec

Repeated runs of the same setup become samples of one result set. Every other line holding a
number refuses the input, and so does a run that measured nothing (`Total time: 0.000`, as
`-g 0` prints): a failure, not a zero.
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
    ResultGroups,
    Warnings,
    head_lines,
    numbered_lines,
    parse_number,
)

RUNNING_RE = re.compile(r"#\s*Running\s+'?sched/(\w+)'?\s+benchmark.*", re.I)
SENDERS_RE = re.compile(r"#\s*(\d+)\s+sender and receiver\s+(\w+)\s+per group", re.I)
GROUPS_RE = re.compile(r"#\s*(\d+)\s+groups?\s*==\s*(\d+)\s+(\w+)\s+run", re.I)
EXECUTED_RE = re.compile(r"#\s*Executed\s+(\d+)\s+pipe operations between two\s+(\w+)", re.I)
TOTAL_RE = re.compile(rf"Total time\s*:\s*({NUMBER})\s*\[sec\]", re.I)
PER_OP_RE = re.compile(rf"({NUMBER})\s*usecs/op", re.I)
OPS_RE = re.compile(rf"({NUMBER})\s*ops/sec", re.I)


class _Run:
    def __init__(self, kind: str | None, lineno: int):
        self.kind = kind
        self.line = lineno
        self.params: dict = {}
        self.labels: dict = {}
        self.samples: list[tuple[str, float]] = []

    def benchmark(self) -> str:
        kind = self.kind or ("pipe" if "ops" in self.params else "messaging")
        return f"perf-bench-sched-{kind}"


class PerfBenchParser(Parser):
    name = "perf-bench-sched"
    version = 2
    description = "perf bench sched messaging/pipe output"

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        if any(RUNNING_RE.fullmatch(text) for text in lines):
            return 0.98
        if any(TOTAL_RE.fullmatch(text) for text in lines):
            return 0.7
        return 0.0

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        groups = ResultGroups()
        run: _Run | None = None
        accounting = Accounting(self.description)
        for lineno, text in numbered_lines(lines, warnings):
            text = text.strip()
            running = RUNNING_RE.fullmatch(text)
            if running or run is None or (TOTAL_RE.fullmatch(text) and run.samples):
                self._flush(run, groups)
                run = _Run(running.group(1).lower() if running else None, lineno)
                if running:
                    continue
            if not self._feed(run, text, lineno):
                accounting.unknown(lineno, text)
        self._flush(run, groups)
        accounting.check()
        return self.result(groups.results(), warnings)

    @staticmethod
    def _feed(run: _Run, text: str, lineno: int) -> bool:
        """Read one line into `run`; False when the line is not one of this layout's."""
        if match := SENDERS_RE.fullmatch(text):
            run.params["fds"] = int(match.group(1))
            run.labels["mode"] = match.group(2).lower()
        elif match := GROUPS_RE.fullmatch(text):
            run.params["groups"] = int(match.group(1))
            run.params["tasks"] = int(match.group(2))
        elif match := EXECUTED_RE.fullmatch(text):
            run.params["ops"] = int(match.group(1))
            run.labels["mode"] = match.group(2).lower()
        elif match := TOTAL_RE.fullmatch(text):
            total = parse_number(match.group(1), line=lineno)
            if total <= 0:
                raise ParseError("the run measured nothing (total time 0): a failed or empty "
                                 "run (no groups or loops?), not a result", line=lineno)
            run.samples.append(("total_time_s", total))
        elif match := PER_OP_RE.fullmatch(text):
            run.samples.append(("op_us", parse_number(match.group(1), line=lineno)))
        elif match := OPS_RE.fullmatch(text):
            run.samples.append(("ops_per_s", parse_number(match.group(1), line=lineno)))
        elif text.lower().startswith("total time"):
            raise ParseError("malformed 'Total time: N [sec]' line", line=lineno)
        else:
            return False
        return True

    @staticmethod
    def _flush(run: _Run | None, groups: ResultGroups) -> None:
        if run is None or not run.samples:
            return
        result = groups.get(run.line, benchmark=run.benchmark(), params=run.params,
                            labels=run.labels)
        for metric, value in run.samples:
            result.add(metric, value)

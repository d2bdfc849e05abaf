"""stress-ng's metrics table (`--metrics-brief` or `--metrics`), as it writes it to stderr.

    stress-ng: info:  [11823] setting to a 2 second run per stressor
    stress-ng: info:  [11823] dispatching hogs: 2 cpu
    stress-ng: metrc: [11823] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s
    stress-ng: metrc: [11823]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)
    stress-ng: metrc: [11823] cpu                5064      2.00      2.14      0.00      2530.00        2364.21
    stress-ng: metrc: [11823] miscellaneous metrics:
    stress-ng: metrc: [11823] switch  4739.57 nanosecs per context switch (pipe method) (geometic mean of 1 instances)
    stress-ng: info:  [11823] successful run completed in 2.00s

One result set per stressor: benchmark `stress-ng`, params stressor, instances (from
`dispatching hogs`) and timeout_s (from `setting to a N second run`); metrics bogo_ops,
real_time_s, usr_time_s, sys_time_s, bogo_ops_per_s_real, bogo_ops_per_s_cpu (usr+sys time), and
with `--metrics` cpu_used_pct and rss_max_kb; a miscellaneous metric is named after its words
(`nanosecs_per_context_switch_pipe_method`). Other info lines are the tool's log and skipped;
a `fail:` or `error:` line, an unsuccessful run or a stressor with 0 bogo ops refuses the input.
"""  # noqa: E501

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
    slug,
)

PREFIX_RE = re.compile(r"stress-ng:\s*(\w+):\s*\[\d+\]\s?(.*)")
ROW_RE = re.compile(rf"(\S+)\s+(\d+)((?:\s+{NUMBER}){{5,7}})")
MISC_RE = re.compile(rf"(\S+)\s+({NUMBER})\s+(.+?)\s*\(geometi?c mean of \d+ instances?\)")
HOGS_RE = re.compile(r"dispatching hogs:\s*(.*)")
TIMEOUT_RE = re.compile(r"setting to a (\d+) seconds? run per stressor")
COLUMNS = [("real_time_s", "s", False), ("usr_time_s", "s", False), ("sys_time_s", "s", False),
           ("bogo_ops_per_s_real", "1/s", True), ("bogo_ops_per_s_cpu", "1/s", True),
           ("cpu_used_pct", "%", False), ("rss_max_kb", "KiB", False)]
MISC_UNITS = {"nanosecs": "ns", "ns": "ns", "usecs": "us", "us": "us", "mb": "MB/s"}


class StressNgParser(Parser):
    name = "stress-ng"
    version = 1
    description = "stress-ng --metrics-brief output"

    def detect(self, head: str) -> float:
        levels = [m.group(1) for t in head_lines(head) if (m := PREFIX_RE.fullmatch(t))]
        if "metrc" in levels:
            return 0.98
        return 0.8 if levels else 0.0  # a failed run: this format names the failing line

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        groups = ResultGroups()
        accounting = Accounting(self.description)
        setup: dict = {"instances": {}, "timeout_s": None, "misc": False}
        for lineno, text in numbered_lines(lines, warnings):
            match = PREFIX_RE.fullmatch(text.strip())
            if match is None:
                accounting.unknown(lineno, text)
            elif match.group(1) in ("fail", "error"):
                raise ParseError(f"stress-ng reports a failure: {match.group(2)[:120]}",
                                 line=lineno)
            elif match.group(1) == "metrc":
                self._metric_line(match.group(2).strip(), lineno, setup, groups, accounting)
            else:
                self._log_line(match.group(2).strip(), lineno, setup)
        accounting.check()
        return self.result(groups.results(), warnings)

    @staticmethod
    def _log_line(text: str, lineno: int, setup: dict) -> None:
        if text.startswith("unsuccessful run"):
            raise ParseError(f"stress-ng: {text[:120]}", line=lineno)
        if match := HOGS_RE.match(text):
            setup["instances"] = {}  # a new run says its own
            for part in match.group(1).split(","):
                count, _, stressor = part.strip().partition(" ")
                if count.isdigit() and stressor:
                    setup["instances"][stressor.strip()] = int(count)
        elif match := TIMEOUT_RE.match(text):
            setup["timeout_s"] = int(match.group(1))
        # Any other info/warn line is the tool's log (pids, cache sizes): skipped by rule.

    @staticmethod
    def _metric_line(text: str, lineno: int, setup: dict, groups: ResultGroups,
                     accounting: Accounting) -> None:
        if text.startswith("stressor") or text.startswith("(secs)") or not text:
            setup["misc"] = False  # a new table (the next run of a harness --repeat)
            return  # the table's two header lines
        if text.startswith("miscellaneous metrics"):
            setup["misc"] = True
            return
        match = (MISC_RE if setup["misc"] else ROW_RE).fullmatch(text)
        if match is None:
            accounting.unknown(lineno, text)
            return
        stressor = match.group(1)
        params = {"stressor": stressor}
        if stressor in setup["instances"]:
            params["instances"] = setup["instances"][stressor]
        if setup["timeout_s"] is not None:
            params["timeout_s"] = setup["timeout_s"]
        result = groups.get(lineno, benchmark="stress-ng", params=params)
        if setup["misc"]:
            words = match.group(3)
            unit = MISC_UNITS.get(words.split()[0].lower(), "")
            result.add(slug(words), parse_number(match.group(2), line=lineno), unit)
            return
        bogo = parse_number(match.group(2), line=lineno)
        if bogo == 0:
            raise ParseError(f"stress-ng: the {stressor} stressor did 0 bogo ops (it did not "
                             "run): a failure, not a result", line=lineno)
        result.add("bogo_ops", bogo, "", True)
        for (name, unit, higher), token in zip(COLUMNS, match.group(3).split(), strict=False):
            result.add(name, parse_number(token, line=lineno), unit, higher)

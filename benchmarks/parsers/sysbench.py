"""sysbench output (1.0 and 0.4 layouts), typically the cpu and threads tests.

    sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)
    Number of threads: 4
    Prime numbers limit: 10000
    CPU speed:
        events per second:  4581.20
    General statistics:
        total time:                          10.0012s
        total number of events:              45819
    Latency (ms):
             min:                                    0.78
             avg:                                    0.87
             95th percentile:                        1.10

Metrics: events_per_s (computed from events / total time when not printed), total_time_s,
events, latency_{min,avg,max,p95,sum}_ms. Params: threads, prime_limit. labels["test"] is
"cpu" or "threads" when the output says. A new `sysbench <version>` banner starts a new run;
runs of the same setup share a result set.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .base import (
    NUMBER,
    Parser,
    ParseResult,
    ResultGroups,
    Warnings,
    head_lines,
    numbered_lines,
    parse_number,
)

BANNER_RE = re.compile(r"sysbench\s+\d[\w.]*.*", re.I)
KEY_RE = re.compile(r"[a-z0-9][\w .()/]*")
VALUE_RE = re.compile(rf"({NUMBER})\s*(?:ms|s)?")
SECTION_RE = re.compile(r"([A-Za-z][\w .()/-]*):")
TEST_MARKERS = {
    "prime numbers limit": "cpu", "cpu speed": "cpu", "doing cpu performance": "cpu",
    "doing thread subsystem": "threads",
}
PARAMS = {"number of threads": "threads", "prime numbers limit": "prime_limit"}
GENERAL = {"events per second": "events_per_s", "total time": "total_time_s",
           "total number of events": "events"}
LATENCY = {"min": "min", "avg": "avg", "max": "max", "95th percentile": "p95",
           "approx. 95 percentile": "p95", "approx.  95 percentile": "p95", "sum": "sum"}


class _Run:
    def __init__(self, lineno: int):
        self.line = lineno
        self.params: dict = {}
        self.test: str | None = None
        self.metrics: dict[str, float] = {}
        self.section = ""


class SysbenchParser(Parser):
    name = "sysbench"
    version = 1
    description = "sysbench output"

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        banner = any(BANNER_RE.fullmatch(text) for text in lines)
        general = any(text.lower().startswith(("general statistics", "total number of events"))
                      for text in lines)
        return 0.97 if banner and general else 0.6 if general else 0.0

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        groups = ResultGroups()
        run: _Run | None = None
        for lineno, text in numbered_lines(lines, warnings):
            text = " ".join(text.split())
            if BANNER_RE.fullmatch(text) or run is None:
                self._flush(run, groups)
                run = _Run(lineno)
            self._feed(run, text, lineno)
        self._flush(run, groups)
        return self.result(groups.results(), warnings)

    @staticmethod
    def _feed(run: _Run, text: str, lineno: int) -> None:
        lowered = text.lower()
        for marker, test in TEST_MARKERS.items():
            if lowered.startswith(marker):
                run.test = test
        if SECTION_RE.fullmatch(text):
            run.section = lowered
            return
        key, colon, rest = lowered.partition(":")
        match = VALUE_RE.fullmatch(rest.strip())
        if not colon or not match or not KEY_RE.fullmatch(key):
            return
        key = key.strip()
        value = parse_number(match.group(1), line=lineno)
        if key in PARAMS:
            run.params[PARAMS[key]] = value
        elif key in GENERAL:
            run.metrics[GENERAL[key]] = value
        elif key in LATENCY and ("latency" in run.section or "per-request" in run.section):
            run.metrics[f"latency_{LATENCY[key]}_ms"] = value

    @staticmethod
    def _flush(run: _Run | None, groups: ResultGroups) -> None:
        if run is None or not run.metrics:
            return
        metrics = dict(run.metrics)
        if "events_per_s" not in metrics and metrics.get("events") and metrics.get(
                "total_time_s"):
            metrics["events_per_s"] = metrics["events"] / metrics["total_time_s"]
        labels = {"test": run.test} if run.test else {}
        result = groups.get(run.line, benchmark="sysbench", params=run.params, labels=labels)
        for metric, value in metrics.items():
            result.add(metric, value)


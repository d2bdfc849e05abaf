"""sysbench output (1.0 and 0.4 layouts): the cpu, threads, mutex and memory tests.

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

Metrics, as printed: events_per_s, total_time_s, events, latency_{min,avg,max,p95,sum}_ms;
the memory test's operations, operations_per_s, transferred_mib and throughput_mib_per_s.
Params: threads, prime_limit, the memory test's block_size/total_size/operation/scope, and
test = cpu | threads | mutex | memory. The test is a param because the tests never compare:
cpu and memory runs say which they are, sysbench 1.0's threads and mutex runs do not, so those
need params.test from the upload (the harness records it) or stay UNASSIGNED. `Threads
fairness` lines are skipped (a per-thread spread, not a result); a `FATAL:` line refuses the
input; any other line holding a number refuses it too. A new `sysbench <version>` banner starts a
new run; runs of the same setup share a result set.
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

BANNER_RE = re.compile(r"sysbench\s+\d[\w.]*.*", re.I)
KEY_RE = re.compile(r"[a-z0-9][\w .()/]*")
VALUE_RE = re.compile(rf"({NUMBER})\s*(?:ms|s)?")
SECTION_RE = re.compile(r"([A-Za-z][\w .()/-]*):")
OPERATIONS_RE = re.compile(rf"total operations:\s*(\d+)\s*\(\s*({NUMBER}) per second\)")
TRANSFER_RE = re.compile(rf"({NUMBER}) MiB transferred \(({NUMBER}) MiB/sec\)", re.I)
YIELDS_RE = re.compile(r"thread yields per test:\s*(\d+)\s+locks used:\s*(\d+)")
TEST_MARKERS = {
    "prime numbers limit": "cpu", "cpu speed": "cpu", "doing cpu performance": "cpu",
    "running memory speed test": "memory", "doing memory operations speed test": "memory",
    "doing thread subsystem": "threads", "doing mutex performance": "mutex",
}
PARAMS = {"number of threads": "threads", "prime numbers limit": "prime_limit"}
WORD_PARAMS = {"block size": "block_size", "total size": "total_size",
               "operation": "operation", "scope": "scope"}
GENERAL = {"events per second": "events_per_s", "total time": "total_time_s",
           "total number of events": "events"}
LATENCY = {"min": "min", "avg": "avg", "max": "max", "95th percentile": "p95",
           "approx. 95 percentile": "p95", "approx.  95 percentile": "p95", "sum": "sum"}
FAIRNESS = "threads fairness"


class _Run:
    def __init__(self, lineno: int):
        self.line = lineno
        self.params: dict = {}
        self.test: str | None = None
        self.metrics: dict[str, float] = {}
        self.section = ""


class SysbenchParser(Parser):
    name = "sysbench"
    version = 2
    description = "sysbench output"

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        banner = any(BANNER_RE.fullmatch(text) for text in lines)
        general = any(text.lower().startswith(("general statistics", "total number of events"))
                      for text in lines)
        if banner and any(text.startswith("FATAL:") for text in lines):
            return 0.9  # a failed run: this format names the line that says so
        return 0.97 if banner and general else 0.6 if general else 0.0

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        groups = ResultGroups()
        accounting = Accounting(self.description)
        run: _Run | None = None
        for lineno, text in numbered_lines(lines, warnings):
            text = " ".join(text.split())
            if text.startswith("FATAL:"):
                raise ParseError(f"sysbench failed: {text[6:].strip()[:120]}", line=lineno)
            if BANNER_RE.fullmatch(text) or run is None:
                self._flush(run, groups)
                run = _Run(lineno)
                if BANNER_RE.fullmatch(text):
                    continue
            if not self._feed(run, text, lineno):
                accounting.unknown(lineno, text)
        self._flush(run, groups)
        accounting.check()
        return self.result(groups.results(), warnings)

    @classmethod
    def _feed(cls, run: _Run, text: str, lineno: int) -> bool:
        """Read one line into `run`; False when it is not one of this layout's lines."""
        lowered = text.lower()
        for marker, test in TEST_MARKERS.items():
            if lowered.startswith(marker):
                run.test = test
        if SECTION_RE.fullmatch(text):
            run.section = lowered
            return True
        if run.section.startswith(FAIRNESS):
            return True  # per-thread spread (avg/stddev), skipped by name
        return cls._special(run, lowered, lineno) or cls._pair(run, lowered, lineno)

    @staticmethod
    def _special(run: _Run, lowered: str, lineno: int) -> bool:
        if match := OPERATIONS_RE.fullmatch(lowered):
            run.metrics["operations"] = parse_number(match.group(1), line=lineno)
            run.metrics["operations_per_s"] = parse_number(match.group(2), line=lineno)
        elif match := TRANSFER_RE.fullmatch(lowered):
            run.metrics["transferred_mib"] = parse_number(match.group(1), line=lineno)
            run.metrics["throughput_mib_per_s"] = parse_number(match.group(2), line=lineno)
        elif match := YIELDS_RE.fullmatch(lowered):
            run.params["yields"] = int(match.group(1))
            run.params["locks"] = int(match.group(2))
        elif lowered.startswith("total time taken by event execution"):
            pass  # 0.4's sum of event times: the latency sum says the same
        else:
            return False
        return True

    @staticmethod
    def _pair(run: _Run, lowered: str, lineno: int) -> bool:
        key, colon, rest = lowered.partition(":")
        key = key.strip()
        if colon and key in WORD_PARAMS and rest.strip():
            run.params[WORD_PARAMS[key]] = rest.strip().replace("kib", "KiB").replace(
                "mib", "MiB")
            return True
        match = VALUE_RE.fullmatch(rest.strip())
        if not colon or not match or not KEY_RE.fullmatch(key):
            return False
        value = parse_number(match.group(1), line=lineno)
        if key in PARAMS:
            run.params[PARAMS[key]] = value
        elif key in GENERAL:
            run.metrics[GENERAL[key]] = value
        elif key in LATENCY and ("latency" in run.section or "per-request" in run.section):
            run.metrics[f"latency_{LATENCY[key]}_ms"] = value
        else:
            return False
        return True

    @staticmethod
    def _flush(run: _Run | None, groups: ResultGroups) -> None:
        if run is None or not run.metrics:
            return
        params = {**run.params, "test": run.test} if run.test else dict(run.params)
        result = groups.get(run.line, benchmark="sysbench", params=params)
        if run.test is None:  # 1.0's threads and mutex tests look alike
            result.missing = ["param.test"]
            result.block = result.block or str(result.line)
        for metric, value in run.metrics.items():
            unit = {"transferred_mib": "MiB", "throughput_mib_per_s": "MiB/s",
                    "operations_per_s": "1/s"}.get(metric)
            higher = True if metric.endswith(("_per_s", "per_s")) else None
            result.add(metric, value, unit, higher)

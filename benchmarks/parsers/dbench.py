"""dbench and tbench output (dbench 4): the operation table and the Throughput line.

    dbench version 4.00 - Copyright Andrew Tridgell 1999-2004
    Running for 3 seconds with load '/usr/share/dbench/client.txt' and minimum warmup 0 secs
       2     68026   769.01 MB/sec  execute   1 sec  latency 0.219 ms
     Operation      Count    AvgLat    MaxLat
     ----------------------------------------
     NTCreateX      70538     0.014     0.167
     ...
    Throughput 751.04 MB/sec  2 clients  2 procs  max_latency=0.219 ms

One result set per run setup: params clients and procs (from the Throughput line), runtime_s,
warmup_s and loadfile (from `Running for`), sync when the line says `(sync open)`; metrics
throughput_mb_per_s and max_latency_ms, and per operation `<op>_count`, `<op>_avg_latency_ms`,
`<op>_max_latency_ms` (the table's columns are measurements of one run, never kernels). The
per-second progress lines (`execute`, `warmup`, `cleanup`, `prepared for launch`) are skipped.
dbench and tbench print the same banner, so the benchmark comes from the upload (the harness
sends the program's name). A run without its Throughput line is refused.
"""

from __future__ import annotations

import os
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

BANNER_RE = re.compile(r"dbench version \S+.*")
RUNNING_RE = re.compile(r"Running for (\d+) seconds with load '([^']*)' and minimum warmup "
                        r"(\d+) secs")
PROGRESS_RE = re.compile(
    rf"\d+\s+(?:\d+\s+{NUMBER} MB/sec\s+(?:execute|warmup)\s+\d+ sec\s+latency {NUMBER} ms"
    r"|cleanup\s+\d+ sec)"
    r"|\d+ of \d+ processes prepared for launch\s+\d+ sec")
HEADER_RE = re.compile(r"Operation\s+Count\s+AvgLat\s+MaxLat")
OP_RE = re.compile(rf"([A-Za-z]\w*)\s+(\d+)\s+({NUMBER})\s+({NUMBER})")
THROUGHPUT_RE = re.compile(rf"Throughput ({NUMBER}) MB/sec(?: \(([^)]*)\))?\s+(\d+) clients\s+"
                           rf"(\d+) procs\s+max_latency=({NUMBER}) ms")


class DbenchParser(Parser):
    name = "dbench"
    version = 1
    description = "dbench/tbench output"

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        if any(THROUGHPUT_RE.fullmatch(text) for text in lines):
            return 0.98
        if any(BANNER_RE.fullmatch(text) for text in lines):
            return 0.9
        return 0.0

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        groups = ResultGroups()
        accounting = Accounting(self.description)
        setup: dict = {}
        operations: list[tuple[str, int, float, float, int]] = []
        for lineno, text in numbered_lines(lines, warnings):
            text = text.strip()
            if match := THROUGHPUT_RE.fullmatch(text):
                self._run(groups, match, setup, operations, lineno)
                operations = []
            elif match := OP_RE.fullmatch(text):
                operations.append((match.group(1), int(match.group(2)),
                                   parse_number(match.group(3), line=lineno),
                                   parse_number(match.group(4), line=lineno), lineno))
            elif match := RUNNING_RE.fullmatch(text):
                setup = {"runtime_s": int(match.group(1)),
                         "loadfile": os.path.basename(match.group(2)),
                         "warmup_s": int(match.group(3))}
            elif not (BANNER_RE.fullmatch(text) or PROGRESS_RE.fullmatch(text)
                      or HEADER_RE.fullmatch(text) or set(text) == {"-"}):
                accounting.unknown(lineno, text)
        accounting.check()
        if operations:
            raise ParseError("an operation table without its 'Throughput ... MB/sec' line: "
                             "the run did not finish", line=operations[0][4])
        return self.result(groups.results(), warnings)

    @staticmethod
    def _run(groups: ResultGroups, match, setup: dict, operations: list, lineno: int) -> None:
        params = {**setup, "clients": int(match.group(3)), "procs": int(match.group(4))}
        if match.group(2):
            params["sync"] = match.group(2)
        throughput = parse_number(match.group(1), line=lineno)
        if throughput <= 0:
            raise ParseError("throughput 0 MB/sec: the run did no work", line=lineno)
        result = groups.get(lineno, benchmark=None, params=params)
        result.add("throughput_mb_per_s", throughput, "MB/s", True)
        result.add("max_latency_ms", parse_number(match.group(5), line=lineno), "ms", False)
        for name, count, avg, peak, op_line in operations:
            result.touch(op_line)
            key = slug(name)
            result.add(f"{key}_count", count, "", True)
            result.add(f"{key}_avg_latency_ms", avg, "ms", False)
            result.add(f"{key}_max_latency_ms", peak, "ms", False)

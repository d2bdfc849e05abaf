"""cyclictest (rt-tests) output: per-thread latencies, and the histogram with `-h`.

    # /dev/cpu_dma_latency set to 0us
    policy: other/other: loadavg: 1.79 0.66 0.25 8/176 17716
    T: 0 (17715) P: 0 I:1000 C:    990 Min:     30 Act:   64 Avg:   80 Max:    5423

Without `-q` the T: lines are redrawn (with terminal escapes) as the run goes: each thread's
last line is its result; the earlier ones and the `policy:` lines are progress, skipped. With
`-h N` cyclictest prints the histogram (one row per microsecond, a column per thread) and
`# Min/Avg/Max Latencies:` summary rows instead. One result set per thread: benchmark
`cyclictest`, params thread, threads, and priority and interval_us where the T: line says;
metrics latency_min_us, latency_avg_us, latency_max_us, cycles (T: lines) or
histogram_samples and histogram_overflows (summary), and series["latency_histogram"] =
{"columns": ["latency_us", "count"], "rows"} (runs joined by a harness --repeat add their
counts; their other figures are one sample each). The overflow cycle numbers are skipped. A thread
that ran no cycle is refused, as is any line holding a number outside these shapes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .base import (
    Accounting,
    ParseError,
    Parser,
    ParseResult,
    ResultGroups,
    ResultSet,
    Warnings,
    head_lines,
    numbered_lines,
)

ESCAPE_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
THREAD_RE = re.compile(r"T:\s*(\d+)\s*\(\s*\d+\)\s*P:\s*(\d+)\s*I:\s*(\d+)\s*C:\s*(\d+)\s*"
                       r"Min:\s*(\d+)\s*Act:\s*(\d+)\s*Avg:\s*(\d+)\s*Max:\s*(\d+)")
BUCKET_RE = re.compile(r"\d{6}(?:\s+\d{6,})+")
SUMMARY_RE = re.compile(r"# (Total|Min Latencies|Avg Latencies|Max Latencies|"
                        r"Histogram Overflows):((?:\s+\d+)+)")
DMA_RE = re.compile(r"# /dev/cpu_dma_latency set to \d+us")
SKIPPED_RE = re.compile(r"# Histogram|"
                        r"# Histogram Overflow at cycle number:"
                        r"|# Thread \d+:[\d\s]*(?:# \d+ others)?"
                        r"|policy: \S+: loadavg: .*")
SUMMARY_NAMES = {"Min Latencies": "latency_min_us", "Avg Latencies": "latency_avg_us",
                 "Max Latencies": "latency_max_us", "Total": "histogram_samples",
                 "Histogram Overflows": "histogram_overflows"}


class CyclictestParser(Parser):
    name = "cyclictest"
    version = 1
    description = "cyclictest output"

    def detect(self, head: str) -> float:
        lines = [ESCAPE_RE.sub("", text) for text in head_lines(head)]
        if any(THREAD_RE.fullmatch(text) or SUMMARY_RE.fullmatch(text) for text in lines):
            return 0.98
        return 0.0

    def parse(self, lines: Iterable[str]) -> ParseResult:
        """Runs joined one after the other (a harness --repeat) each start with their
        `# /dev/cpu_dma_latency` line: each run's figures are one sample per thread."""
        warnings = Warnings()
        accounting = Accounting(self.description)
        groups = ResultGroups()
        run = _Run()
        for lineno, raw in numbered_lines(lines, warnings):
            text = ESCAPE_RE.sub("", raw).strip()
            if match := THREAD_RE.fullmatch(text):
                run.finals[int(match.group(1))] = (lineno, match)  # the last line is the total
            elif BUCKET_RE.fullmatch(text):
                cells = [int(cell) for cell in text.split()]
                run.buckets.append((cells[0], cells[1:]))
            elif match := SUMMARY_RE.fullmatch(text):
                run.summary[match.group(1)] = (lineno, [int(c) for c in match.group(2).split()])
            elif DMA_RE.fullmatch(text):
                run = self._flush(run, groups)
            elif not SKIPPED_RE.fullmatch(text):
                accounting.unknown(lineno, text)
        accounting.check()
        self._flush(run, groups)
        return self.result(groups.results(), warnings)

    @classmethod
    def _flush(cls, run: _Run, groups: ResultGroups) -> _Run:
        count = max(len(run.finals), len(run.summary.get("Min Latencies", (0, []))[1]))
        for thread in range(count):
            cls._thread(thread, count, run, groups)
        return _Run()

    @staticmethod
    def _thread(thread: int, count: int, run: _Run, groups: ResultGroups) -> None:
        params = {"threads": count, "thread": thread}
        if thread in run.finals:
            lineno, match = run.finals[thread]
            cycles = int(match.group(4))
            if cycles == 0:
                raise ParseError(f"thread {thread} ran no cycle: no latency was measured",
                                 line=lineno)
            params.update(priority=int(match.group(2)), interval_us=int(match.group(3)))
            result = groups.get(lineno, benchmark="cyclictest", params=params)
            for name, group in (("latency_min_us", 5), ("latency_avg_us", 7),
                                ("latency_max_us", 8)):
                result.add(name, int(match.group(group)), "us", False)
            result.add("cycles", cycles, "", True)
        else:
            found: list[tuple[str, int, int]] = []
            for label, name in SUMMARY_NAMES.items():
                summary_line, cells = run.summary.get(label, (None, []))
                if summary_line is None or thread >= len(cells):
                    raise ParseError(f"the '# {label}:' summary has no column for thread "
                                     f"{thread}", line=summary_line)
                found.append((name, summary_line, cells[thread]))
            result = groups.get(found[0][1], benchmark="cyclictest", params=params)
            for name, summary_line, value in found:
                result.touch(summary_line)
                result.add(name, value, "us" if name.endswith("_us") else "", False)
        if run.buckets:
            _add_histogram(result, [(bucket, counts[thread]) for bucket, counts in run.buckets
                                    if thread < len(counts)])


class _Run:
    def __init__(self):
        self.finals: dict[int, tuple[int, re.Match]] = {}
        self.summary: dict[str, tuple[int | None, list[int]]] = {}
        self.buckets: list[tuple[int, list[int]]] = []


def _add_histogram(result: ResultSet, rows: list[tuple[int, int]]) -> None:
    """Each run's histogram adds its counts: the series counts every sample of the setup."""
    series = result.series.setdefault("latency_histogram",
                                      {"columns": ["latency_us", "count"], "rows": []})
    counts = dict(series["rows"])
    for bucket, count in rows:
        counts[bucket] = counts.get(bucket, 0) + count
    series["rows"] = [[bucket, count] for bucket, count in sorted(counts.items())]

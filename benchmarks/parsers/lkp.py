"""LKP (lkp-tests, the kernel test robot's harness) result files.

`stats.json` of a result directory: metric -> number, or a list of numbers (one per run):

    {"hackbench.throughput": 123456.5, "mpstat.cpu.all.irq%": [0.41, 0.40]}

Every number is a sample of its metric, as LKP measured it (never a summary). The benchmark is
the one metric prefix that is not a monitor of LKP's (mpstat, vmstat, perf-stat, ...), else the
uploader's.

A test's raw output with LKP's framing, each concurrent instance's output after an `Instance:`
line, inside `Iterations:` blocks:

    Iterations: 1
    Instance: 0
    Time: 35.123
    Instance: 1
    Time: 35.410
    Iterations: 2
    ...

Each instance's text is read by the format its own output has (hackbench, schbench, ...); the
instance becomes a param (`instance`), so concurrent instances are kept apart, never pooled as
repeats; iterations of one instance are its repeats.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable

from .base import ParseError, Parser, ParseResult, ResultSet, Warnings, clean_line, head_lines

MAX_STATS_CHARS = 64 * 1024 * 1024
MONITORS = {
    "mpstat", "vmstat", "proc-vmstat", "perf-stat", "perf-profile", "perf-sched", "sched_debug",
    "meminfo", "slabinfo", "numa-meminfo", "numa-vmstat", "numa-numastat", "turbostat",
    "interrupts", "softirqs", "time", "uptime", "iostat", "cpuidle", "boot-time", "kmsg",
    "dmesg", "pmeter", "diskstats", "lock_stat", "latency_stats", "cpufreq", "sysctl",
    "nfsstat", "sar", "ftrace", "last_state", "stderr", "boot-meminfo", "memmap", "buddyinfo",
    "pagetypeinfo", "zoneinfo", "schedstat", "perf-c2c", "perf-sched-stat", "cpu-hotplug",
}
ITERATION_RE = re.compile(r"Iterations?:\s*(\d+)", re.I)
INSTANCE_RE = re.compile(r"Instance:\s*(\d+)", re.I)


class LkpStatsParser(Parser):
    name = "lkp-stats"
    version = 1
    description = "LKP stats.json"

    def detect(self, head: str) -> float:
        text = head.lstrip()
        if not text.startswith("{"):
            return 0.0
        keys = re.findall(r'"([\w.%:/+-]+)"\s*:', text[:HEAD_PROBE])
        prefixes = {key.split(".", 1)[0] for key in keys if "." in key}
        return 0.9 if prefixes & MONITORS else 0.0

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        parts, size = [], 0
        for number, line in enumerate(lines, 1):
            text = clean_line(line, number)
            size += len(text)
            if size > MAX_STATS_CHARS:
                raise ParseError("stats.json larger than 64 MB", line=number)
            parts.append(text)
        try:
            document = json.loads("\n".join(parts))
        except json.JSONDecodeError as exc:
            raise ParseError(f"not valid JSON: {exc.msg}", line=getattr(exc, "lineno", None)) \
                from None
        if not isinstance(document, dict):
            raise ParseError("stats.json must be an object of metric -> value(s)", line=1)
        result = ResultSet(benchmark=_testcase(document), line=1)
        for metric, value in document.items():
            if len(metric) > 100:
                warnings.add(None, f"{metric[:40]}...: metric name longer than 100 "
                                   "characters, not stored")
                continue
            for sample in _samples(metric, value):
                result.add(metric, sample, unit="%" if metric.endswith("%") else None)
        result.touch(1)
        return self.result([result], warnings)


HEAD_PROBE = 16 * 1024


def _samples(metric: str, value) -> list[float]:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise ParseError(f"{metric}: an empty list of values")
    for item in values:
        if isinstance(item, bool) or not isinstance(item, int | float) or \
                not math.isfinite(item):
            raise ParseError(f"{metric}: {str(item)[:40]!r} is not a number")
    return [float(item) for item in values]


def _testcase(document: dict) -> str | None:
    prefixes = {key.split(".", 1)[0] for key in document if "." in key}
    candidates = prefixes - MONITORS
    return candidates.pop() if len(candidates) == 1 else None


class LkpOutputParser(Parser):
    name = "lkp-output"
    version = 1
    description = "LKP raw test output (Iterations:/Instance: framing)"

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        # The framing decides: the tool's own format inside it would pool the instances, so
        # this scores above any tool's detector.
        instances = sum(1 for t in lines if INSTANCE_RE.fullmatch(t))
        return 1.0 if instances else 0.0

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        segments = _segments(lines)
        merged: dict[str, ResultSet] = {}
        formats = set()
        for (iteration, instance), (first, texts) in segments.items():
            parsed = _parse_segment(texts, first, iteration, instance)
            formats.add(parsed.format)
            for warning in parsed.warnings:
                warnings.add(None, f"instance {instance}, iteration {iteration}: {warning}")
            for found in parsed.results:
                _merge(merged, found, instance, first)
        if len(formats) > 1:
            raise ParseError(f"instances read as different formats ({', '.join(sorted(formats))})")
        return self.result(list(merged.values()), warnings)


def _segments(lines: Iterable[str]) -> dict[tuple[int, int], tuple[int, list[str]]]:
    segments: dict[tuple[int, int], tuple[int, list[str]]] = {}
    iteration, current = 1, None
    for number, raw in enumerate(lines, 1):
        text = clean_line(raw, number)
        stripped = text.strip()
        if match := ITERATION_RE.fullmatch(stripped):
            iteration, current = int(match.group(1)), None
            continue
        if match := INSTANCE_RE.fullmatch(stripped):
            key = (iteration, int(match.group(1)))
            if key in segments:
                raise ParseError(f"instance {key[1]} appears twice in iteration {iteration}",
                                 line=number)
            current = segments[key] = (number + 1, [])
            continue
        if current is None:
            if stripped:
                raise ParseError("output outside any `Instance:` block", line=number)
            continue
        current[1].append(text)
    if not segments:
        raise ParseError("no `Instance:` blocks found")
    return segments


def _parse_segment(texts: list[str], first: int, iteration: int, instance: int):
    from .registry import parse_text  # the registry imports this module

    try:
        return parse_text("\n".join(texts) + "\n")
    except ParseError as exc:
        line = exc.line + first - 1 if exc.line else first
        raise ParseError(f"instance {instance}, iteration {iteration}: {exc.message}",
                         line=line) from None


def _merge(merged: dict, found: ResultSet, instance: int, first: int) -> None:
    params = {**found.params, "instance": instance}
    key = json.dumps([found.benchmark, found.kernel, found.policy, params, found.tunables],
                     sort_keys=True, default=str)
    target = merged.get(key)
    if target is None:
        target = merged[key] = ResultSet(
            benchmark=found.benchmark, kernel=found.kernel, policy=found.policy,
            machine=found.machine, params=params, tunables=dict(found.tunables),
            line=found.line + first - 1, missing=list(found.missing))
    for metric, values in found.metrics.items():
        for value in values:
            target.add(metric, value, found.units.get(metric),
                       found.higher_is_better.get(metric))
    for line in found.source_lines:
        target.touch(line + first - 1)

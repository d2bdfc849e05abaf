"""`name: value` lines, one metric per line, as the simulator's text output prints them.

    throughput_ops_per_s: 70590.798
    latency_us: 15.97

    throughput_ops_per_s: 70591.746
    latency_us: 15.97

Names are snake_case; a repeated name is another sample of the same metric (blank lines between
repeats are optional). Known setup knobs (`loops: 10000`, see units.KNOWN_PARAMS) are params for
the lines after them; everything else is a metric whose unit follows from its name.

A line may also carry several pairs, as the harness's yieldloop and pipeline demo print them:

    tasks: 3  cpus: 2  yields: 548747  yields/s: 547629  switches/s: 312146
    time: 5120 (ms)  cpu_utilization: 1.02  stages: 4  compressor: bzip2

`x/s` becomes `x_per_s`, a unit in parentheses becomes the name's suffix (`time_ms`), and a word
value (`compressor: bzip2`) is a param.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .base import (
    NUMBER,
    Accounting,
    Parser,
    ParseResult,
    ResultGroups,
    Warnings,
    fraction,
    head_lines,
    numbered_lines,
    parse_number,
)
from .units import KNOWN_PARAMS

PAIR = rf"([a-z][a-z0-9_/]*)\s*:\s*({NUMBER}|[A-Za-z][\w.+-]*)(?:\s*\(([a-z]+)\))?"
PAIR_RE = re.compile(PAIR)
LINE_RE = re.compile(rf"{PAIR}(?:\s+{PAIR})*")
UNITS = {"ns", "us", "ms", "s"}


def _metric_name(name: str, unit: str | None) -> str:
    name = name[:-2] + "_per_s" if name.endswith("/s") else name.replace("/", "_per_")
    if unit in UNITS and not name.endswith(f"_{unit}"):
        name = f"{name}_{unit}"
    return name


class MetricLinesParser(Parser):
    name = "metric-lines"
    version = 2
    description = "'metric_name: value' lines"

    def detect(self, head: str) -> float:
        share = fraction(head_lines(head), lambda text: bool(LINE_RE.fullmatch(text)))
        return 0.85 * share

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        groups = ResultGroups()
        params: dict = {}
        accounting = Accounting(self.description)
        for lineno, text in numbered_lines(lines, warnings):
            if not LINE_RE.fullmatch(text.strip()):
                warnings.add(lineno, "ignored unrecognised line")
                accounting.unknown(lineno, text)
                continue
            metrics = []
            for raw_name, raw_value, unit in PAIR_RE.findall(text):
                name = _metric_name(raw_name, unit or None)
                if name in KNOWN_PARAMS or not re.fullmatch(NUMBER, raw_value):
                    value = raw_value if not re.fullmatch(NUMBER, raw_value) else \
                        parse_number(raw_value, line=lineno)
                    params = {**params, name: value}
                else:
                    metrics.append((name, parse_number(raw_value, line=lineno)))
            if metrics:
                target = groups.get(lineno, params=params)
                for name, value in metrics:
                    target.add(name, value)
        accounting.check()  # a line with numbers in another shape might be another tool's
        return self.result(groups.results(), warnings)

"""`name: value` lines, one metric per line, as the simulator's text output prints them.

    throughput_ops_per_s: 70590.798
    latency_us: 15.97

    throughput_ops_per_s: 70591.746
    latency_us: 15.97

Names are snake_case; a repeated name is another sample of the same metric (blank lines between
repeats are optional). Known setup knobs (`loops: 10000`, see units.KNOWN_PARAMS) are params for
the lines after them; everything else is a metric whose unit follows from its name.
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
    fraction,
    head_lines,
    numbered_lines,
    parse_number,
)
from .units import KNOWN_PARAMS

LINE_RE = re.compile(rf"([a-z][a-z0-9_]*)\s*:\s*({NUMBER})")


class MetricLinesParser(Parser):
    name = "metric-lines"
    version = 1
    description = "'metric_name: value' lines"

    def detect(self, head: str) -> float:
        share = fraction(head_lines(head), lambda text: bool(LINE_RE.fullmatch(text)))
        return 0.85 * share

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        groups = ResultGroups()
        params: dict = {}
        for lineno, text in numbered_lines(lines, warnings):
            match = LINE_RE.fullmatch(text.strip())
            if not match:
                warnings.add(lineno, "ignored unrecognised line")
                continue
            name, value = match.group(1), parse_number(match.group(2), line=lineno)
            if name in KNOWN_PARAMS:
                params = {**params, name: value}
            else:
                groups.get(lineno, params=params).add(name, value)
        return self.result(groups.results(), warnings)

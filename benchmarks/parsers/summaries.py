"""Published statistics without their samples (mmtests tables, kernel test robot reports).

A `SummarySet` is a `ResultSet` that may also carry summaries: one published statistic per
metric (`amean`, `hmean`, `gmean`, `bamean-NN`, `median`, `mean`, `min`, `max`), its value, the
relative stddev when the source gives it, the number of repeats when known and the source's own
significance mark. A summary is never turned into samples.

It also carries what makes a column of such a table its own setup: the config name of an
mmtests column (`label`), the commit of a robot report's column (`commit`: id as printed and
subject), and whether the column is the table's baseline (the one changes are measured
against).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .base import ParseError, Parser, ParseResult, ResultSet, Warnings
from .units import metric_info

STATISTIC_RE = re.compile(r"amean|hmean|gmean|bamean-\d{1,2}|median|mean|min|max")


def summary_dict(*, statistic: str, value: float, stddev_pct: float | None = None,
                 n: int | None = None, significant: bool | None = None,
                 line: int | None = None) -> dict:
    """A checked summary in the run JSON's shape (plus the line it was read from)."""
    if not STATISTIC_RE.fullmatch(statistic):
        raise ParseError(f"unknown statistic {statistic!r}", line=line)
    for name, number in (("value", value), ("stddev_pct", stddev_pct)):
        if number is not None and not math.isfinite(number):
            raise ParseError(f"{statistic} {name} {number} is not a finite number", line=line)
    if stddev_pct is not None and stddev_pct < 0:
        raise ParseError(f"a negative relative stddev ({stddev_pct}%)", line=line)
    if n is not None and n < 1:
        raise ParseError(f"a summary of {n} repeats", line=line)
    return {"statistic": statistic, "value": float(value),
            "stddev_pct": None if stddev_pct is None else float(stddev_pct),
            "n": n, "significant": significant}


@dataclass
class SummarySet(ResultSet):
    summaries: dict[str, dict] = field(default_factory=dict)
    label: str = ""
    commit: dict | None = None
    baseline: bool = False
    # Where the table came from (the 0-day links of a robot report), kept with the run.
    provenance: dict = field(default_factory=dict)

    def add_summary(self, metric: str, summary: dict, *, unit: str | None = None,
                    higher_is_better: bool | None = None) -> None:
        if metric in self.summaries or metric in self.metrics:
            raise ParseError(f"{metric} is given twice for the same column",
                             line=summary.get("line") or self.line or None)
        default_unit, default_hib = metric_info(metric) \
            if unit is None or higher_is_better is None else (unit, higher_is_better)
        self.summaries[metric] = summary
        self.units[metric] = default_unit if unit is None else unit
        self.higher_is_better[metric] = default_hib if higher_is_better is None \
            else higher_is_better

    def to_dict(self) -> dict:
        data = super().to_dict()
        for name, summary in self.summaries.items():
            data["metrics"][name] = {
                "unit": self.units.get(name, ""),
                "higher_is_better": self.higher_is_better.get(name, False),
                "values": [], "summary": dict(summary)}
        data.update(label=self.label, commit=self.commit, baseline=self.baseline,
                    provenance=dict(self.provenance))
        return data


class SummaryParser(Parser):
    """A parser whose sets may hold summaries only: those count as results too."""

    def result(self, results: list[ResultSet], warnings: Warnings) -> ParseResult:
        results = [r for r in results
                   if r.metrics or r.series or getattr(r, "summaries", None)]
        if not results:
            raise ParseError(f"no {self.description or self.name} results found")
        for result_set in results:
            if not result_set.source_lines and result_set.line:
                result_set.touch(result_set.line)
        return ParseResult(self.name, self.version, results, warnings.as_list())


def printed_precision(token: str) -> float:
    """Half a unit of a printed number's last digit (`0.41` -> 0.005, `2.1e+05` -> 5000): how
    far rounding for print may have moved it."""
    mantissa, _, exponent = token.lower().lstrip("+-").partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 0.5 * 10.0 ** (int(exponent or 0) - decimals)


def relative_change_range(base: str, other: str) -> tuple[float, float] | None:
    """The smallest and largest change in % of `other` against `base` that their printed
    values allow; None when the base may be zero (no ratio to check)."""
    b, o = float(base), float(other)
    sb, so = printed_precision(base), printed_precision(other)
    if b - sb <= 0:
        return None
    changes = [(oo - bb) / bb * 100 for bb in (b - sb, b + sb) for oo in (o - so, o + so)]
    return min(changes), max(changes)

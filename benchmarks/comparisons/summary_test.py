"""A test between two published summaries, where one is possible: Welch's t-test from each
side's mean, standard deviation and number of repeats. Pure scipy (regressions.detect uses it).

A summary that is not a mean (hmean, min, bamean-95, ...), or lacks its spread or its n, or
has fewer than two repeats, allows no test: the answer says "summary only, no test" and never
pretends a rank test on one value per side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

NO_TEST = "summary only, no test"
MEANS = ("amean", "mean")


@dataclass(frozen=True)
class SummaryTest:
    test: str | None  # "welch-t (from summaries)" or None
    p_value: float | None
    effect: float | None  # Cohen's d from the two standard deviations
    reason: str


def _moments(summary: dict) -> tuple[float, float, int] | None:
    if summary.get("statistic") not in MEANS:
        return None
    n, spread = summary.get("n"), summary.get("stddev_pct")
    if n is None or n < 2 or spread is None:
        return None
    mean = float(summary["value"])
    return mean, abs(mean) * float(spread) / 100, int(n)


def summary_test(sample: dict, baseline: dict) -> SummaryTest:
    """Welch's t-test of two published means, when both carry stddev_pct and n >= 2."""
    a, b = _moments(sample), _moments(baseline)
    if a is None or b is None:
        missing = "a mean with its stddev and n on both sides"
        return SummaryTest(None, None, None, f"{NO_TEST} (needs {missing})")
    from scipy import stats as scipy_stats

    (m1, s1, n1), (m2, s2, n2) = a, b
    if s1 == 0 and s2 == 0:
        return SummaryTest(None, None, None, f"{NO_TEST} (both spreads are zero)")
    result = scipy_stats.ttest_ind_from_stats(m1, s1, n1, m2, s2, n2, equal_var=False)
    pooled = math.sqrt((s1 ** 2 + s2 ** 2) / 2)
    effect = (m1 - m2) / pooled if pooled else None
    return SummaryTest("welch-t (from summaries)", float(result.pvalue), effect,
                       "Welch's t-test from the published means, stddevs and n (assumes "
                       "near-normal repeats)")

"""Good or bad? A step's samples against the good and bad sides' samples.

The same tests the comparisons use (benchmarks.analysis.stats.compare_samples: Mann-Whitney U,
Welch's t below five samples a side). A step is good when it differs significantly from the bad
side and not from the good side (bad the other way round). When it differs from neither, or from
both while lying between them, the honest answer is "can't tell": run more repeats (or the
change is not one commit). A step beyond one side (slower than the bad kernel, say) counts as
that side.
"""

from dataclasses import dataclass

import numpy as np

from benchmarks.analysis.stats import compare_samples

ALPHA = 0.05
GOOD, BAD, UNKNOWN = "good", "bad", "unknown"


@dataclass(frozen=True)
class Verdict:
    verdict: str
    reason: str
    p_good: float | None = None  # step vs good side
    p_bad: float | None = None  # step vs bad side
    test: str | None = None


def _p_value(sample: np.ndarray, side: np.ndarray) -> tuple[float | None, str | None]:
    result = compare_samples(sample, side)
    if result.p_value is not None:
        return result.p_value, result.test
    if sample.size >= 2 and side.size >= 2:  # both constant: equal or plainly different
        return (1.0 if float(sample[0]) == float(side[0]) else 0.0), "exact"
    return None, None


def _median(values: np.ndarray) -> float:
    return float(np.median(values))


def judge(step: np.ndarray, good: np.ndarray, bad: np.ndarray) -> Verdict:
    """The verdict of one step's samples (all repeats of its runs for the session's metric)."""
    if good.size < 2 or bad.size < 2:
        missing = "good" if good.size < 2 else "bad"
        return Verdict(UNKNOWN, f"can't tell: the {missing} side needs at least 2 samples "
                       "(submit runs of that kernel)")
    if step.size < 2:
        return Verdict(UNKNOWN, "can't tell: run more repeats (a step needs at least 2 "
                       "samples)")
    p_sides, _ = _p_value(good, bad)
    if p_sides is None or p_sides >= ALPHA:
        return Verdict(UNKNOWN, "can't tell: the good and bad sides do not differ "
                       f"significantly (p={p_sides:.3g}); run more repeats on both"
                       if p_sides is not None else "can't tell: no test possible")
    p_good, test = _p_value(step, good)
    p_bad, _ = _p_value(step, bad)
    differs_good, differs_bad = p_good < ALPHA, p_bad < ALPHA
    values = {"p_good": p_good, "p_bad": p_bad, "test": test}
    if differs_bad and not differs_good:
        return Verdict(GOOD, f"like the good side (p={p_good:.3g}), unlike the bad one "
                       f"(p={p_bad:.3g})", **values)
    if differs_good and not differs_bad:
        return Verdict(BAD, f"like the bad side (p={p_bad:.3g}), unlike the good one "
                       f"(p={p_good:.3g})", **values)
    if not differs_good:
        return Verdict(UNKNOWN, "can't tell: not significantly different from either side "
                       f"(p={p_good:.3g} vs good, p={p_bad:.3g} vs bad); run more repeats",
                       **values)
    low, high, here = _median(good), _median(bad), _median(step)
    if min(low, high) < here < max(low, high):
        return Verdict(UNKNOWN, "can't tell: between the good and bad sides, unlike both; "
                       "run more repeats (or the change is spread over several commits)",
                       **values)
    nearer_bad = abs(here - high) < abs(here - low)
    return Verdict(BAD if nearer_bad else GOOD, "beyond the {} side".format(
        "bad" if nearer_bad else "good"), **values)

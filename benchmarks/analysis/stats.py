"""Summary statistics of a run's samples."""

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    median: float
    stdev: float | None  # sample standard deviation; None with fewer than two samples
    minimum: float
    maximum: float

    @property
    def cv(self) -> float | None:
        if self.stdev is None or self.mean == 0:
            return None
        return self.stdev / abs(self.mean)


def summarize(values: Sequence[float]) -> Summary:
    """n, mean, median, sample stdev, min, max. An array('d') is read without copying it.

    A run holds a handful of samples, where numpy's cost per call is most of the work: up to
    SMALL_SAMPLE samples are summarised in plain Python with numpy's own arithmetic, so every
    figure is the same float numpy gives (small_summary says how, and when it leaves a
    sample to numpy).
    """
    if isinstance(values, list | tuple | array) and len(values) <= SMALL_SAMPLE:
        summary = small_summary(values)
        if summary is not None:
            return summary
    return numpy_summary(values)


def numpy_summary(values: Sequence[float]) -> Summary:
    """summarize, always through numpy."""
    data = np.frombuffer(values, dtype=np.float64) if _is_double_array(values) else np.asarray(
        values, dtype=np.float64
    )
    if data.size == 0:
        raise ValueError("cannot summarise an empty sample")
    if not np.isfinite(data).all():
        raise ValueError("samples must be finite numbers")
    return Summary(
        n=int(data.size),
        mean=float(data.mean()),
        median=median(data),
        stdev=float(data.std(ddof=1)) if data.size > 1 else None,
        minimum=float(data.min()),
        maximum=float(data.max()),
    )


# Up to this many samples summarize works in plain Python: a run seldom holds more, and beyond
# it numpy's vector work starts to pay for its cost per call.
SMALL_SAMPLE = 64
# Integers this small are floats exactly: converting one cannot round unlike numpy does.
EXACT_INTEGER = 2**53


def small_summary(values: Sequence[float]) -> Summary | None:
    """numpy_summary's figures, bit for bit, in plain Python (for at most 128 samples); None
    for a sample left to numpy: empty or not finite (numpy_summary says why), not plain floats
    or small integers, or holding both 0.0 and -0.0 where the minimum or maximum would have to
    pick one (numpy picks by position, in vectorised code)."""
    data = _plain_floats(values)
    if not data or len(data) > 128:
        return None
    ordered = sorted(data)
    low, high = ordered[0], ordered[-1]
    if (low == 0.0 or high == 0.0) and len({math.copysign(1.0, x) for x in data if x == 0}) > 1:
        return None
    n = len(data)
    mean = _numpy_sum(data) / n
    stdev = None
    if n > 1:  # np.std(ddof=1): the squared deviations' sum over n - 1, then its square root
        stdev = math.sqrt(_numpy_sum([d * d for d in [x - mean for x in data]]) / (n - 1))
    return Summary(n=n, mean=mean, median=_numpy_median(ordered), stdev=stdev,
                   minimum=low, maximum=high)


def _plain_floats(values: Sequence[float]) -> list[float] | None:
    """The values as finite floats, converted as np.asarray(values, dtype=float64) does; None
    when that is not certain."""
    if isinstance(values, array):
        data = values.tolist() if values.typecode == "d" else None
    elif all(value.__class__ is float for value in values):
        data = list(values)
    elif all(value.__class__ is float or (value.__class__ is int
                                          and -EXACT_INTEGER <= value <= EXACT_INTEGER)
             for value in values):
        data = [float(value) for value in values]
    else:
        data = None
    if data is None or not all(map(math.isfinite, data)):
        return None
    return data


def _numpy_sum(data: list[float]) -> float:
    """np.add.reduce of a float64 array of at most 128 values, in its order of operations:
    the identity 0.0 plus numpy's pairwise_sum (numpy/_core/src/umath/loops_utils.h.src).
    Under eight values that adds them one by one to -0.0; else it keeps eight running sums
    over strides of eight, joins them as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) and
    adds the values past the last whole stride one by one."""
    n = len(data)
    if n < 8:
        total = -0.0
        for value in data:
            total += value
        return 0.0 + total
    sums = data[:8]
    whole = n - n % 8
    for start in range(8, whole, 8):
        sums = [running + value for running, value in zip(sums, data[start:start + 8], strict=True)]
    total = ((sums[0] + sums[1]) + (sums[2] + sums[3])) + ((sums[4] + sums[5])
                                                           + (sums[6] + sums[7]))
    for value in data[whole:]:
        total += value
    return 0.0 + total


def _numpy_median(ordered: list[float]) -> float:
    """np.median of sorted values: the mean of the middle one or two (np.mean's sum, then
    the division by their count)."""
    n = len(ordered)
    if n % 2:
        return _numpy_sum([ordered[n // 2]]) / 1
    return _numpy_sum(ordered[n // 2 - 1:n // 2 + 1]) / 2


def summarize_many(groups: list[np.ndarray]) -> list[Summary]:
    """`summarize` for many samples at once: a few array operations instead of a few per group,
    which matters for a comparison of a thousand cells. Every group needs at least one value."""
    sizes = np.array([group.size for group in groups])
    if not groups or (sizes == 0).any():
        raise ValueError("cannot summarise an empty sample")
    flat = np.concatenate(groups)
    if not np.isfinite(flat).all():
        raise ValueError("samples must be finite numbers")
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    ordered = flat[np.lexsort((flat, np.repeat(np.arange(len(groups)), sizes)))]
    means = np.add.reduceat(flat, starts) / sizes
    squares = np.add.reduceat((flat - np.repeat(means, sizes)) ** 2, starts)
    medians = (ordered[starts + (sizes - 1) // 2] + ordered[starts + sizes // 2]) / 2
    return [
        Summary(n=int(n), mean=float(mean), median=float(med),
                stdev=float(np.sqrt(sq / (n - 1))) if n > 1 else None,
                minimum=float(ordered[start]), maximum=float(ordered[start + n - 1]))
        for n, mean, med, sq, start in zip(sizes, means, medians, squares, starts, strict=True)
    ]


SMALL = 2_000_000
BLOCK = 1_000_000


def median(data: np.ndarray) -> float:
    """The exact median, without copying a large sample.

    np.median copies its input; for tens of millions of samples that doubles the memory of an
    upload. Instead: bracket the median using a strided subsample, count what lies below the
    bracket, sort only what lies inside it, and fall back to np.median if the bracket missed.
    """
    n = data.size
    if n <= SMALL:
        return float(np.median(data))
    low, high = np.quantile(data[:: max(1, n // 100_000)], [0.4, 0.6])
    below, inside = 0, []
    for start in range(0, n, BLOCK):
        block = data[start:start + BLOCK]
        below += int(np.count_nonzero(block < low))
        inside.append(block[(block >= low) & (block <= high)])
    middle = np.sort(np.concatenate(inside))
    wanted = [(n - 1) // 2 - below, n // 2 - below]
    if not all(0 <= k < middle.size for k in wanted):
        return float(np.median(data))
    return float((middle[wanted[0]] + middle[wanted[1]]) / 2)


def _is_double_array(values) -> bool:
    return getattr(values, "typecode", None) == "d"


# --------------------------------------------------------------------------- comparisons

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_BUDGET = 4_000_000  # resamples x sample size: keeps a 200-series comparison quick
TINY = 5  # below this many samples per side, Mann-Whitney cannot reach p < 0.05


def bootstrap_ci(
    values: np.ndarray, statistic: str, *, seed: int, level: float = 0.95
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of `statistic`, reproducible for a given seed.

    Fewer resamples are drawn for very large samples (at least 200), where the CI is narrow
    anyway; None with fewer than two samples.
    """
    n = values.size
    if n < 2:
        return None
    resamples = max(200, min(BOOTSTRAP_RESAMPLES, BOOTSTRAP_BUDGET // n))
    rng = np.random.default_rng(seed)
    draws = values[rng.integers(0, n, size=(resamples, n))]
    if statistic == "median":
        estimates = np.median(draws, axis=1)
    elif statistic == "mean":
        estimates = draws.mean(axis=1)
    else:
        estimates = draws.min(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(estimates, [tail, 100 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class Comparison:
    test: str | None  # "mann-whitney-u", "welch-t" or None when no test is possible
    p_value: float | None
    effect_name: str | None
    effect: float | None
    reason: str


def compare_samples(sample: np.ndarray, baseline: np.ndarray) -> Comparison:
    """Is `sample` different from `baseline`? Two-sided, with an effect size.

    Mann-Whitney U makes no normality assumption, so it is the default. With fewer than five
    samples on a side its smallest possible p is above 0.05, so Welch's t-test is used instead
    (and says so: it assumes roughly normal samples).
    """
    from scipy import stats as scipy_stats

    n1, n2 = sample.size, baseline.size
    if n1 < 2 or n2 < 2:
        return Comparison(None, None, None, None, "fewer than 2 samples on a side: no test")
    if np.ptp(sample) == 0 and np.ptp(baseline) == 0:
        return Comparison(None, None, None, None, "both samples are constant: no test needed")
    if min(n1, n2) < TINY:
        result = scipy_stats.ttest_ind(sample, baseline, equal_var=False)
        pooled = np.sqrt((sample.var(ddof=1) + baseline.var(ddof=1)) / 2)
        effect = float((sample.mean() - baseline.mean()) / pooled) if pooled else None
        return Comparison("welch-t", float(result.pvalue), "cohen-d", effect,
                          f"n={min(n1, n2)} < {TINY}: Welch's t-test (assumes near-normal "
                          "samples); Mann-Whitney U cannot reach p < 0.05 this small")
    result = scipy_stats.mannwhitneyu(sample, baseline, alternative="two-sided")
    # +1: every sample above every baseline value; -1: every one below.
    rank_biserial = float(2 * result.statistic / (n1 * n2) - 1)
    return Comparison("mann-whitney-u", float(result.pvalue), "rank-biserial", rank_biserial,
                      "Mann-Whitney U, two-sided: no normality assumption")


def geometric_mean(ratios: list[float]) -> float | None:
    positive = [r for r in ratios if r and r > 0]
    if not positive:
        return None
    return float(np.exp(np.mean(np.log(positive))))

"""Summary statistics of a run's samples."""

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
    """n, mean, median, sample stdev, min, max. An array('d') is read without copying it."""
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

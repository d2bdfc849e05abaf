"""Change points in one series: samples grouped by kernel, kernels in natural order.

Pure numpy/scipy (no Django), so the bench and tests feed it arrays directly.

Method (see docs/regressions.md):
1. Candidates: binary segmentation with the E-divisive means statistic (Matteson & James 2014,
   as in MongoDB's and Apache Otava's performance CI), splitting only between kernels. The
   statistic compares distances across a split with distances within each side, so it needs no
   normality and sees a change in level or spread.
2. Confirmation: the candidate's good side (its kernel and up to WINDOW-1 earlier kernels in the
   same segment) against its bad side (up to WINDOW kernels from the change on), with the test
   comparisons use (benchmarks.analysis.stats.compare_samples: Mann-Whitney U, Welch for tiny
   samples),
   the effect size that test reports, and a minimum relative change. Pooling a few kernels per
   side is Perfherder's windowed t-test idea: five repeats of one kernel are too few to see a
   10% change at 10% CV; five kernels of five repeats are not.
3. A side whose boundary kernel has a single value cannot be tested per kernel: such a change is
   reported only when both windows hold two or more values, separate completely and differ by
   UNREPEATED_MIN_CHANGE, and is marked `needs_repeats`.

Bounds (docs/regressions.md, "Bounds"): the search holds at most SEARCH_MAX_SAMPLES values of a
series (each kernel thinned to an evenly spaced, deterministic subsample of at least
PER_KERNEL_MIN values) over its newest MAX_KERNELS kernels, and never builds an n x n matrix:
distances are summed in row blocks of at most BLOCK cells. The true number of values per kernel
(`sizes`) still decides what needs repeats and is what findings report.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from benchmarks.analysis import stats

WINDOW = 8  # kernels per side at most
ALPHA = 0.002  # the confirmation test's threshold (the split was chosen on the same data)
MIN_CHANGE = 0.02  # |bad/good - 1| below this is noise whatever the p-value says
MIN_EFFECT = 0.3  # |rank-biserial| (or |Cohen's d| for Welch) at least this
UNREPEATED_MIN_CHANGE = 0.10
BOOTSTRAP = 400
VERDICT_ALPHA = 0.05
MIN_REPEATS = 2  # values a kernel at the change needs before a change can be a regression
SEARCH_MAX_SAMPLES = 4000  # values of one series the search holds at most
PER_KERNEL_MIN = 5
PER_KERNEL_MAX = 2000
MAX_KERNELS = SEARCH_MAX_SAMPLES // PER_KERNEL_MIN  # newest kernels searched
BLOCK = 1 << 18  # cells of one block of the distance sums (2 MiB of float64)


@dataclass(frozen=True)
class Thresholds:
    """What makes a change a finding and a submission a regression (per benchmark; see
    regressions.models.BenchmarkThresholds)."""

    min_change: float = MIN_CHANGE
    alpha: float = ALPHA
    min_effect: float = MIN_EFFECT
    min_repeats: int = MIN_REPEATS
    verdict_alpha: float = VERDICT_ALPHA
    source: str = "default"

    def as_dict(self) -> dict:
        return {"min_change": self.min_change, "alpha": self.alpha,
                "min_effect": self.min_effect, "min_repeats": self.min_repeats,
                "verdict_alpha": self.verdict_alpha, "source": self.source}


DEFAULT_THRESHOLDS = Thresholds()


def thinned(values: np.ndarray, limit: int) -> np.ndarray:
    """At most `limit` values, evenly spaced over the array (deterministic, order kept)."""
    if values.size <= limit:
        return values
    return values[np.linspace(0, values.size - 1, limit).round().astype(np.int64)]


def per_kernel_limit(kernels: int) -> int:
    """Values kept per kernel so that a search over `kernels` kernels stays bounded."""
    return int(min(PER_KERNEL_MAX, max(PER_KERNEL_MIN, SEARCH_MAX_SAMPLES // max(1, kernels))))


@dataclass(frozen=True)
class ChangePoint:
    index: int  # the first kernel after the change (the bad one); index - 1 is the good one
    change: float  # median(bad side) / median(good side)
    ci95: tuple[float, float] | None
    p_value: float | None
    effect: float | None
    test: str | None
    needs_repeats: bool
    good_kernels: tuple[int, ...]  # indices of the kernels in the good window
    bad_kernels: tuple[int, ...]
    n_tested: tuple[int, int] = (0, 0)  # values the test saw (good, bad) after thinning


def energy_split(values: np.ndarray, bounds: np.ndarray) -> tuple[int, float]:
    """The sample boundary (one of `bounds`) maximising the E-divisive statistic, and its value.

    `values` are one segment's samples in kernel order; `bounds` the candidate split positions
    (kernel starts, excluding 0 and len). Every split is scored from two per-row sums of the
    distance matrix (the whole row, and the part left of the diagonal), computed in blocks of
    at most BLOCK cells: O(n^2) time, O(n) memory beyond one block."""
    size = values.size
    rows, lower = _distance_row_sums(values)
    row_cum = np.cumsum(rows)
    total = row_cum[-1]
    m = bounds.astype(np.float64)
    n = size - m
    within_left = 2 * np.cumsum(lower)[bounds - 1]  # both triangles of the left square
    cross = row_cum[bounds - 1] - within_left
    within_right = total - within_left - 2 * cross
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_left = np.where(m > 1, within_left / (m * (m - 1)), 0.0)
        mean_right = np.where(n > 1, within_right / (n * (n - 1)), 0.0)
        energy = 2 * cross / (m * n) - mean_left - mean_right
    score = m * n / size * energy
    best = int(np.argmax(score))
    return int(bounds[best]), float(score[best])


def _distance_row_sums(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each i: sum_j |x_i - x_j| and sum_{j<i} |x_i - x_j|."""
    size = values.size
    rows, lower = np.empty(size), np.empty(size)
    step = max(1, BLOCK // max(1, size))
    for start in range(0, size, step):
        stop = min(size, start + step)
        block = np.abs(values[start:stop, None] - values[None, :])
        rows[start:stop] = block.sum(axis=1)
        left = block[:, :stop]
        left[np.arange(stop - start)[:, None] + start <= np.arange(stop)[None, :]] = 0.0
        lower[start:stop] = left.sum(axis=1)
    return rows, lower


def _median(values: np.ndarray, axis: int = -1) -> np.ndarray | float:
    """np.median without its per-call overhead, which dominates on arrays of a few dozen."""
    ordered = np.sort(values, axis=axis)
    size = values.shape[axis]
    middle = np.take(ordered, [(size - 1) // 2, size // 2], axis=axis)
    return middle.mean(axis=axis)


def _ratio_ci(good: np.ndarray, bad: np.ndarray, seed: int) -> tuple[float, float] | None:
    """Percentile bootstrap CI of median(bad)/median(good); None when a side is a single value
    or the good side's median can be zero."""
    if good.size < 2 or bad.size < 2:
        return None
    rng = np.random.default_rng(seed)
    good_medians = _median(good[rng.integers(0, good.size, (BOOTSTRAP, good.size))])
    bad_medians = _median(bad[rng.integers(0, bad.size, (BOOTSTRAP, bad.size))])
    if (good_medians == 0).any():
        return None
    low, high = np.percentile(bad_medians / good_medians, [2.5, 97.5])
    return float(low), float(high)


class Series:
    """One series' groups, with what the segmentation needs precomputed.

    `sizes` are the true numbers of values per kernel when the groups are already thinned
    (regressions.series reads a bounded subsample); by default the groups' own sizes."""

    def __init__(self, groups: Sequence[np.ndarray], *, sizes: Sequence[int] | None = None,
                 thresholds: Thresholds = DEFAULT_THRESHOLDS):
        arrays = [np.asarray(group, dtype=np.float64) for group in groups]
        limit = per_kernel_limit(len(arrays))
        self.groups = [thinned(group, limit) for group in arrays]
        self.true_sizes = np.array(sizes if sizes is not None else [g.size for g in arrays])
        self.thresholds = thresholds
        self.sizes = np.array([group.size for group in self.groups])
        self.starts = np.concatenate(([0], np.cumsum(self.sizes)))
        self.flat = np.concatenate(self.groups) if self.groups else np.empty(0)

    def window(self, kernels: range) -> np.ndarray:
        return self.flat[self.starts[kernels.start]:self.starts[kernels.stop]]

    def best_split(self, lo: int, hi: int) -> int:
        """The kernel index in (lo, hi) where the segment [lo, hi) most likely changes."""
        values = self.flat[self.starts[lo]:self.starts[hi]]
        bounds = self.starts[lo + 1:hi] - self.starts[lo]
        at, _ = energy_split(values, bounds)
        return lo + 1 + int(np.searchsorted(bounds, at))

    def local_split(self, lo: int, hi: int) -> int | None:
        """The boundary in (lo, hi) whose local windows differ most, if significantly so.

        Mann-Whitney U of each boundary's windows (up to WINDOW kernels a side), counted by
        binary search in the sorted good window: no pairwise matrix."""
        best_z, best_index = 0.0, None
        for index in range(lo + 1, hi):
            good = self.window(range(max(lo, index - WINDOW), index))
            bad = self.window(range(index, min(hi, index + WINDOW)))
            m, n = float(bad.size), float(good.size)
            if m < 2 or n < 2:
                continue
            ordered = np.sort(good)
            u = float((np.searchsorted(ordered, bad, "left")
                       + np.searchsorted(ordered, bad, "right")).sum()) / 2
            if abs(2 * u / (m * n) - 1) < self.thresholds.min_effect:
                continue
            z = abs(u - m * n / 2) / math.sqrt(m * n * (m + n + 1) / 12)
            if z > best_z:
                best_z, best_index = z, index
        if best_index is None:
            return None
        p = math.erfc(best_z / math.sqrt(2))
        return best_index if p < self.thresholds.alpha / max(1, hi - lo - 1) else None

    def measure(self, index: int, lo: int, hi: int, *, final: bool = False):
        """The change at kernel `index` within segment [lo, hi), if it is confirmed.

        While searching, a normal approximation of Mann-Whitney U screens candidates (scipy's
        test costs ~100x a numpy median); `final` measures with the comparisons' own test and
        adds the bootstrap CI."""
        limits = self.thresholds
        good_k = range(max(lo, index - WINDOW), index)
        bad_k = range(index, min(hi, index + WINDOW))
        good, bad = self.window(good_k), self.window(bad_k)
        if good.size < 2 or bad.size < 2:
            return None
        base, level = float(_median(good)), float(_median(bad))
        if base <= 0 or level < 0:  # a ratio of signed levels means nothing
            return None
        change = level / base
        unrepeated = bool(self.sizes[index - 1] < 2 or self.sizes[index] < 2)
        needs_repeats = unrepeated or bool(
            min(self.true_sizes[index - 1], self.true_sizes[index]) < limits.min_repeats)
        if abs(change - 1) < (UNREPEATED_MIN_CHANGE if unrepeated else limits.min_change):
            return None
        if unrepeated:
            if not (good.max() < bad.min() or bad.max() < good.min()):
                return None
        elif not _screen_p(bad, good, limits.min_effect) < limits.alpha:
            return None
        verdict = stats.compare_samples(bad, good) if final else None
        if verdict is not None and not unrepeated and not _confirmed(verdict, good, bad,
                                                                     limits):
            return None
        return ChangePoint(
            index=index, change=change,
            ci95=_ratio_ci(good, bad, seed=index) if final else None,
            p_value=verdict and verdict.p_value, effect=verdict and verdict.effect,
            test=verdict and verdict.test, needs_repeats=needs_repeats,
            good_kernels=tuple(good_k), bad_kernels=tuple(bad_k),
            n_tested=(int(good.size), int(bad.size)),
        )


def _screen_p(sample: np.ndarray, baseline: np.ndarray, min_effect: float = MIN_EFFECT) -> float:
    """Two-sided Mann-Whitney U p by its normal approximation (no tie correction); 1.0 when
    the effect size is below `min_effect`. U by binary search: O((m + n) log n)."""
    m, n = sample.size, baseline.size
    ordered = np.sort(baseline)
    u = float((np.searchsorted(ordered, sample, "left")
               + np.searchsorted(ordered, sample, "right")).sum()) / 2
    rank_biserial = 2 * u / (m * n) - 1
    if abs(rank_biserial) < min_effect:
        return 1.0
    z = abs(u - m * n / 2) / math.sqrt(m * n * (m + n + 1) / 12)
    return math.erfc(z / math.sqrt(2))


def _confirmed(verdict, good, bad, limits: Thresholds) -> bool:
    if verdict.p_value is None:  # both sides constant and different: nothing to test
        return bool(np.ptp(good) == 0 and np.ptp(bad) == 0)
    return verdict.p_value < limits.alpha and abs(verdict.effect or 0) >= limits.min_effect


def detect(groups: Sequence[Sequence[float]], *, sizes: Sequence[int] | None = None,
           thresholds: Thresholds = DEFAULT_THRESHOLDS) -> list[ChangePoint]:
    """Confirmed change points of a series, by kernel index, in order.

    `groups[i]` are the samples of the i-th kernel in natural order (at least one each), or a
    subsample of them with `sizes[i]` their true number. A series of more than MAX_KERNELS
    kernels is searched over its newest MAX_KERNELS (indices stay those of `groups`)."""
    skipped = max(0, len(groups) - MAX_KERNELS)
    if skipped:
        points = detect(groups[skipped:], sizes=None if sizes is None else sizes[skipped:],
                        thresholds=thresholds)
        return [_shifted(point, skipped) for point in points]
    series = Series(groups, sizes=sizes, thresholds=thresholds)
    found: dict[int, ChangePoint] = {}
    pending = [(0, len(series.groups))]
    while pending:
        lo, hi = pending.pop()
        if hi - lo < 2:
            continue
        index = series.best_split(lo, hi)
        point = series.measure(index, lo, hi)
        if point is None:
            # A short plateau (up at one kernel, back down a few later) hides from the split
            # of the whole segment: scan every boundary with local windows instead, at a
            # Bonferroni-corrected threshold since every boundary is a try.
            index = series.local_split(lo, hi)
            point = series.measure(index, lo, hi) if index is not None else None
        if point is None:
            continue
        found[index] = point
        pending += [(lo, index), (index, hi)]
    return _remeasured(series, sorted(found))


def _shifted(point: ChangePoint, by: int) -> ChangePoint:
    return replace(point, index=point.index + by,
                   good_kernels=tuple(i + by for i in point.good_kernels),
                   bad_kernels=tuple(i + by for i in point.bad_kernels))


def _remeasured(series: Series, indices: list[int]) -> list[ChangePoint]:
    """Each change measured between its neighbours (not the segment it was found in), so its
    windows never reach across another change. One that no longer holds up is dropped."""
    edges = [0, *indices, len(series.groups)]
    points = []
    for position, index in enumerate(indices, start=1):
        point = series.measure(index, edges[position - 1], edges[position + 1], final=True)
        if point is not None:
            points.append(point)
    return points


@dataclass(frozen=True)
class Verdict:
    change: float
    p_value: float | None
    worse: bool
    needs_repeats: bool
    test: str | None = None
    n_tested: tuple[int, int] = (0, 0)  # values the test saw (sample, reference)


def verdict(sample: np.ndarray, reference: np.ndarray, *, higher_is_better: bool,
            thresholds: Thresholds = DEFAULT_THRESHOLDS,
            sizes: tuple[int, int] | None = None) -> Verdict | None:
    """Is `sample` (one run) a regression against `reference` (another kernel's samples)?

    Below `thresholds.min_repeats` values on either side (true sizes when the arrays are
    subsamples) the answer is "needs repeats", never a regression. Each side is tested on at
    most PER_KERNEL_MAX evenly spaced values."""
    sample = thinned(np.asarray(sample, dtype=np.float64), PER_KERNEL_MAX)
    reference = thinned(np.asarray(reference, dtype=np.float64), PER_KERNEL_MAX)
    n_sample, n_reference = sizes or (sample.size, reference.size)
    base = float(np.median(reference)) if reference.size else 0.0
    level = float(np.median(sample)) if sample.size else -1.0
    if base <= 0 or level < 0:  # a ratio of signed levels means nothing
        return None
    change = level / base
    worse_direction = change < 1 if higher_is_better else change > 1
    result = stats.compare_samples(sample, reference)
    needs_repeats = min(n_sample, n_reference) < max(2, thresholds.min_repeats)
    big_enough = abs(change - 1) >= thresholds.min_change
    if needs_repeats:
        worse = False
    elif result.p_value is None:  # both constant
        worse = worse_direction and big_enough
    else:
        worse = worse_direction and big_enough and result.p_value < thresholds.verdict_alpha
    return Verdict(change=change, p_value=result.p_value, worse=worse,
                   needs_repeats=needs_repeats, test=result.test,
                   n_tested=(int(sample.size), int(reference.size)))


@dataclass(frozen=True)
class SummaryVerdict:
    change: float
    p_value: float | None
    worse: bool | None  # None: summary only, no test possible
    test: str


def summary_verdict(summary: dict, reference: dict, *,
                    higher_is_better: bool) -> SummaryVerdict | None:
    """A published statistic against the same statistic of the reference column. A test only
    where both are means with a stddev and n (Welch); otherwise "summary only, no test", and
    whether it is a regression is left open (never a rank test on one value per side)."""
    from benchmarks.comparisons.summary_test import summary_test

    if summary["statistic"] != reference["statistic"]:
        return None
    base, level = reference["value"], summary["value"]
    if base <= 0 or level < 0:  # a ratio of signed levels means nothing
        return None
    change = level / base
    tested = summary_test(summary, reference)
    if tested.p_value is None:
        return SummaryVerdict(change, None, None, tested.reason)
    worse_direction = change < 1 if higher_is_better else change > 1
    worse = worse_direction and abs(change - 1) >= MIN_CHANGE and tested.p_value < VERDICT_ALPHA
    return SummaryVerdict(change, tested.p_value, worse, tested.test)

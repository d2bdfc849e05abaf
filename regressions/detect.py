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
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.analysis import stats

WINDOW = 8  # kernels per side at most
ALPHA = 0.002  # the confirmation test's threshold (the split was chosen on the same data)
MIN_CHANGE = 0.02  # |bad/good - 1| below this is noise whatever the p-value says
MIN_EFFECT = 0.3  # |rank-biserial| (or |Cohen's d| for Welch) at least this
UNREPEATED_MIN_CHANGE = 0.10
BOOTSTRAP = 400
VERDICT_ALPHA = 0.05


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


def energy_split(values: np.ndarray, bounds: np.ndarray) -> tuple[int, float]:
    """The sample boundary (one of `bounds`) maximising the E-divisive statistic, and its value.

    `values` are one segment's samples in kernel order; `bounds` the candidate split positions
    (kernel starts, excluding 0 and len). All splits are scored from one distance matrix with 2-D
    prefix sums: O(n^2) for the whole segment, not per split."""
    distances = np.abs(values[:, None] - values[None, :])
    prefix = distances.cumsum(axis=0).cumsum(axis=1)
    total = prefix[-1, -1]
    rows = distances.sum(axis=1).cumsum()
    size = values.size
    m = bounds.astype(np.float64)
    n = size - m
    within_left = prefix[bounds - 1, bounds - 1]
    cross = rows[bounds - 1] - within_left
    within_right = total - within_left - 2 * cross
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_left = np.where(m > 1, within_left / (m * (m - 1)), 0.0)
        mean_right = np.where(n > 1, within_right / (n * (n - 1)), 0.0)
        energy = 2 * cross / (m * n) - mean_left - mean_right
    score = m * n / size * energy
    best = int(np.argmax(score))
    return int(bounds[best]), float(score[best])


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
    """One series' groups, with what the segmentation needs precomputed."""

    def __init__(self, groups: Sequence[np.ndarray]):
        self.groups = [np.asarray(group, dtype=np.float64) for group in groups]
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

        Mann-Whitney U of every boundary at once: U is a rectangle sum of the segment's
        pairwise "greater than" matrix, read from its 2-D prefix sums."""
        offset = self.starts[lo]
        values = self.flat[offset:self.starts[hi]]
        greater = (values[:, None] > values[None, :]) + 0.5 * (values[:, None] == values[None, :])
        prefix = np.zeros((values.size + 1, values.size + 1))
        prefix[1:, 1:] = greater.cumsum(axis=0).cumsum(axis=1)
        index = np.arange(lo + 1, hi)
        g0 = self.starts[np.maximum(lo, index - WINDOW)] - offset
        mid = self.starts[index] - offset
        b1 = self.starts[np.minimum(hi, index + WINDOW)] - offset
        m, n = (b1 - mid).astype(np.float64), (mid - g0).astype(np.float64)
        u = prefix[b1, mid] - prefix[mid, mid] - prefix[b1, g0] + prefix[mid, g0]
        usable = (m >= 2) & (n >= 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            effect = np.abs(2 * u / (m * n) - 1)
            z = np.abs(u - m * n / 2) / np.sqrt(m * n * (m + n + 1) / 12)
        z = np.where(usable & (effect >= MIN_EFFECT), z, 0.0)
        best = int(np.argmax(z))
        p = math.erfc(z[best] / math.sqrt(2))
        return int(index[best]) if p < ALPHA / max(1, hi - lo - 1) else None

    def measure(self, index: int, lo: int, hi: int, *, final: bool = False):
        """The change at kernel `index` within segment [lo, hi), if it is confirmed.

        While searching, a normal approximation of Mann-Whitney U screens candidates (scipy's
        test costs ~100x a numpy median); `final` measures with the comparisons' own test and
        adds the bootstrap CI."""
        good_k = range(max(lo, index - WINDOW), index)
        bad_k = range(index, min(hi, index + WINDOW))
        good, bad = self.window(good_k), self.window(bad_k)
        if good.size < 2 or bad.size < 2:
            return None
        base, level = float(_median(good)), float(_median(bad))
        if base <= 0 or level < 0:  # a ratio of signed levels means nothing
            return None
        change = level / base
        needs_repeats = bool(self.sizes[index - 1] < 2 or self.sizes[index] < 2)
        if abs(change - 1) < (UNREPEATED_MIN_CHANGE if needs_repeats else MIN_CHANGE):
            return None
        if needs_repeats:
            if not (good.max() < bad.min() or bad.max() < good.min()):
                return None
        elif not _screen(bad, good):
            return None
        verdict = stats.compare_samples(bad, good) if final else None
        if verdict is not None and not needs_repeats and not _confirmed(verdict, good, bad):
            return None
        return ChangePoint(
            index=index, change=change,
            ci95=_ratio_ci(good, bad, seed=index) if final else None,
            p_value=verdict and verdict.p_value, effect=verdict and verdict.effect,
            test=verdict and verdict.test, needs_repeats=needs_repeats,
            good_kernels=tuple(good_k), bad_kernels=tuple(bad_k),
        )


def _screen(sample: np.ndarray, baseline: np.ndarray, alpha: float = ALPHA) -> bool:
    return _screen_p(sample, baseline) < alpha


def _screen_p(sample: np.ndarray, baseline: np.ndarray) -> float:
    """Two-sided Mann-Whitney U p by its normal approximation (no tie correction); 1.0 when
    the effect size is below MIN_EFFECT."""
    m, n = sample.size, baseline.size
    u = (sample[:, None] > baseline[None, :]).sum() + \
        (sample[:, None] == baseline[None, :]).sum() / 2
    rank_biserial = 2 * u / (m * n) - 1
    if abs(rank_biserial) < MIN_EFFECT:
        return 1.0
    z = abs(u - m * n / 2) / math.sqrt(m * n * (m + n + 1) / 12)
    return math.erfc(z / math.sqrt(2))


def _confirmed(verdict, good, bad) -> bool:
    if verdict.p_value is None:  # both sides constant and different: nothing to test
        return bool(np.ptp(good) == 0 and np.ptp(bad) == 0)
    return verdict.p_value < ALPHA and abs(verdict.effect or 0) >= MIN_EFFECT


def detect(groups: Sequence[Sequence[float]]) -> list[ChangePoint]:
    """Confirmed change points of a series, by kernel index, in order.

    `groups[i]` are the samples of the i-th kernel in natural order (at least one each)."""
    series = Series(groups)
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


def verdict(sample: np.ndarray, reference: np.ndarray, *, higher_is_better: bool) -> Verdict | None:
    """Is `sample` (one run) a regression against `reference` (another kernel's samples)?"""
    sample = np.asarray(sample, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    base = float(np.median(reference)) if reference.size else 0.0
    level = float(np.median(sample)) if sample.size else -1.0
    if base <= 0 or level < 0:  # a ratio of signed levels means nothing
        return None
    change = level / base
    worse_direction = change < 1 if higher_is_better else change > 1
    result = stats.compare_samples(sample, reference)
    needs_repeats = sample.size < 2 or reference.size < 2
    if needs_repeats:
        worse = worse_direction and abs(change - 1) >= UNREPEATED_MIN_CHANGE
    elif result.p_value is None:  # both constant
        worse = worse_direction and abs(change - 1) >= MIN_CHANGE
    else:
        worse = worse_direction and abs(change - 1) >= MIN_CHANGE and \
            result.p_value < VERDICT_ALPHA
    return Verdict(change=change, p_value=result.p_value, worse=worse,
                   needs_repeats=needs_repeats)

"""summarize's plain-Python path for small samples gives numpy's floats bit for bit.

Every figure is compared by its bytes, so a different rounding, a -0.0 for a 0.0 or a NaN
where numpy gives infinity fails the test, not only a different value.
"""

import math
import struct
import warnings
from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.analysis import stats

SIZES = st.integers(1, stats.SMALL_SAMPLE)

# Values that make sums round, cancel, overflow or vanish: huge, tiny, subnormal, zeros of
# both signs, decimal fractions with no exact binary form, and runs of equal values.
ADVERSARIAL = [0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 0.3, 1e16, -1e16, 1e-300, 5e-324, -5e-324,
               2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308,
               8.98846567431158e307, 3.0, 2**53, 2**53 + 2.0, 1 / 3, 4015.0, 8286.0]


def _bits(figure):
    return figure if figure is None or isinstance(figure, int) else struct.pack("<d", figure)


def _figures(summary) -> tuple:
    return tuple(_bits(getattr(summary, name))
                 for name in ("n", "mean", "median", "stdev", "minimum", "maximum"))


def _quiet(summary, values):
    """summary(values)'s figures, numpy's warnings about sums that overflow silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = summary(values)
    return None if result is None else _figures(result)


def _same_or_left_to_numpy(values, *, may_leave=False):
    small, numpy = _quiet(stats.small_summary, values), _quiet(stats.numpy_summary, values)
    if small is None:
        assert may_leave or _mixed_zeros(values), values
    else:
        assert small == numpy, values
    assert _quiet(stats.summarize, values) == numpy
    return small is not None


def _mixed_zeros(values) -> bool:
    return len({math.copysign(1.0, float(x)) for x in values if x == 0}) > 1


any_finite = st.floats(allow_nan=False, allow_infinity=False)
samples = {
    "any finite": st.lists(any_finite, min_size=1, max_size=stats.SMALL_SAMPLE),
    "timings": st.lists(st.floats(1e-3, 1e7), min_size=1, max_size=stats.SMALL_SAMPLE),
    "adversarial": st.lists(st.sampled_from(ADVERSARIAL), min_size=1,
                            max_size=stats.SMALL_SAMPLE),
    "mixed": st.lists(st.one_of(st.sampled_from(ADVERSARIAL), any_finite,
                                st.floats(-1e3, 1e3)), min_size=1, max_size=stats.SMALL_SAMPLE),
    "integers": st.lists(st.integers(-2**53, 2**53), min_size=1, max_size=stats.SMALL_SAMPLE),
}


@pytest.mark.parametrize("kind", sorted(samples))
def test_small_path_equals_numpy_bit_for_bit(kind):
    @settings(max_examples=400, deadline=None)
    @given(samples[kind])
    def check(values):
        _same_or_left_to_numpy(values)
        _same_or_left_to_numpy(tuple(values))
        if kind != "integers":
            _same_or_left_to_numpy(array("d", values))

    check()


@settings(max_examples=300, deadline=None)
@given(SIZES, st.floats(-1e6, 1e6), st.floats(0, 1e3),
       st.lists(st.floats(-1, 1), min_size=stats.SMALL_SAMPLE, max_size=stats.SMALL_SAMPLE))
def test_every_size_with_nearly_equal_values(size, centre, spread, offsets):
    """A run's samples: a few values close together, where cancellation shows."""
    values = [centre + spread * offset for offset in offsets[:size]]
    assert _same_or_left_to_numpy(values) or _mixed_zeros(values)


@pytest.mark.parametrize("size", range(1, stats.SMALL_SAMPLE + 1))
def test_each_size_through_every_branch_of_the_pairwise_sum(size):
    # Under 8, whole strides of 8, and remainders: values whose sum depends on the grouping.
    values = [(1e16 if i % 3 == 0 else 1.0) * (-1) ** i + 0.1 * i for i in range(size)]
    assert _same_or_left_to_numpy(values)
    assert _same_or_left_to_numpy([1.7976931348623157e308] * size)  # sums overflow to inf
    assert _same_or_left_to_numpy([5e-324 * (i + 1) for i in range(size)])


def test_the_grouping_is_numpy_s_not_left_to_right():
    # 17 values: the eight running sums and the remainder give a different float than a plain
    # loop would, so the test above could tell a wrong order from the right one.
    values = [3.0, 3.0, 1e16, 1.0, 0.1, 3.0, 3.0, 1.0, 3.0, 1.0, 0.1, -1e16, 0.1, -1e16, 1.0,
              -1e16, 1e16]
    plain = 0.0
    for value in values:
        plain += value
    assert float(np.sum(values)) != plain
    assert stats.small_summary(values).mean == float(np.mean(values))


def test_signed_zeros():
    assert _same_or_left_to_numpy([-0.0])
    assert _same_or_left_to_numpy([-0.0, -0.0])
    assert _same_or_left_to_numpy([-0.0, -0.0, 1.0])
    assert _same_or_left_to_numpy([-1.0, -0.0, 1.0])  # a -0.0 median numpy makes 0.0
    # Both zeros where the minimum or maximum must pick one: left to numpy.
    for values in ([0.0, -0.0], [-0.0, 0.0, 1.0], [2.0, 0.0, -0.0], [0.0, 5.0, -0.0, 7.0]):
        assert stats.small_summary(values) is None
        assert _figures(stats.summarize(values)) == _figures(stats.numpy_summary(values))
    # Both zeros inside the sample, not at its ends: the small path stays exact.
    assert _same_or_left_to_numpy([-1.0, 0.0, -0.0, 1.0])


@pytest.mark.parametrize("values", [
    [], [1.0, float("nan")], [float("inf")], [float("-inf"), 1.0], array("d", [float("nan")]),
])
def test_bad_samples_are_refused_by_both(values):
    assert stats.small_summary(values) is None
    with pytest.raises(ValueError):
        stats.summarize(values)


@pytest.mark.parametrize("values", [
    [True, 2.0], [np.float64(1.5), 2.0], [2**60, 1.0], ["1.5", 2.0], array("f", [1.5, 2.5]),
    array("i", [1, 2]), [1.0] * (stats.SMALL_SAMPLE + 1),
])
def test_what_the_small_path_leaves_to_numpy(values):
    if len(values) <= stats.SMALL_SAMPLE:
        assert stats.small_summary(values) is None
    assert _figures(stats.summarize(values)) == _figures(stats.numpy_summary(values))


def test_summarize_takes_the_small_path(monkeypatch):
    monkeypatch.setattr(stats, "numpy_summary", lambda values: pytest.fail("numpy path"))
    summary = stats.summarize(array("d", [3332.0, 3400.0, 3310.0, 3390.0]))
    assert (summary.n, summary.mean, summary.median) == (4, 3358.0, 3361.0)
    assert stats.summarize([1, 2, 4]).median == 2.0

from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.analysis import stats


def test_summary_of_known_samples():
    summary = stats.summarize([3332, 3400, 3310, 3390])
    assert (summary.n, summary.mean, summary.median) == (4, 3358, 3361)
    assert summary.stdev == pytest.approx(43.848, abs=1e-3)
    assert summary.cv == pytest.approx(43.848 / 3358, abs=1e-6)


def test_single_sample_has_no_stdev():
    summary = stats.summarize(array("d", [5.0]))
    assert summary.stdev is None and summary.cv is None and summary.median == 5


@pytest.mark.parametrize("values", [[], [1.0, float("nan")], [float("inf")]])
def test_bad_samples_are_refused(values):
    with pytest.raises(ValueError):
        stats.summarize(values)


@pytest.mark.parametrize("n", [2_000_001, 2_000_002])
def test_large_sample_median_is_exact(n):
    rng = np.random.default_rng(7)
    data = rng.lognormal(3, 1, size=n)
    assert stats.median(data) == float(np.median(data))


def test_large_sample_median_with_a_skewed_bracket_falls_back_correctly():
    data = np.concatenate([np.zeros(1_500_000), np.arange(1_000_000, dtype=float)])
    assert stats.median(data) == float(np.median(data))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1e9, 1e9), min_size=1, max_size=200))
def test_median_matches_numpy_for_any_sample(values):
    assert stats.summarize(values).median == pytest.approx(float(np.median(values)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=30), min_size=1,
                max_size=8))
def test_summarize_many_matches_one_at_a_time(groups):
    together = stats.summarize_many([np.asarray(g) for g in groups])
    for group, summary in zip(groups, together, strict=True):
        alone = stats.summarize(group)
        assert summary.n == alone.n and summary.median == pytest.approx(alone.median)
        assert summary.mean == pytest.approx(alone.mean, abs=1e-6)
        assert (summary.minimum, summary.maximum) == (alone.minimum, alone.maximum)
        if alone.stdev is None:
            assert summary.stdev is None
        else:
            assert summary.stdev == pytest.approx(alone.stdev, rel=1e-6, abs=1e-6)


def test_summarize_many_refuses_an_empty_group():
    with pytest.raises(ValueError):
        stats.summarize_many([np.asarray([1.0]), np.asarray([])])

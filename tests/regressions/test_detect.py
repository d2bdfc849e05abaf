"""The detector on series built with known change points and noise (no database)."""

import numpy as np
import pytest

from regressions.detect import detect, energy_split, verdict


def series(levels, *, repeats=5, cv=0.03, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(level, cv * abs(level), repeats) for level in levels]


@pytest.mark.parametrize("seed", range(5))
def test_one_step_is_found_at_its_kernel(seed):
    levels = [100.0] * 8 + [115.0] * 8
    points = detect(series(levels, seed=seed))
    assert [p.index for p in points] == [8]
    point = points[0]
    assert 1.1 < point.change < 1.2
    assert point.ci95[0] < point.change < point.ci95[1]
    assert point.p_value < 0.001 and point.test == "mann-whitney-u"
    assert point.effect > 0.9 and not point.needs_repeats


def test_two_steps_up_and_back_down():
    levels = [100.0] * 6 + [130.0] * 6 + [100.0] * 6
    points = detect(series(levels, seed=3))
    assert [p.index for p in points] == [6, 12]
    assert points[0].change > 1.2 and points[1].change < 0.8


@pytest.mark.parametrize("seed", range(10))
def test_noise_alone_gives_nothing(seed):
    assert detect(series([100.0] * 20, cv=0.08, seed=seed)) == []


def test_one_value_per_kernel_needs_repeats():
    # The LKML numbers for loops=10000 on the Core 2: 2.6.22, 2.6.23, 2.6.24, 2.6.24-git19.
    points = detect([[3332.0], [4397.0], [8953.0], [8986.0]])
    assert [p.index for p in points] == [2]
    assert points[0].needs_repeats and points[0].change > 2


def test_a_small_wobble_with_one_value_each_is_not_reported():
    assert detect([[100.0], [104.0], [99.0], [103.0], [101.0]]) == []


def test_energy_split_sees_the_boundary():
    values = np.array([1.0, 1.1, 0.9, 1.0, 5.0, 5.1, 4.9])
    at, score = energy_split(values, np.array([2, 4, 6]))
    assert at == 4 and score > 0


def test_verdict_direction_follows_the_metric():
    before, after = np.array([10.0, 10.1, 9.9, 10.0, 10.05]), np.array([12.0, 12.1, 11.9,
                                                                          12.0, 12.05])
    slower = verdict(after, before, higher_is_better=False)
    assert slower.worse and slower.p_value < 0.05 and slower.change == pytest.approx(1.2)
    assert not verdict(after, before, higher_is_better=True).worse
    single = verdict(np.array([12.0]), before, higher_is_better=False)
    # One value is never a regression, however far off: it needs repeats.
    assert single.needs_repeats and not single.worse and single.p_value is None


def test_signed_levels_give_no_ratio():
    assert detect(series([-100.0] * 5 + [-150.0] * 5, seed=1)) == []
    assert verdict(np.array([-1.0, -2.0]), np.array([1.0, 2.0]), higher_is_better=False) is None


def test_constant_levels_that_differ_are_a_change():
    points = detect([[10.0] * 5] * 4 + [[12.0] * 5] * 4)
    assert [p.index for p in points] == [4] and points[0].p_value is None

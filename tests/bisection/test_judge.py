"""Verdicts: a step's samples against the good and bad sides, with "can't tell" when the test
cannot say."""

import numpy as np
import pytest

from benchmarks.errors import InputError
from benchmarks.identity.commits import kernel_commit, kernel_dirty, kernel_ref, same_commit
from bisection.estimate import read_estimate
from bisection.judge import judge

RNG = np.random.default_rng(14)
GOOD = 100 + RNG.normal(0, 1.5, 10)
BAD = 125 + RNG.normal(0, 1.5, 10)


def sample(centre, n=5, spread=1.5):
    return centre + RNG.normal(0, spread, n)


def test_like_the_good_side_is_good_and_like_the_bad_side_is_bad():
    good = judge(sample(100), GOOD, BAD)
    bad = judge(sample(125), GOOD, BAD)
    assert good.verdict == "good" and good.p_bad < 0.05 < good.p_good
    assert bad.verdict == "bad" and bad.p_good < 0.05 < bad.p_bad
    assert good.test == "mann-whitney-u"


def test_tiny_samples_use_welch():
    verdict = judge(np.array([100.2, 99.7, 100.4]), GOOD, BAD)
    assert verdict.verdict == "good" and verdict.test == "welch-t"


def test_halfway_between_both_is_inconclusive():
    verdict = judge(sample(112.5, spread=0.5), GOOD, BAD)
    assert verdict.verdict == "unknown" and "between" in verdict.reason


def test_too_noisy_to_tell_asks_for_more_repeats():
    verdict = judge(np.array([90.0, 135.0]), GOOD, BAD)
    assert verdict.verdict == "unknown" and "run more repeats" in verdict.reason


def test_one_sample_or_missing_side_cannot_be_judged():
    assert "at least 2" in judge(np.array([100.0]), GOOD, BAD).reason
    assert "bad side" in judge(sample(100), GOOD, np.array([125.0])).reason


def test_sides_that_do_not_differ_give_no_verdict():
    verdict = judge(sample(100), GOOD, sample(100, n=10))
    assert verdict.verdict == "unknown" and "do not differ" in verdict.reason


def test_beyond_the_bad_side_is_bad_and_constant_samples_work():
    assert judge(sample(160), GOOD, BAD).verdict == "bad"
    constant = judge(np.array([7.0, 7.0]), np.array([7.0, 7.0, 7.0]), np.array([9.0, 9.0]))
    assert constant.verdict == "good"


@pytest.mark.parametrize("version, commit, dirty", [
    ("6.8.0-rc3-00042-gabcdef123456", "abcdef123456", False),
    ("6.8.0-rc3-00042-gabcdef123456-dirty", "abcdef123456", True),
    ("6.1.0-gdeadbeef", "deadbeef", False),
    ("2.6.24-rc1-g1234567", "1234567", False),
    ("2.6.24", None, False),
    ("6.8.0-rc3+", None, False),
    ("6.8.0-generic", None, False),  # "generic" is not hex
])
def test_commit_in_a_kernel_release(version, commit, dirty):
    assert kernel_commit(version) == commit and kernel_dirty(version) == dirty


def test_refs_for_kernels_and_abbreviated_shas():
    assert kernel_ref("2.6.24") == "v2.6.24" and kernel_ref("6.8.0") == "v6.8"
    assert kernel_ref("2.6.25-rc1") == "v2.6.25-rc1"
    assert kernel_ref("6.8.0-00001-gabcdef1") == "abcdef1"
    assert same_commit("abcdef1", "abcdef123456") and not same_commit("abcdef1", "abcdef2")


@pytest.mark.parametrize("value, field, expected", [
    ("Bisecting: 675 revisions left to test after this (roughly 10 steps)", "steps_left",
     (675, 11)),
    ("Bisecting: 0 revisions left to test after this (roughly 0 steps)", "steps_left", (0, 1)),
    (7, "revisions_left", (7, 4)),
    ("5", "steps_left", (None, 5)),
])
def test_estimates(value, field, expected):
    assert read_estimate(value, field=field) == expected


@pytest.mark.parametrize("value", ["soon", -1, 10**12, True, 1.5, "99999999999 revisions left "
                                   "to test"])
def test_estimate_refusals(value):
    with pytest.raises(InputError):
        read_estimate(value, field="steps_left")

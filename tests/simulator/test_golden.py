"""Exact outputs of a fixed set of runs (golden.py; regenerate only when a mechanism changes)."""

import json

import pytest

from .golden import SPECS, golden_result, path_for


@pytest.mark.parametrize("name", sorted(SPECS))
def test_result_is_byte_for_byte_the_golden_one(name):
    expected = json.loads(path_for(name).read_text())
    assert golden_result(SPECS[name]) == expected, (
        f"{name} changed; if a mechanism changed on purpose, run "
        "`python -m tests.simulator.golden --regenerate` and commit the new goldens")

"""Kernel versions sort naturally, in Python and in the database, and are kept verbatim."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from benchmarks.identity.versions import scheduler_family, sort_key
from benchmarks.models import Kernel

NATURAL = [
    "2.6.9",
    "2.6.22",
    "2.6.22.17-cfs-v24.1-smp",
    "2.6.22.17-smp",
    "2.6.24-rc1",
    "2.6.24-rc8",
    "2.6.24-rc8-git5",
    "2.6.24",
    "2.6.24-git19",
    "2.6.24.1",
    "2.6.24.1-smp",
    "2.6.25-rc1",
    "2.6.25",
    "3.3",
    "6.6",
    "6.6.0-eevdf",
]


def test_the_documented_order():
    shuffled = list(reversed(NATURAL))
    assert sorted(shuffled, key=sort_key) == NATURAL


def test_odd_strings_sort_after_versions():
    odd = ["tip", "my kernel", "", "-rc1", "🐧"]
    ordered = sorted(odd + ["2.6.24", "6.6"], key=sort_key)
    assert ordered[:2] == ["2.6.24", "6.6"]
    assert set(ordered[2:]) == set(odd)


@pytest.mark.parametrize(
    "version, family",
    [
        ("2.4.20", "goodness"),
        ("2.6.22.17-smp", "o1"),
        ("2.6.22.17-cfs-v24.1-smp", "cfs"),
        ("2.6.24-git19", "cfs"),
        ("2.6.21-rsdl-0.31", "rsdl"),
        ("6.6.0", "eevdf"),
        ("whatever", "unknown"),
    ],
)
def test_scheduler_family(version, family):
    assert scheduler_family(version) == family


@given(st.text(max_size=80))
def test_any_string_has_a_plain_alphanumeric_key(text):
    key = sort_key(text)
    assert key and all(ch.isdigit() or "a" <= ch <= "z" for ch in key)


versions = st.builds(
    lambda numbers, stage, flavour: ".".join(map(str, numbers)) + stage + flavour,
    st.lists(st.integers(0, 40), min_size=2, max_size=4),
    st.sampled_from(["", "-rc1", "-rc7", "-git3", "-git19", "-rc2-git4"]),
    st.sampled_from(["", "-smp", "-cfs-v24.1-smp", "-generic"]),
)


def reference_order(version: str):
    """An independent statement of the ordering rules, used to check the key."""
    import re

    numbers, rest = re.match(r"([\d.]+)(.*)", version).groups()
    parts = tuple(int(n) for n in numbers.split("."))
    rc = re.match(r"-rc(\d+)(?:-git(\d+))?", rest)
    git = re.match(r"-git(\d+)", rest)
    if rc:
        stage = (0, int(rc.group(1)), int(rc.group(2) or -1))
        flavour = rest[rc.end():]
    elif git:
        stage, flavour = (2, int(git.group(1)), 0), rest[git.end():]
    else:
        stage, flavour = (1, 0, 0), rest
    # The closing 0 makes 2.6.24<anything> sort before 2.6.24.N, whose next marker is 1.
    return tuple(p for part in parts for p in (1, part)) + (0,), stage, flavour


@given(versions, versions)
def test_key_order_matches_the_rules(a, b):
    assert (sort_key(a) < sort_key(b)) == (reference_order(a) < reference_order(b))


@given(st.lists(st.text(max_size=30), max_size=8))
def test_ordering_is_total_and_consistent(items):
    ordered = sorted(items, key=lambda v: (sort_key(v), v))
    keys = [(sort_key(v), v) for v in ordered]
    assert keys == sorted(keys)
    # No ties between distinct strings, so the order never depends on input order.
    assert len({(sort_key(v), v) for v in items}) == len(set(items))


class KernelStorageTests(TestCase):
    @settings(max_examples=40, deadline=None)
    @given(
        st.text(
            st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=60
        ).filter(lambda s: s.strip() == s and s)
    )
    def test_version_round_trips_verbatim(self, version):
        Kernel.objects.create(version=version)
        assert Kernel.objects.get(version=version).version == version

    def test_database_orders_like_python(self):
        for version in reversed(NATURAL + ["zz-odd", "tip-sched"]):
            Kernel.objects.create(version=version)
        ordered = Kernel.objects.order_by("sort_key", "version")
        stored = list(ordered.values_list("version", flat=True))
        assert stored == sorted(NATURAL + ["zz-odd", "tip-sched"], key=lambda v: (sort_key(v), v))
        assert stored[: len(NATURAL)] == NATURAL

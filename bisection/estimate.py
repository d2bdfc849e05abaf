"""How many steps are left: from git's own message, a number of revisions, or a step count."""

import math
import re

from benchmarks.errors import InputError

_GIT = re.compile(r"(\d+)\s+revisions?\s+left\s+to\s+test(?:.*?roughly\s+(\d+)\s+steps?)?",
                  re.IGNORECASE | re.DOTALL)


MAX_REVISIONS = 10**9
MAX_STEPS = 1000


def _bounded(value: int, limit: int, field: str) -> int:
    if not 0 <= value <= limit:
        raise InputError(f"{field} must be between 0 and {limit}", field=field)
    return value


def steps_for_revisions(revisions: int) -> int:
    """Steps to test when `revisions` are left after the commit checked out now: that commit,
    then halving what is left."""
    return 1 + math.ceil(math.log2(revisions + 1))


def read_estimate(value, *, field: str) -> tuple[int | None, int]:
    """(revisions left or None, steps left) from `value`: git's "Bisecting: 675 revisions left
    to test after this (roughly 10 steps)" text, or a number (revisions for `revisions_left`,
    steps for `steps_left`)."""
    if isinstance(value, bool):
        raise InputError(f"{field} must be a number or git's 'Bisecting: N revisions left' "
                         "line", field=field)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int):
        if field == "steps_left":
            return None, _bounded(value, MAX_STEPS, field)
        return _bounded(value, MAX_REVISIONS, field), steps_for_revisions(value)
    if isinstance(value, str):
        match = _GIT.search(value[:1000])
        if match:
            revisions = _bounded(int(match.group(1)), MAX_REVISIONS, field)
            if match.group(2) is not None:  # git's own count, after the commit under test
                return revisions, _bounded(int(match.group(2)), MAX_STEPS, field) + 1
            return revisions, steps_for_revisions(revisions)
    raise InputError(f"{field} must be a number or git's 'Bisecting: N revisions left to test "
                     "after this (roughly K steps)' line", field=field)

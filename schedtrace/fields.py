"""Parse the text after `event_name:` into the normalized fields, for both spellings in use:
the kernel's own `key=value` print format (ftrace `trace`, `trace_pipe`, `perf script`) and
trace-cmd's plugin format (`comm:pid [prio] S ==> comm:pid [prio]`, `comm:pid [prio] CPU:001`).

Comms may contain spaces, brackets, `=` and `:`, so every pattern anchors on the keys that
follow a comm rather than splitting on whitespace.
"""

import re

from . import event as ev

_SWITCH_KV = re.compile(
    r"prev_comm=(?P<prev_comm>.*?) prev_pid=(?P<prev_pid>-?\d+) prev_prio=(?P<prev_prio>-?\d+)"
    r" prev_state=(?P<prev_state>\S+) ==> next_comm=(?P<next_comm>.*?)"
    r" next_pid=(?P<next_pid>-?\d+) next_prio=(?P<next_prio>-?\d+)\s*$")
_SWITCH_PLUGIN = re.compile(
    r"(?P<prev_comm>.*):(?P<prev_pid>-?\d+) \[(?P<prev_prio>-?\d+)\] (?P<prev_state>\S+)"
    r" ==> (?P<next_comm>.*):(?P<next_pid>-?\d+) \[(?P<next_prio>-?\d+)\]\s*$")
_WAKE_KV = re.compile(
    r"comm=(?P<target_comm>.*?) pid=(?P<target_pid>-?\d+) prio=(?P<target_prio>-?\d+)"
    r"(?: success=\d+)?(?: target_cpu=(?P<target_cpu>\d+))?\s*$")
_WAKE_PLUGIN = re.compile(
    r"(?P<target_comm>.*):(?P<target_pid>-?\d+) \[(?P<target_prio>-?\d+)\]"
    r"(?: success=\d+)? CPU:(?P<target_cpu>\d+)\s*$")
_FORK = re.compile(
    r"comm=(?P<parent_comm>.*?) pid=(?P<parent_pid>-?\d+) child_comm=(?P<child_comm>.*?)"
    r" child_pid=(?P<child_pid>-?\d+)\s*$")
_EXIT = re.compile(
    r"comm=(?P<target_comm>.*?) pid=(?P<target_pid>-?\d+) prio=(?P<target_prio>-?\d+)"
    r"(?: group_dead=\w+)?\s*$")
_MIGRATE = re.compile(
    r"comm=(?P<target_comm>.*?) pid=(?P<target_pid>-?\d+) prio=(?P<target_prio>-?\d+)"
    r" orig_cpu=(?P<orig_cpu>\d+) dest_cpu=(?P<dest_cpu>\d+)\s*$")

_PATTERNS = {
    ev.SWITCH: (_SWITCH_KV, _SWITCH_PLUGIN),
    ev.WAKEUP: (_WAKE_KV, _WAKE_PLUGIN),
    ev.WAKEUP_NEW: (_WAKE_KV, _WAKE_PLUGIN),
    ev.WAKING: (_WAKE_KV, _WAKE_PLUGIN),
    ev.FORK: (_FORK,),
    ev.EXIT: (_EXIT,),
    ev.MIGRATE: (_MIGRATE,),
}
_TEXT = frozenset(("prev_comm", "next_comm", "target_comm", "parent_comm", "child_comm",
                   "prev_state"))
# Per pattern: the groups that are numbers.
_NUMERIC = {pattern: tuple(name for name in pattern.groupindex if name not in _TEXT)
            for patterns in _PATTERNS.values() for pattern in patterns}


def parse_fields(kind: str, text: str) -> dict | None:
    """The fields of a known event kind, ints converted; None when the text does not match."""
    for pattern in _PATTERNS[kind]:
        match = pattern.match(text)
        if match:
            fields = match.groupdict()
            for name in _NUMERIC[pattern]:
                value = fields[name]
                if value is not None:  # only optional groups (target_cpu) can be None
                    fields[name] = int(value)
            return fields
    return None


def parse_timestamp(text: str) -> int:
    """`4184.017066` (seconds, any number of decimals) -> integer nanoseconds, exactly."""
    seconds, _, fraction = text.partition(".")
    if len(fraction) == 6:  # the common case: microseconds
        return int(seconds) * 1_000_000_000 + int(fraction) * 1000
    return int(seconds) * 1_000_000_000 + int((fraction + "000000000")[:9])

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


def _converter(pattern):
    """match -> fields dict, numbers as ints: one function per pattern, built once, so the
    per-event work is a dict display (no groupdict, no loop over names)."""
    names = sorted(pattern.groupindex, key=pattern.groupindex.get)
    items = ", ".join(
        f"{name!r}: m[{pattern.groupindex[name]}]" if name in _TEXT else
        (f"{name!r}: (None if m[{pattern.groupindex[name]}] is None else "
         f"int(m[{pattern.groupindex[name]}]))" if name == "target_cpu" else
         f"{name!r}: int(m[{pattern.groupindex[name]}])")
        for name in names)
    return eval(f"lambda m: {{{items}}}")  # noqa: S307 - built from the patterns above only


# Per kind: (pattern, converter) in the order they are tried.
_CONVERTERS = {kind: tuple((pattern, _converter(pattern)) for pattern in patterns)
               for kind, patterns in _PATTERNS.items()}


def parse_fields(kind: str, text: str) -> dict | None:
    """The fields of a known event kind, ints converted; None when the text does not match."""
    for pattern, convert in _CONVERTERS[kind]:
        match = pattern.match(text)
        if match:
            return convert(match)
    return None


def parse_timestamp(text: str) -> int:
    """`4184.017066` (seconds, any number of decimals) -> integer nanoseconds, exactly."""
    seconds, _, fraction = text.partition(".")
    if len(fraction) == 6:  # the common case: microseconds
        return int(seconds) * 1_000_000_000 + int(fraction) * 1000
    return int(seconds) * 1_000_000_000 + int((fraction + "000000000")[:9])

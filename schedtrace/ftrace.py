"""ftrace text: the `trace` and `trace_pipe` files of tracefs and `trace-cmd report`.

    <comm>-<pid> [(<tgid>)] [<cpu>] [<flags>] <seconds>.<fraction>: <event>: <fields>

trace-cmd report may prefix each line with the instance name (`sb:  comm-12 [000] ...`) and
prints sched_switch/sched_wakeup in its plugin spelling; both are accepted.
"""

import re
from typing import Final

from . import event as ev
from .lines import LineParser

PREFIX = re.compile(
    r"^\s*(?P<comm>.*)-(?P<pid>\d+)\s+(?:\(\s*(?:\d+|-+)\)\s+)?\[(?P<cpu>\d+)\]\s+"
    r"(?:[^\s:]{4,6}\s+)?(?P<ts>\d+(?:\.\d+)?):\s+(?P<rest>.*?)\s*$")
# The same prefix found from its anchor (`-pid [cpu] flags ts: `) with search(): the greedy
# comm group above backtracks over the whole line, this does not. A comm is at most 16 bytes
# in the kernel, but one with `-12 [000] ` inside it would still be read right: the anchor
# search starts at the left and comm text can never hold the timestamp that must follow.
ANCHOR = re.compile(
    r"-(\d+)\s+(?:\(\s*(?:\d+|-+)\)\s+)?\[(\d+)\]\s+(?:[^\s:]{4,6}\s+)?(\d+(?:\.\d+)?):\s+")
# trace-cmd's instance prefix: a name, a colon, then the padded comm column.
INSTANCE = re.compile(r"^\s*[\w.-]+:\s{2,}")
class FtraceParser(LineParser):
    name = "ftrace"

    def __init__(self, warnings, read, max_ts=None, refuse_nul=False, *, instance_prefix=False,
                 fast=True):
        super().__init__(warnings, read, max_ts, refuse_nul)
        self.instance_prefix = instance_prefix
        self.use_fast = fast and not instance_prefix

    def fast_event(self, text: str, number: int) -> ev.Event | None:
        return fast_line(text, number)

    def match_prefix(self, text):
        if self.instance_prefix:
            text = INSTANCE.sub("", text, count=1)
        match = ANCHOR.search(text)
        if match is None:
            return None
        pid, cpu, ts = match.groups()
        return text[:match.start()].strip(), int(pid), int(cpu), ts, text[match.end():].rstrip()


def looks_like(text: str) -> bool:
    return PREFIX.match(text) is not None or PREFIX.match(INSTANCE.sub("", text, 1)) is not None


# The fast path (schedtrace.lines): a sched_switch or wakeup line of tracefs' own layout
#     <comm>-<pid> [<cpu>] <flags> <seconds>.<6 digits>: <event>: <key=value fields>
# read a character code at a time (compiled, `ord(text[i])` is an inlined read, where a find
# or a slice is a C call), a find only where a comm may hold anything and a slice compared
# for a fixed word after a number. It reads what ANCHOR and the fields patterns read, or gives
# up (None):
# - the anchor ends at the line's first `[`, after `-<digits><whitespace>`: ANCHOR.search finds
#   the same one (any anchor ends at a `[` with `-\d+\s+` or a tgid column before it, and only
#   the `-` just before those digits can start one);
# - one space before the flags, which are what `[^\s:]{4,6}` takes (ANCHOR's first choice),
#   spaces after them, and one after `: `; other spacing goes the general way;
# - fields: each lazy comm ends at the first ` <key>=` after it, as the patterns' first try does;
#   when what follows does not read, the patterns would try a later one: the general path does.
# Numbers must be 1 to 18 ASCII digits without a sign (the general path decides the rest: signs,
# other digits, numbers int() refuses). tests/schedtrace/test_fast_path.py compares both paths
# on every fixture line and on mutated ones.
_ZERO: Final = 48  # ord("0"); Final: compiled, inlined (not a module dict lookup per use)
_NINE: Final = 57  # ord("9")
_SPACE: Final = 32
_MAX_DIGITS: Final = 18


def _is_space(code: int) -> bool:
    """str.isspace() of the character `code`, without making the character for ASCII."""
    if code < 128:
        return code == _SPACE or 9 <= code <= 13 or 28 <= code <= 31
    return chr(code).isspace()


def _int_at(text: str, start: int, end: int) -> int:
    """The number text[start:end] is (1-18 ASCII digits), else -1."""
    if end <= start or end - start > _MAX_DIGITS:
        return -1
    value = 0
    for index in range(start, end):
        code = ord(text[index])
        if code < _ZERO or code > _NINE:
            return -1
        value = value * 10 + code - _ZERO
    return value


def _digits_end(text: str, start: int, end: int) -> int:
    """Where the run of ASCII digits from `start` (before `end`) stops."""
    while start < end:
        code = ord(text[start])
        if code < _ZERO or code > _NINE:
            break
        start += 1
    return start


def _at(text: str, word: str, start: int) -> bool:
    """text.startswith(word, start) for start >= 0, as a slice compared (compiled, a few
    hundred instructions: somewhat fewer than a bounded find, and a character-at-a-time
    comparison of words this long costs several times more)."""
    return text[start:start + len(word)] == word


def _number(text: str, start: int, end: int) -> tuple[int, int]:
    """(value, where the digits stop) of the ASCII digits from `start` (before `end`); value
    -1 unless there are 1 to 18 of them. Compiled, the pair is returned unboxed."""
    value = 0
    index = start
    while index < end:
        code = ord(text[index])
        if code < _ZERO or code > _NINE:
            break
        value = value * 10 + code - _ZERO
        index += 1
        if index - start > _MAX_DIGITS:
            return -1, _digits_end(text, index, end)
    return (value if index > start else -1), index


def _end_of_text(text: str) -> int:
    """len(text) without its trailing whitespace."""
    end = len(text)
    while end > 0 and _is_space(ord(text[end - 1])):
        end -= 1
    return end


def fast_line(text: str, number: int) -> ev.Event | None:
    """The event of a common ftrace line, or None to read it the general way."""
    bracket = text.find("[")
    if bracket <= 0:
        return None
    size = len(text)
    cpu, close = _number(text, bracket + 1, size)  # the cpu's digits, then `] `
    if cpu < 0 or close + 2 >= size or ord(text[close]) != 93 or ord(text[close + 1]) != _SPACE:
        return None
    end = bracket  # the pid's digits end where the whitespace before `[` starts
    while end > 0 and _is_space(ord(text[end - 1])):
        end -= 1
    dash = _digits_end_back(text, end)
    if end == bracket or dash < 0:
        return None
    pid = _int_at(text, dash + 1, end)
    space = _flags_end(text, close + 2)
    if pid < 0 or space < 0:
        return None
    return _after_flags(text, space + 1, cpu, pid, dash, number)


def _digits_end_back(text: str, end: int) -> int:
    """The `-` just before the digits that end at `end`, else -1."""
    start = end
    while start > 0:
        code = ord(text[start - 1])
        if code < _ZERO or code > _NINE:
            break
        start -= 1
    return start - 1 if start > 0 and ord(text[start - 1]) == 45 else -1  # 45: "-"


def _flags_end(text: str, start: int) -> int:
    """The space after 4 to 6 flag characters (no `:`, no whitespace) from `start`, else -1."""
    limit = min(start + 7, len(text))
    for index in range(start, limit):
        code = ord(text[index])
        if code == _SPACE:
            return index if index - start >= 4 else -1
        if code == 58 or _is_space(code):  # 58: ":"
            return -1
    return -1


def _after_flags(text: str, stamp: int, cpu: int, pid: int, dash: int,
                 number: int) -> ev.Event | None:
    """The timestamp (after the flags' spaces), the event's name and its fields."""
    size = len(text)
    while stamp < size and ord(text[stamp]) == _SPACE:  # tracefs pads the timestamp column
        stamp += 1
    seconds, dot = _number(text, stamp, size)
    colon = dot + 7
    if seconds < 0 or colon + 2 > size or ord(text[dot]) != 46 or ord(text[colon]) != 58 \
            or ord(text[colon + 1]) != _SPACE:  # 46: ".", 58: ":"
        return None
    micros = _int_at(text, dot + 1, colon)
    if micros < 0:
        return None
    ts, start = seconds * 1_000_000_000 + micros * 1000, colon + 2
    # the letter after `sched_` picks the words worth comparing: s(witch) or w(akeup, aking)
    letter = ord(text[start + 6]) if start + 6 < size else 0
    if letter == 115 and _at(text, "sched_switch: prev_comm=", start):
        return _fast_switch(text, start + 24, ts, cpu, pid, _comm(text, dash), number)
    if letter != 119:
        return None
    for kind in (ev.WAKEUP, ev.WAKEUP_NEW, ev.WAKING):
        if _at(text, kind, start) and _at(text, ": comm=", start + len(kind)):
            return _fast_wakeup(text, start + len(kind) + 7, kind, ts, cpu, pid,
                                _comm(text, dash), number)
    return None


def _comm(text: str, dash: int) -> str:
    """text[:dash].strip(), in one slice."""
    first, last = 0, dash
    while first < last and _is_space(ord(text[first])):
        first += 1
    while last > first and _is_space(ord(text[last - 1])):
        last -= 1
    return text[first:last]


def _number_then(text: str, start: int, word: str) -> tuple[int, int]:
    """(the number of 1-18 digits from `start`, where `word` starts right after them), else
    (-1, -1)."""
    value, end = _number(text, start, len(text))
    if value < 0 or not _at(text, word, end):
        return -1, -1
    return value, end


def _fast_switch(text: str, at: int, ts: int, cpu: int, pid: int, comm: str,
                 number: int) -> ev.Event | None:
    """`prev_comm=` has been read; the fields from `at`."""
    prev_pid_at = text.find(" prev_pid=", at)
    if prev_pid_at < 0:
        return None
    prev_pid, prev_prio_at = _number_then(text, prev_pid_at + 10, " prev_prio=")
    prev_prio, state_at = _number_then(text, prev_prio_at + 11, " prev_state=") \
        if prev_prio_at >= 0 else (-1, -1)
    if state_at < 0:
        return None
    arrow_at = state_at + 12  # the state ends at the first whitespace: ` ==> next_comm=`
    while arrow_at < len(text) and not _is_space(ord(text[arrow_at])):
        arrow_at += 1
    if arrow_at == state_at + 12 or not _at(text, " ==> next_comm=", arrow_at):
        return None
    next_pid_at = text.find(" next_pid=", arrow_at + 15)
    next_pid, next_prio_at = _number_then(text, next_pid_at + 10, " next_prio=") \
        if next_pid_at >= 0 else (-1, -1)
    if next_prio_at < 0:
        return None
    next_prio, cut = _number(text, next_prio_at + 11, len(text))
    if next_prio < 0 or cut != _end_of_text(text):
        return None
    return ev.switch_event(ts, cpu, pid, comm, number, text[at:prev_pid_at], prev_pid,
                           prev_prio, text[state_at + 12:arrow_at],
                           text[arrow_at + 15:next_pid_at], next_pid, next_prio)


def _fast_wakeup(text: str, at: int, kind: str, ts: int, cpu: int, pid: int, comm: str,
                 number: int) -> ev.Event | None:
    """`<kind>: comm=` has been read; `pid=.. prio=.. [success=..] [target_cpu=..]` from `at`."""
    pid_at = text.find(" pid=", at)
    target_pid, prio_at = _number_then(text, pid_at + 5, " prio=") if pid_at >= 0 \
        else (-1, -1)
    if prio_at < 0:
        return None
    end = _end_of_text(text)
    prio, cut = _number(text, prio_at + 6, end)
    if cut < end and _at(text, " success=", cut):
        after = _digits_end(text, cut + 9, end)
        cut = after if after > cut + 9 else -1
    target_cpu: int | None = None
    if 0 <= cut < end and _at(text, " target_cpu=", cut):
        target_cpu, cut = _number(text, cut + 12, end)
    if cut != end or prio < 0 or (target_cpu is not None and target_cpu < 0):
        return None
    return ev.wake_event(ts, cpu, kind, pid, comm, number, text[at:pid_at], target_pid, prio,
                         target_cpu)

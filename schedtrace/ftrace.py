"""ftrace text: the `trace` and `trace_pipe` files of tracefs and `trace-cmd report`.

    <comm>-<pid> [(<tgid>)] [<cpu>] [<flags>] <seconds>.<fraction>: <event>: <fields>

trace-cmd report may prefix each line with the instance name (`sb:  comm-12 [000] ...`) and
prints sched_switch/sched_wakeup in its plugin spelling; both are accepted.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from . import event as ev
from .lines import LineParser

if TYPE_CHECKING:
    from mypy_extensions import i64

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
        self.names = Names()

    def fast_event(self, text: str, number: int) -> ev.Event | None:
        return fast_line(text, number, self.names)

    def fast_event_at(self, raw: bytes, text: str, first: int, end: int,
                      number: int) -> ev.Event | None:
        return fast_line_at(raw, text, first, end, number, self.names)

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


# The fast path (schedtrace.lines): a sched_switch, wakeup, migrate or fork line of tracefs'
# own layout
#     <comm>-<pid> [<cpu>] <flags> <seconds>.<6 digits>: <event>: <key=value fields>
# read from the line's bytes a byte at a time. Compiled, `raw[i]` with a native (i64) index is
# a bounds check and a load (some 9 instructions), where `ord(text[i])` of a str is some 24 and
# a find, a slice or a str method is a C call of a few hundred (a slice also allocates and
# frees). The line is encoded once; an ASCII line's byte offsets are its character offsets, so
# the fields an Event keeps are sliced from the str itself (a line with any other character
# goes the general way). It reads what ANCHOR and the fields patterns read, or gives up (None):
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
#
# i64 (mypy_extensions, mypyc's native 64-bit integer) is only an annotation here: the package
# imports nothing outside the standard library at run time, and as pure Python an i64 is an int.
_ZERO: Final = 48  # ord("0"); Final: compiled, inlined (not a module dict lookup per use)
_NINE: Final = 57  # ord("9")
_SPACE: Final = 32
_MAX_DIGITS: Final = 18


def _is_space(code: i64) -> bool:
    """str.isspace() of the ASCII character `code` (the fast path reads ASCII lines only)."""
    return code == _SPACE or 9 <= code <= 13 or 28 <= code <= 31


def _int_at(raw: bytes, start: i64, end: i64) -> i64:
    """The number raw[start:end] is (1-18 ASCII digits), else -1."""
    if end <= start or end - start > _MAX_DIGITS:
        return -1
    value: i64 = 0
    index = start
    while index < end:
        code: i64 = raw[index]
        if code < _ZERO or code > _NINE:
            return -1
        value = value * 10 + code - _ZERO
        index += 1
    return value


def _digits_end(raw: bytes, start: i64, end: i64) -> i64:
    """Where the run of ASCII digits from `start` (before `end`) stops."""
    while start < end:
        code: i64 = raw[start]
        if code < _ZERO or code > _NINE:
            break
        start += 1
    return start


def _at(raw: bytes, word: bytes, start: i64) -> bool:
    """raw.startswith(word, start) for start >= 0, a byte at a time (no slice made). No word
    holds a newline, so none is found across a line's end."""
    length: i64 = len(word)
    if start + length > len(raw):
        return False
    index: i64 = 0
    while index < length:
        if raw[start + index] != word[index]:
            return False
        index += 1
    return True


def _find(raw: bytes, word: bytes, start: i64, end: i64) -> i64:
    """raw.find(word, start, end) for start >= 0 and a word that starts with a space."""
    last: i64 = end - len(word)
    while start <= last:
        if raw[start] == _SPACE and _at(raw, word, start):
            return start
        start += 1
    return -1


def _number(raw: bytes, start: i64, end: i64) -> tuple[i64, i64]:
    """(value, where the digits stop) of the ASCII digits from `start` (before `end`); value
    -1 unless there are 1 to 18 of them. Compiled, the pair is returned unboxed."""
    value: i64 = 0
    index = start
    while index < end:
        code: i64 = raw[index]
        if code < _ZERO or code > _NINE:
            break
        value = value * 10 + code - _ZERO
        index += 1
        if index - start > _MAX_DIGITS:
            return -1, _digits_end(raw, index, end)
    return (value if index > start else -1), index


def _end_of_text(raw: bytes, first: i64, end: i64) -> i64:
    """Where the line raw[first:end] ends without its trailing whitespace."""
    while end > first and _is_space(raw[end - 1]):
        end -= 1
    return end


_NAME_SLOTS: Final = 4096  # pids cached by Names (pid modulo this)


class Names:
    """The task names and pid objects of the lines read so far, one pid per slot (pid modulo
    _NAME_SLOTS): most lines name the same few tasks again, and the fast path hands out the
    str and int objects it made for a pid before instead of new ones (compiled, a name sliced
    from the line is a str allocated, and a pid stored in an Event an int allocated, each freed
    with the event; the reorder window holds 20,000 events and all they point to). A name is
    reused only when its bytes are the line's: for ASCII text the same bytes are the same
    characters, so the event is the same as with a new str."""

    def __init__(self) -> None:
        self.pids: list[int] = [-1] * _NAME_SLOTS
        self.pid_objects: list[int | None] = [None] * _NAME_SLOTS
        self.names: list[str] = [""] * _NAME_SLOTS
        self.name_bytes: list[bytes] = [b""] * _NAME_SLOTS

    def _slot(self, pid: i64) -> i64:
        """pid's slot, taken over for pid when another pid held it."""
        slot: i64 = pid % _NAME_SLOTS
        if self.pids[slot] != pid:
            self.pids[slot] = pid
            boxed: int | None = pid
            self.pid_objects[slot] = boxed
            self.names[slot] = ""
            self.name_bytes[slot] = b""
        return slot

    def pid(self, pid: i64) -> int | None:
        """An int object equal to pid (None never: typed so, compiled, it is not unboxed)."""
        return self.pid_objects[self._slot(pid)]

    def name(self, raw: bytes, text: str, start: i64, end: i64, pid: i64) -> str:
        """text[start:end], the name of task `pid` read from the ASCII line in `raw`."""
        slot = self._slot(pid)
        known = self.name_bytes[slot]
        if len(known) == end - start and _same_as(raw, start, known):
            return self.names[slot]
        name = text[start:end]
        self.names[slot] = name
        self.name_bytes[slot] = raw[start:end]
        return name


def _same_as(raw: bytes, start: i64, word: bytes) -> bool:
    """raw[start:start + len(word)] == word, the caller having checked the length fits. _at()
    repeats this loop rather than calling it: the call costs 64 instructions an event (11,473
    -> 11,537 in bench/trace_ingest.py --instructions)."""
    length: i64 = len(word)
    index: i64 = 0
    while index < length:
        if raw[start + index] != word[index]:
            return False
        index += 1
    return True


def fast_line(text: str, number: int, names: Names | None = None) -> ev.Event | None:
    """The event of a common ftrace line, or None to read it the general way."""
    # every non-ASCII character is 2 to 4 bytes of UTF-8 (a lone surrogate passes as 3)
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) != len(text):
        return None
    return fast_line_at(raw, text, 0, len(raw), number, Names() if names is None else names)


def fast_line_at(raw: bytes, text: str, first: i64, end: i64, number: int,
                 names: Names) -> ev.Event | None:
    """fast_line of the line text[first:end] (its newline, if any, at `end`), read in place
    from `raw`, the bytes of an ASCII `text`: the same offsets."""
    bracket = first
    while bracket < end and raw[bracket] != 91:  # 91: "["
        bracket += 1
    if bracket <= first or bracket == end:
        return None
    cpu, close = _number(raw, bracket + 1, end)  # the cpu's digits, then `] `
    if cpu < 0 or close + 2 >= end or raw[close] != 93 or raw[close + 1] != _SPACE:
        return None
    digits_end = bracket  # the pid's digits end where the whitespace before `[` starts
    while digits_end > first and _is_space(raw[digits_end - 1]):
        digits_end -= 1
    dash = _digits_end_back(raw, first, digits_end)
    if digits_end == bracket or dash < 0:
        return None
    pid = _int_at(raw, dash + 1, digits_end)
    space = _flags_end(raw, close + 2, end)
    if pid < 0 or space < 0:
        return None
    return _after_flags(raw, text, first, end, space + 1, cpu, pid, dash, number, names)


def _digits_end_back(raw: bytes, first: i64, end: i64) -> i64:
    """The `-` just before the digits that end at `end` (not before `first`), else -1."""
    start = end
    while start > first:
        code: i64 = raw[start - 1]
        if code < _ZERO or code > _NINE:
            break
        start -= 1
    return start - 1 if start > first and raw[start - 1] == 45 else -1  # 45: "-"


def _flags_end(raw: bytes, start: i64, end: i64) -> i64:
    """The space after 4 to 6 flag characters (no `:`, no whitespace) from `start`, else -1."""
    limit: i64 = min(start + 7, end)
    index = start
    while index < limit:
        code: i64 = raw[index]
        if code == _SPACE:
            return index if index - start >= 4 else -1
        if code == 58 or _is_space(code):  # 58: ":"
            return -1
        index += 1
    return -1


def _after_flags(raw: bytes, text: str, first: i64, end: i64, stamp: i64, cpu: i64, pid: i64,
                 dash: i64, number: int, names: Names) -> ev.Event | None:
    """The timestamp (after the flags' spaces), the event's name and its fields."""
    while stamp < end and raw[stamp] == _SPACE:  # tracefs pads the timestamp column
        stamp += 1
    seconds, dot = _number(raw, stamp, end)
    colon = dot + 7
    if seconds < 0 or colon + 2 > end or raw[dot] != 46 or raw[colon] != 58 \
            or raw[colon + 1] != _SPACE:  # 46: ".", 58: ":"
        return None
    micros = _int_at(raw, dot + 1, colon)
    if micros < 0:
        return None
    # up to 18 digits of seconds: an int, not an i64, holds them times 10**9
    ts: int = int(seconds) * 1_000_000_000 + int(micros) * 1000
    start = colon + 2
    # the letter after `sched_` picks the words worth comparing: s(witch) or w(akeup, aking)
    letter: i64 = raw[start + 6] if start + 6 < end else 0
    # (24 bytes: one slice compared costs less than a byte at a time)
    if letter == 115 and raw[start:start + 24] == b"sched_switch: prev_comm=":
        comm_first, comm_end = _comm_bounds(raw, first, dash)
        return _fast_switch(raw, text, end, start + 24, ts, cpu, pid, comm_first, comm_end,
                            number, names)
    if letter == 109 and _at(raw, b"sched_migrate_task: comm=", start):
        return _fast_migrate(raw, text, first, end, start + 25, ts, cpu, pid, dash, number,
                             names)
    if letter == 112 and _at(raw, b"sched_process_fork: comm=", start):
        return _fast_fork(raw, text, first, end, start + 25, ts, cpu, pid, dash, number, names)
    if letter != 119 or not _at(raw, b"sched_wak", start):
        return None
    if _at(raw, b"eup: comm=", start + 9):
        return _fast_wakeup(raw, text, first, end, start + 19, ev.WAKEUP, ts, cpu, pid, dash,
                            number, names)
    if _at(raw, b"eup_new: comm=", start + 9):
        return _fast_wakeup(raw, text, first, end, start + 23, ev.WAKEUP_NEW, ts, cpu, pid,
                            dash, number, names)
    if _at(raw, b"ing: comm=", start + 9):
        return _fast_wakeup(raw, text, first, end, start + 19, ev.WAKING, ts, cpu, pid, dash,
                            number, names)
    return None


def _comm_bounds(raw: bytes, first: i64, dash: i64) -> tuple[i64, i64]:
    """Where text[first:dash].strip() starts and ends."""
    last = dash
    while first < last and _is_space(raw[first]):
        first += 1
    while last > first and _is_space(raw[last - 1]):
        last -= 1
    return first, last


def _comm(raw: bytes, text: str, first: i64, dash: i64, pid: i64, names: Names) -> str:
    """text[first:dash].strip(), the name of the line's own task `pid`."""
    start, end = _comm_bounds(raw, first, dash)
    return names.name(raw, text, start, end, pid)


def _same(raw: bytes, start: i64, end: i64, other: i64, other_end: i64) -> bool:
    """raw[start:end] == raw[other:other_end], without slicing."""
    if end - start != other_end - other:
        return False
    while start < end:
        if raw[start] != raw[other]:
            return False
        start += 1
        other += 1
    return True


def _number_then(raw: bytes, start: i64, end: i64, word: bytes) -> tuple[i64, i64]:
    """(the number of 1-18 digits from `start`, where `word` starts right after them), else
    (-1, -1)."""
    value, stop = _number(raw, start, end)
    if value < 0 or not _at(raw, word, stop):
        return -1, -1
    return value, stop


def _fast_switch(raw: bytes, text: str, end: i64, at: i64, ts: int, cpu: i64, pid: i64,
                 comm_first: i64, comm_end: i64, number: int, names: Names) -> ev.Event | None:
    """`prev_comm=` has been read; the fields from `at` (the line ends at `end`; the prefix's
    comm is text[comm_first:comm_end])."""
    prev_pid_at = _find(raw, b" prev_pid=", at, end)
    if prev_pid_at < 0:
        return None
    prev_pid, prev_prio_at = _number_then(raw, prev_pid_at + 10, end, b" prev_prio=")
    if prev_prio_at < 0:
        return None
    prev_prio, state_at = _number_then(raw, prev_prio_at + 11, end, b" prev_state=")
    if state_at < 0:
        return None
    arrow_at = state_at + 12  # the state ends at the first whitespace: ` ==> next_comm=`
    while arrow_at < end and not _is_space(raw[arrow_at]):
        arrow_at += 1
    if arrow_at == state_at + 12 or not _at(raw, b" ==> next_comm=", arrow_at):
        return None
    next_pid_at = _find(raw, b" next_pid=", arrow_at + 15, end)
    if next_pid_at < 0:
        return None
    next_pid, next_prio_at = _number_then(raw, next_pid_at + 10, end, b" next_prio=")
    if next_prio_at < 0:
        return None
    next_prio, cut = _number(raw, next_prio_at + 11, end)
    if next_prio < 0 or cut != _end_of_text(raw, cut, end):
        return None
    comm = names.name(raw, text, comm_first, comm_end, pid)
    # the task switched out is mostly the line's own: its name is then the same str object
    prev_comm = comm if _same(raw, at, prev_pid_at, comm_first, comm_end) \
        else names.name(raw, text, at, prev_pid_at, prev_pid)
    return ev.switch_event(ts, cpu, names.pid(pid), comm, number, prev_comm, names.pid(prev_pid),
                           prev_prio, _state(text, state_at + 12, arrow_at),
                           names.name(raw, text, arrow_at + 15, next_pid_at, next_pid),
                           names.pid(next_pid), next_prio)


def _state(text: str, start: i64, end: i64) -> str:
    """text[start:end]; a one-letter state (the common case) is CPython's cached one-character
    string, so nothing is allocated for it."""
    return text[start] if end == start + 1 else text[start:end]


def _fast_wakeup(raw: bytes, text: str, first: i64, end: i64, at: i64, kind: str, ts: int,
                 cpu: i64, pid: i64, dash: i64, number: int, names: Names) -> ev.Event | None:
    """`<kind>: comm=` has been read; `pid=.. prio=.. [success=..] [target_cpu=..]` from `at`."""
    pid_at = _find(raw, b" pid=", at, end)
    if pid_at < 0:
        return None
    target_pid, prio_at = _number_then(raw, pid_at + 5, end, b" prio=")
    if prio_at < 0:
        return None
    end = _end_of_text(raw, prio_at, end)
    prio, cut = _number(raw, prio_at + 6, end)
    if cut < end and _at(raw, b" success=", cut):
        after = _digits_end(raw, cut + 9, end)
        cut = after if after > cut + 9 else -1
    target_cpu: i64 = -1
    if 0 <= cut < end and _at(raw, b" target_cpu=", cut):
        target_cpu, cut = _number(raw, cut + 12, end)
        if target_cpu < 0:
            return None
    if cut != end or prio < 0:
        return None
    comm = _comm(raw, text, first, dash, pid, names)
    return ev.wake_event(ts, cpu, kind, names.pid(pid), comm, number,
                         names.name(raw, text, at, pid_at, target_pid), names.pid(target_pid),
                         prio, target_cpu if target_cpu >= 0 else None)


def _fast_migrate(raw: bytes, text: str, first: i64, end: i64, at: i64, ts: int, cpu: i64,
                  pid: i64, dash: i64, number: int, names: Names) -> ev.Event | None:
    """`sched_migrate_task: comm=` has been read; `pid=.. prio=.. orig_cpu=.. dest_cpu=..`
    from `at`."""
    pid_at = _find(raw, b" pid=", at, end)
    if pid_at < 0:
        return None
    target_pid, prio_at = _number_then(raw, pid_at + 5, end, b" prio=")
    if prio_at < 0:
        return None
    prio, orig_at = _number_then(raw, prio_at + 6, end, b" orig_cpu=")
    if orig_at < 0:
        return None
    orig_cpu, dest_at = _number_then(raw, orig_at + 10, end, b" dest_cpu=")
    if dest_at < 0:
        return None
    dest_cpu, cut = _number(raw, dest_at + 10, end)
    if dest_cpu < 0 or cut != _end_of_text(raw, cut, end):
        return None
    return ev.migrate_event(ts, cpu, names.pid(pid), _comm(raw, text, first, dash, pid, names),
                            number, names.name(raw, text, at, pid_at, target_pid),
                            names.pid(target_pid), prio, orig_cpu, dest_cpu)


def _fast_fork(raw: bytes, text: str, first: i64, end: i64, at: i64, ts: int, cpu: i64,
               pid: i64, dash: i64, number: int, names: Names) -> ev.Event | None:
    """`sched_process_fork: comm=` has been read; `pid=.. child_comm=.. child_pid=..` from
    `at`."""
    pid_at = _find(raw, b" pid=", at, end)
    if pid_at < 0:
        return None
    parent_pid, child_at = _number_then(raw, pid_at + 5, end, b" child_comm=")
    if child_at < 0:
        return None
    child_pid_at = _find(raw, b" child_pid=", child_at + 12, end)
    if child_pid_at < 0:
        return None
    child_pid, cut = _number(raw, child_pid_at + 11, end)
    if child_pid < 0 or cut != _end_of_text(raw, cut, end):
        return None
    return ev.fork_event(ts, cpu, names.pid(pid), _comm(raw, text, first, dash, pid, names),
                         number, names.name(raw, text, at, pid_at, parent_pid),
                         names.pid(parent_pid),
                         names.name(raw, text, child_at + 12, child_pid_at, child_pid),
                         names.pid(child_pid))

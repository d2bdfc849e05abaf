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
        if fast and not instance_prefix:
            self.fast = fast_line

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
# read with finds and character codes, which compiled (schedtrace/build.py) cost a fraction of
# the patterns above. It reads what ANCHOR and the fields patterns read, or gives up (None):
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


def _int_at(text: str, start: int, end: int) -> int:
    """The number text[start:end] is (1-18 ASCII digits), else -1."""
    if end <= start or end - start > 18:
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
    """text.startswith(word, start), as a find (compiled, a C call rather than a method call)."""
    return text.find(word, start, start + len(word)) == start


def _has_space(text: str, start: int, end: int) -> bool:
    for index in range(start, end):  # noqa: SIM110 - a loop: compiled, any() is a generator
        if text[index].isspace():
            return True
    return False


def fast_line(text: str, number: int) -> ev.Event | None:
    """The event of a common ftrace line, or None to read it the general way."""
    bracket = text.find("[")
    close = text.find("]", bracket) if bracket > 0 else -1
    if close < 0:
        return None
    end = bracket  # the pid's digits end where the whitespace before `[` starts
    while end > 0 and text[end - 1].isspace():
        end -= 1
    dash = text.rfind("-", 0, end) if end < bracket else -1
    if dash < 0:
        return None
    pid, cpu = _int_at(text, dash + 1, end), _int_at(text, bracket + 1, close)
    space = text.find(" ", close + 2)
    if pid < 0 or cpu < 0 or space < 0 or not _at(text, " ", close + 1) \
            or not 4 <= space - close - 2 <= 6 or text.find(":", close + 2, space) >= 0 \
            or _has_space(text, close + 2, space):
        return None
    stamp = space + 1  # tracefs pads the timestamp column with spaces
    while _at(text, " ", stamp):
        stamp += 1
    colon = text.find(": ", stamp)
    dot = text.find(".", stamp, colon) if colon > 0 else -1
    seconds = _int_at(text, stamp, dot) if dot > 0 else -1
    micros = _int_at(text, dot + 1, colon) if colon - dot == 7 else -1
    if seconds < 0 or micros < 0:
        return None
    ts, comm, start = seconds * 1_000_000_000 + micros * 1000, text[:dash].strip(), colon + 2
    if _at(text, "sched_switch: prev_comm=", start):
        return _fast_switch(text, start + 24, ts, cpu, pid, comm, number)
    for kind in (ev.WAKEUP, ev.WAKEUP_NEW, ev.WAKING):
        if _at(text, kind, start) and _at(text, ": comm=", start + len(kind)):
            return _fast_wakeup(text, start + len(kind) + 7, kind, ts, cpu, pid, comm, number)
    return None


def _fast_switch(text: str, at: int, ts: int, cpu: int, pid: int, comm: str,
                 number: int) -> ev.Event | None:
    """`prev_comm=` has been read; the fields from `at`."""
    prev_pid_at = text.find(" prev_pid=", at)
    prev_prio_at = text.find(" prev_prio=", prev_pid_at + 10) if prev_pid_at >= 0 else -1
    state_at = text.find(" prev_state=", prev_prio_at + 11) if prev_prio_at >= 0 else -1
    arrow_at = text.find(" ==> next_comm=", state_at + 12) if state_at >= 0 else -1
    next_pid_at = text.find(" next_pid=", arrow_at + 15) if arrow_at >= 0 else -1
    next_prio_at = text.find(" next_prio=", next_pid_at + 10) if next_pid_at >= 0 else -1
    if next_prio_at < 0:
        return None
    end = len(text)
    while text[end - 1].isspace():  # the line ends in next_prio's digits, so this stops
        end -= 1
    prev_pid = _int_at(text, prev_pid_at + 10, prev_prio_at)
    prev_prio = _int_at(text, prev_prio_at + 11, state_at)
    next_pid = _int_at(text, next_pid_at + 10, next_prio_at)
    next_prio = _int_at(text, next_prio_at + 11, end)
    if prev_pid < 0 or prev_prio < 0 or next_pid < 0 or next_prio < 0 \
            or arrow_at == state_at + 12 or _has_space(text, state_at + 12, arrow_at):
        return None
    return ev.switch_event(ts, cpu, pid, comm, number, text[at:prev_pid_at], prev_pid,
                           prev_prio, text[state_at + 12:arrow_at], text[arrow_at + 15:next_pid_at],
                           next_pid, next_prio)


def _fast_wakeup(text: str, at: int, kind: str, ts: int, cpu: int, pid: int, comm: str,
                 number: int) -> ev.Event | None:
    """`<kind>: comm=` has been read; `pid=.. prio=.. [success=..] [target_cpu=..]` from `at`."""
    pid_at = text.find(" pid=", at)
    prio_at = text.find(" prio=", pid_at + 5) if pid_at >= 0 else -1
    if prio_at < 0:
        return None
    end = len(text)
    while end > prio_at and text[end - 1].isspace():
        end -= 1
    target_pid = _int_at(text, pid_at + 5, prio_at)
    cut = _digits_end(text, prio_at + 6, end)
    prio = _int_at(text, prio_at + 6, cut)
    if cut < end and _at(text, " success=", cut):
        after = _digits_end(text, cut + 9, end)
        cut = after if after > cut + 9 else -1
    target_cpu: int | None = None
    if 0 <= cut < end and _at(text, " target_cpu=", cut):
        target_cpu, cut = _int_at(text, cut + 12, end), end
    if cut != end or target_pid < 0 or prio < 0 or (target_cpu is not None and target_cpu < 0):
        return None
    return ev.wake_event(ts, cpu, kind, pid, comm, number, text[at:pid_at], target_pid, prio,
                         target_cpu)

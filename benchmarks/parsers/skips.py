"""Named skip rules of the line formats the 2007 pastes come in.

results-file, sweep, the timing lines (time-ms, loops-time, kernel-time, burn), kernel-table and
param-table read lines of their own and skip the rest only by one of these rules, each format
naming the rules it uses. A line holding a number that no rule covers is unexplained: the format
refuses the input naming it (base.Accounting), and the registry tries the next format.

    mail attribution         On Mon, 11 Feb 2008, Olof Example wrote:
    setup description        threadtest, 500 iterations, times in ms
                             P4 with HT, three runs each:
    damaged kernel heading   2.6.24;
                             2.6.22.17-cfs-v24.1-smp (with the yield fix from
    damaged loop heading     Lopp to 2M:
    shell command            $ for l in 10000 1000000; do ./threadtest $l; done
    prose                    any line without a digit

A setup description is prose: more words than numbers and no value the format would read (for
the formats reading times, no number with a time unit: `the first run gave 5210 ms` is never
skipped). What it states (`500 iterations`, `loops=10000`, a kernel) is not read, as nothing
says which runs it describes; the warning says so, so the user can give it with the upload.
Skipping changes nothing else: the formats still treat the line as one they do not know, so
the values after it lose the hold of the headings above (UNASSIGNED until the user says).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import NamedTuple

from .base import HAS_DIGIT_RE, NUMBER, NUMBER_RE, Accounting, Warnings, is_uname
from .headings import parse_heading

ATTRIBUTION = "mail attribution"
SETUP = "setup description"
KERNEL_HEADING = "damaged kernel heading"
LOOP_HEADING = "damaged loop heading"
SHELL = "shell command"
PROSE = "prose"

# "On Mon, 11 Feb 2008, Olof Example wrote:", "Olof Example <olof@example.org> wrote:".
ATTRIBUTION_RE = re.compile(r"(?:On\s.{0,160}|[^:]{1,120})\s(?:wrote|writes|said)\s*:", re.I)
# A number followed by a time unit: what the time-reading formats read.
# Not after a digit or dot: a number is tried from its start only, so a long digit run stays
# linear.
TIME_VALUE_RE = re.compile(
    rf"(?<![\d.]){NUMBER}\s*(?:ms|msecs?|milliseconds?|s|secs?|seconds?|us|usecs?|microseconds?|\u00b5s)"
    r"(?![a-z])", re.I)
WORD_RE = re.compile(r"[(\[\"']*[A-Za-z][A-Za-z'\u2019-]*[)\]\"'.,:;!?]*")
# "500 iterations", "loops=10000", "4 threads": a parameter the line states.
STATED_RE = re.compile(
    r"(?:(?<![\d.])(\d+(?:\.\d+)?\s*[kKmM]?)\s+(iteration|loop|thread|group|client)s?\b"
    r"|\b(iteration|loop|thread|group|client)s?\s*[=:]\s*(\d+(?:\.\d+)?[kKmM]?)\b)", re.I)
# "Lopp to 2M:", "Looops of 10k:": a loop heading with its word misspelt.
LOOP_HEADING_RE = re.compile(
    r"([A-Za-z]{3,7})\s+(?:(?:to|of|=)\s*)?\d+(?:\.\d+)?\s*[kKmMgG]?\s*:", re.I)
# "$ cmd", "host:~/src # cmd"; a bare "# " only before a command (perf bench's banner lines
# start with "# " too, and those are not commands).
PROMPT_RE = re.compile(r"(?:[\w.-]+@)?[\w.-]+:[^\s#$]*\s*[#$]\s*\S|\$\s+\S"
                       r"|#\s+(?:\./|for\s|echo\s|sysctl\s|chrt\s|taskset\s|uname\b)")


# "<missed 2.6.24 here>", "Loop to 10M: <box crashed>", "2.6.24 <rebooted>": nothing measured.
HOLE_LINE_RE = re.compile(r"([^<>]*)<([^<>]*)>[.,;]?")
LOOP_LABEL_RE = re.compile(
    r"(?:loops?\s+(?:(?:to|of|=)\s*)?)?\d+(?:\.\d+)?\s*[kKmMgG]?(?:\s*loops?)?(?:\s+time)?", re.I)


class Skip(NamedTuple):
    rule: str
    note: str = ""


def hole(text: str) -> str | None:
    """What a hole line says (`missed 2.6.24 here`), or None when the line is not one: a
    `<...>` alone, or after the kernel or loop size it stands for. Anything else beside it (a
    number) makes it no hole, so a value is never dropped as part of one."""
    match = HOLE_LINE_RE.fullmatch(text)
    if match is None:
        return None
    before = match.group(1).strip().rstrip(":").strip()
    if before and parse_heading(before) is None and LOOP_LABEL_RE.fullmatch(before) is None:
        return None
    return match.group(2).strip()


def reads_times(text: str) -> bool:
    """A value the time-reading formats would read: a number with a time unit."""
    return TIME_VALUE_RE.search(text) is not None


def reads_cells(text: str) -> bool:
    """A value the tables would read: a time, or a number ending the line as a row's cell."""
    words = text.split()
    return reads_times(text) or bool(words) and NUMBER_RE.fullmatch(words[-1]) is not None


def attribution(text: str) -> Skip | None:
    return Skip(ATTRIBUTION) if ATTRIBUTION_RE.fullmatch(text) else None


def shell_command(text: str) -> Skip | None:
    """A command at a shell prompt: its numbers are the command's arguments, not results."""
    return Skip(SHELL, "its numbers are arguments") if PROMPT_RE.match(text) else None


def damaged_kernel_heading(text: str) -> Skip | None:
    """A kernel heading with a typo (`2.6.24;`) or wrapped inside its remark (`2.6.22.17-smp
    (with the fix from`): meant as a heading, but not surely one, so the values after it wait
    for the user."""
    first, _, rest = text.partition(" ")
    kernel = first.rstrip(";:,.!")
    if not is_uname(kernel) or parse_heading(kernel) is None:
        return None
    rest = rest.strip()
    unclosed = rest[:1] in "([" and rest and ")" not in rest and "]" not in rest
    if (not rest and kernel != first) or (unclosed and not HAS_DIGIT_RE.search(rest)):
        return Skip(KERNEL_HEADING, f"{kernel}?: the values after it are unassigned until "
                    "you say whose they are")
    return None


def damaged_loop_heading(text: str) -> Skip | None:
    """`Lopp to 2M:`: a loop heading with its word misspelt; the rows after it wait."""
    match = LOOP_HEADING_RE.fullmatch(text)
    if match is None:
        return None
    word = match.group(1).lower()
    if difflib.SequenceMatcher(None, word, "loop").ratio() < 0.6 and \
            difflib.SequenceMatcher(None, word, "loops").ratio() < 0.6:
        return None
    return Skip(LOOP_HEADING, "the rows after it are unassigned until you give their loop size")


def stated(text: str) -> list[str]:
    """What a description states that could be a run's setup: params and kernels."""
    found = []
    for match in STATED_RE.finditer(text):
        name = (match.group(2) or match.group(3)).lower() + "s"
        found.append(f"{name} {(match.group(1) or match.group(4)).replace(' ', '')}")
    found.extend(f"kernel {word}" for word in _kernels(text))
    return found


def _kernels(text: str) -> list[str]:
    words = (word.strip(",;:()[]") for word in text.split())
    return [word for word in words if is_uname(word)]


def setup_description(text: str, result_like: Callable[[str], bool]) -> Skip | None:
    """Prose about the setup: more words than numbers and nothing the format would read."""
    tokens = text.split()
    numbers = sum(1 for token in tokens if HAS_DIGIT_RE.search(token))
    words = sum(1 for token in tokens if WORD_RE.fullmatch(token))
    if words < 2 or words <= numbers or result_like(text):
        return None
    states = stated(text)
    if not states:
        return Skip(SETUP)
    return Skip(SETUP, f"it states {', '.join(states)}: not read, as nothing says which runs "
                "it describes; give it with the upload or in the preview if it applies")


RULES: dict[str, Callable[..., Skip | None]] = {
    ATTRIBUTION: attribution, KERNEL_HEADING: damaged_kernel_heading,
    LOOP_HEADING: damaged_loop_heading, SHELL: shell_command,
}


class LineRules:
    """The skip rules one format names, tried in order after the format's own grammar."""

    def __init__(self, *rules: str, result_like: Callable[[str], bool] = reads_times):
        unknown = [rule for rule in rules if rule not in RULES and rule != SETUP]
        if unknown:
            raise ValueError(f"no skip rule named {unknown}")
        self.rules = rules
        self.result_like = result_like

    def match(self, text: str) -> Skip | None:
        """The rule covering `text` (stripped), or None when none does."""
        if HAS_DIGIT_RE.search(text) is None:
            return Skip(PROSE, "no numbers")
        if self.result_like(text):
            return None  # a line that looks like a result is never skipped, whatever else
        for rule in self.rules:
            found = (setup_description(text, self.result_like) if rule == SETUP
                     else RULES[rule](text))
            if found is not None:
                return found
        return None

    def skip(self, lineno: int, text: str, warnings: Warnings, accounting: Accounting) -> bool:
        """Skip a line the format does not read by the rule covering it, warning with the
        rule's name; without one the line is unexplained (refused at the end). True if
        skipped."""
        found = self.match(text.strip())
        if found is None:
            accounting.unknown(lineno, text)
            return False
        accounting.skip(found.rule)
        warnings.add(lineno, f"skipped {found.rule}" + (f" ({found.note})" if found.note else ""))
        return True

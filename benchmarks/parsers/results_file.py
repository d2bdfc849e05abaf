"""A results file: `uname -r` lines heading blocks of result lines.

    hp:~/threadtest # echo 0 > /proc/sys/kernel/sched_child_runs_first
    hp:~/threadtest # ./threadtest-yield
    2.6.24-git19
    time 8986 ms
    time 9011 ms

    2.6.22
    time 3332 ms

A shell prompt running a program names the variant (labels["program"]); an `echo V >
/proc/sys/kernel/NAME` (or `sysctl -w kernel.NAME=V`) sets a tunable for every block after it.
Any line the timing grammar knows (time, loops, `Loop to 1M: N ms`, kernel: ms, burn) is a
result line. Headings may carry a remark (`2.6.26-rc2-smp (git from this morning)`: the run's
label) or a patch (`2.6.24-rc7 + sched-devel`: part of the kernel), see headings.py.

Every line is read or skipped by a named rule (skips.py: mail attribution, damaged kernel
heading, shell command, setup description, prose); a line holding a number none explains refuses
the input. Sure or says so: a skipped line, between a heading and the values after it, breaks the
heading's hold. Values after such a line (until the next heading) are an UNASSIGNED
block (`missing` = ["kernel"]), as are values above the first heading of a file that has
headings: the user says where they belong, the parser never guesses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .base import (
    Accounting,
    ParseError,
    Parser,
    ParseResult,
    ResultGroups,
    Warnings,
    head_lines,
    maybe_number,
    numbered_lines,
)
from .headings import MAX_KERNEL, parse_heading, too_long_heading
from .skips import ATTRIBUTION, KERNEL_HEADING, SETUP, SHELL, LineRules, hole
from .timing import (
    add_samples,
    burn_setup,
    match_measurement,
    measurement_setup,
    near_miss,
)

# "host:dir # cmd", "user@host:~/src$ cmd"; the directory part may be empty ("host: # cmd").
PROMPT_RE = re.compile(r"(?:[\w.-]+@)?[\w.-]+:[^\s#$]*\s*[#$]\s*(?P<cmd>.*)")
# A prompt without host, accepted only for commands we care about (so "# note" stays a note).
BARE_PROMPT_RE = re.compile(r"[#$]\s*(?P<cmd>(?:\./|echo\s|sysctl\s|uname\b).*)")
ECHO_TUNABLE_RE = re.compile(
    r"echo\s+['\"]?(?P<value>[^'\"\s>]+)['\"]?\s*>\s*/proc/sys/kernel/(?P<name>[\w.]+)")
SYSCTL_TUNABLE_RE = re.compile(r"sysctl\s+(?:-w\s+)?kernel\.(?P<name>\w+)\s*=\s*(?P<value>\S+)")
# What the pastes hold besides results, headings and commands (skips.py). A shell command this
# grammar does not read as a command (`$ make`) is still only a command.
RULES = LineRules(ATTRIBUTION, KERNEL_HEADING, SHELL, SETUP)
CHRT_POLICIES = {
    "f": "SCHED_FIFO", "fifo": "SCHED_FIFO", "r": "SCHED_RR", "rr": "SCHED_RR",
    "b": "SCHED_BATCH", "batch": "SCHED_BATCH", "i": "SCHED_IDLE", "idle": "SCHED_IDLE",
    "o": "SCHED_OTHER", "other": "SCHED_OTHER", "d": "SCHED_DEADLINE", "deadline": "SCHED_DEADLINE",
}


def kernel_heading(text: str) -> str | None:
    heading = parse_heading(text)
    return heading.kernel if heading else None


def command_of(text: str) -> str | None:
    """The command typed at a shell prompt line (or pasted without its prompt), else None."""
    match = PROMPT_RE.fullmatch(text) or BARE_PROMPT_RE.fullmatch(text)
    if match:
        return match.group("cmd").strip()
    if ECHO_TUNABLE_RE.fullmatch(text) or SYSCTL_TUNABLE_RE.fullmatch(text) or \
            text.startswith("./"):
        return text
    return None


def tunable_of(command: str) -> tuple[str, object] | None:
    match = ECHO_TUNABLE_RE.fullmatch(command) or SYSCTL_TUNABLE_RE.fullmatch(command)
    if not match:
        return None
    return match.group("name"), maybe_number(match.group("value"))


class _State:
    """What the lines above say about the next value, and how sure we still are of it."""

    def __init__(self):
        self.setup: dict[str, Any] = {"tunables": {}, "labels": {}, "params": {}, "policy": None}
        self.kernel: str | None = None
        self.kernel_line: int | None = None
        self.labels: dict = {}
        self.headings = 0
        self.kernel_lost = False
        self.params_lost = False
        self.block: int | None = None  # first line of the unassigned block being filled

    def heading(self, heading, lineno: int) -> None:
        self.kernel, self.kernel_line, self.headings = heading.kernel, lineno, self.headings + 1
        self.labels = {"remark": heading.remark} if heading.remark else {}
        self.kernel_lost = False
        self.block = None

    def lose_context(self) -> None:
        """An unknown line: whatever the headings above said no longer surely holds."""
        if self.kernel is not None:
            self.kernel_lost = True
        if self.setup["params"]:
            self.params_lost = True
        self.block = None

    def missing(self, found) -> list[str]:
        missing = []
        if found.kernel is None and self.kernel_lost:
            missing.append("kernel")
        if self.params_lost and found.kind == "burn":
            missing.extend(f"param.{name}" for name in self.setup["params"])
        return missing

    def unassigned_block(self, lineno: int) -> int:
        if self.block is None:
            self.block = lineno
        return self.block


class ResultsFileParser(Parser):
    name = "results-file"
    version = 2
    description = "results file (uname -r headings, result lines, shell prompts)"

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        headings = results = 0
        for text in lines:
            if kernel_heading(text) or command_of(text) is not None:
                headings += 1
            elif self._is_result(text):
                results += 1
        if not (headings and results):
            return 0.0
        return 0.6 + 0.39 * (headings + results) / len(lines)

    @staticmethod
    def _is_result(text: str) -> bool:
        """A result line or a burn sweep heading (malformed numbers just do not count)."""
        try:
            return match_measurement(text) is not None or burn_setup(text, 0) is not None
        except ParseError:
            return False

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        groups = ResultGroups()
        accounting = Accounting(self.description)
        state = _State()
        for lineno, text in numbered_lines(lines, warnings):
            self._feed(text.strip(), lineno, state, groups, warnings, accounting)
        accounting.check()
        results = groups.results()
        if state.headings:
            # Values above the first heading: whose are they? Not ours to guess.
            for result_set in results:
                if result_set.kernel is None and not result_set.missing:
                    result_set.missing, result_set.block = ["kernel"], str(result_set.line)
        return self.result(results, warnings)

    def _feed(self, text, lineno, state, groups, warnings, accounting) -> None:
        found = match_measurement(text, lineno)
        if found is not None:
            self._measurement(found, lineno, state, groups)
            return
        heading = parse_heading(text)
        if heading:
            state.heading(heading, lineno)
            return
        length = too_long_heading(text)
        if length:
            raise ParseError(f"this kernel heading names a kernel of {length:,} characters; "
                             f"a kernel name has at most {MAX_KERNEL}", line=lineno)
        missed = hole(text)
        if missed is not None:
            warnings.add(lineno, f"hole: {missed}")
            return
        command = command_of(text)
        if command is not None:
            self._command(command, state.setup)
            return
        setup = burn_setup(text, lineno)
        if setup is not None:
            state.setup["params"] = setup
            state.params_lost = False
        elif near_miss(text):
            raise ParseError("malformed result line", line=lineno)
        else:
            # Skipped by a named rule or unexplained (refused at the end): either way what the
            # headings above said no longer surely holds for the values after it.
            state.lose_context()
            RULES.skip(lineno, text, warnings, accounting)

    @staticmethod
    def _measurement(found, lineno, state, groups) -> None:
        setup = measurement_setup(found, state.setup["params"])
        labels = {**state.setup["labels"], **setup.pop("labels", {})}
        kernel_line = lineno if found.kernel else state.kernel_line
        block = None
        missing = state.missing(found)
        if found.kernel is None and "kernel" not in missing:
            setup["kernel"] = state.kernel
            labels.update(state.labels)  # the heading's remark
        if missing:
            setup["params"] = {name: value for name, value in setup["params"].items()
                               if f"param.{name}" not in missing}
            block, kernel_line = state.unassigned_block(lineno), None
            setup["missing"] = missing
        result_set = groups.get(lineno, **setup, kernel_line=kernel_line, block=block,
                                tunables=state.setup["tunables"], labels=labels,
                                policy=state.setup["policy"])
        add_samples(result_set, found)

    @staticmethod
    def _command(command: str, state: dict) -> None:
        # A command changes what runs next (program, tunables), never which kernel it runs on.
        tunable = tunable_of(command)
        if tunable is not None:
            # Copy: result sets already created keep the tunables they were measured with.
            state["tunables"] = {**state["tunables"], tunable[0]: tunable[1]}
        elif command and not command.startswith(("uname", "cd ", "cat ", "ls")):
            state["labels"] = {"program": command}
            state["policy"] = policy_of(command)


def policy_of(command: str) -> str | None:
    """The scheduling policy a `chrt` prefix asks for (`chrt -f 50 ./prog` -> SCHED_FIFO)."""
    words = command.split()
    if not words or words[0] != "chrt":
        return None
    for word in words[1:]:
        if not word.startswith("-"):
            break  # the priority: options are over
        if word.lstrip("-") in CHRT_POLICIES:
            return CHRT_POLICIES[word.lstrip("-")]
    return "SCHED_RR"  # chrt's default policy

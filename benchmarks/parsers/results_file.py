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
Any line the timing grammar knows (time, loops, kernel: ms, burn) is a result line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .base import (
    ParseError,
    Parser,
    ParseResult,
    ResultGroups,
    Warnings,
    head_lines,
    is_uname,
    maybe_number,
    numbered_lines,
)
from .timing import add_samples, burn_setup, match_measurement, measurement_setup, near_miss

# "host:dir # cmd", "user@host:~/src$ cmd"; the directory part may be empty ("host: # cmd").
PROMPT_RE = re.compile(r"(?:[\w.-]+@)?[\w.-]+:[^\s#$]*\s*[#$]\s*(?P<cmd>.*)")
# A prompt without host, accepted only for commands we care about (so "# note" stays a note).
BARE_PROMPT_RE = re.compile(r"[#$]\s*(?P<cmd>(?:\./|echo\s|sysctl\s|uname\b).*)")
ECHO_TUNABLE_RE = re.compile(
    r"echo\s+['\"]?(?P<value>[^'\"\s>]+)['\"]?\s*>\s*/proc/sys/kernel/(?P<name>[\w.]+)")
SYSCTL_TUNABLE_RE = re.compile(r"sysctl\s+(?:-w\s+)?kernel\.(?P<name>\w+)\s*=\s*(?P<value>\S+)")
CHRT_POLICIES = {
    "f": "SCHED_FIFO", "fifo": "SCHED_FIFO", "r": "SCHED_RR", "rr": "SCHED_RR",
    "b": "SCHED_BATCH", "batch": "SCHED_BATCH", "i": "SCHED_IDLE", "idle": "SCHED_IDLE",
    "o": "SCHED_OTHER", "other": "SCHED_OTHER", "d": "SCHED_DEADLINE", "deadline": "SCHED_DEADLINE",
}


def kernel_heading(text: str) -> str | None:
    token = text.strip().rstrip(":")
    return token if is_uname(token) else None


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


class ResultsFileParser(Parser):
    name = "results-file"
    version = 1
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
        state = {"kernel": None, "tunables": {}, "labels": {}, "params": {}, "policy": None}
        for lineno, text in numbered_lines(lines, warnings):
            self._feed(text.strip(), lineno, state, groups, warnings)
        return self.result(groups.results(), warnings)

    def _feed(self, text, lineno, state, groups, warnings) -> None:
        found = match_measurement(text, lineno)
        if found is not None:
            setup = measurement_setup(found, state["params"])
            setup["kernel"] = found.kernel or state["kernel"]
            result_set = groups.get(lineno, **setup, tunables=state["tunables"],
                                    labels=state["labels"], policy=state["policy"])
            add_samples(result_set, found)
            return
        kernel = kernel_heading(text)
        if kernel:
            state["kernel"] = kernel
            return
        command = command_of(text)
        if command is not None:
            self._command(command, state)
            return
        setup = burn_setup(text, lineno)
        if setup is not None:
            state["params"] = setup
        elif near_miss(text):
            raise ParseError("malformed result line", line=lineno)
        else:
            warnings.add(lineno, "ignored unrecognised line")

    @staticmethod
    def _command(command: str, state: dict) -> None:
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

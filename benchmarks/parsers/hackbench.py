"""hackbench output (rt-tests and the classic hackbench.c).

    Running in process mode with 10 groups using 40 file descriptors each (== 400 tasks)
    Each sender will pass 100 messages of 100 bytes
    Time: 0.512

    Running with 10*40 (== 400) tasks.
    Time: 0.498

Every `Time:` line is one sample of time_s for the setup described by the lines before it.
Params: groups, fds, tasks, loops (`-l`: messages each sender passes), message_bytes, and from
rt-tests' banner mode = process | thread. The banner never says whether the messages went
through pipes (`-p`) or sockets, so rt-tests output needs params.transport = pipe | socket from
the upload (the harness records it from the command line); without it the run is UNASSIGNED
rather than pooled with the other transport. Any other line holding a number (an error, the
usage text) refuses the input.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .base import (
    NUMBER,
    Accounting,
    ParseError,
    Parser,
    ParseResult,
    ResultGroups,
    Warnings,
    fraction,
    head_lines,
    numbered_lines,
    parse_number,
)

MODE_RE = re.compile(
    r"Running in (\w+) mode with (\d+) groups using (\d+) file descriptors each"
    r"\s*\(==\s*(\d+) tasks\)", re.I)
CLASSIC_RE = re.compile(r"Running with (\d+)\s*\*\s*(\d+)\s*\(==\s*(\d+)\)\s*tasks\.?", re.I)
MESSAGES_RE = re.compile(r"Each sender will pass (\d+) messages of (\d+) bytes", re.I)
TIME_RE = re.compile(rf"Time:\s*({NUMBER})", re.I)
TIME_PREFIX_RE = re.compile(r"Time:", re.I)
MODES = {"process": "process", "threaded": "thread", "thread": "thread"}


class HackbenchParser(Parser):
    name = "hackbench"
    version = 2
    description = "hackbench output"

    def detect(self, head: str) -> float:
        lines = head_lines(head)
        times = fraction(lines, lambda t: bool(TIME_RE.fullmatch(t)))
        if not times:
            return 0.0
        if any(MODE_RE.fullmatch(t) or CLASSIC_RE.fullmatch(t) for t in lines):
            return 0.97
        return 0.3 + 0.5 * times

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        groups = ResultGroups()
        accounting = Accounting(self.description)
        params: dict = {}
        for lineno, text in numbered_lines(lines, warnings):
            text = text.strip()
            if match := MODE_RE.fullmatch(text):
                mode = MODES.get(match.group(1).lower())
                if mode is None:
                    raise ParseError(f"unknown hackbench mode {match.group(1)!r}", line=lineno)
                params = {"mode": mode, "groups": int(match.group(2)),
                          "fds": int(match.group(3)), "tasks": int(match.group(4))}
            elif match := CLASSIC_RE.fullmatch(text):
                params = {"groups": int(match.group(1)), "fds": int(match.group(2)),
                          "tasks": int(match.group(3))}
            elif match := MESSAGES_RE.fullmatch(text):
                params = {**params, "loops": int(match.group(1)),
                          "message_bytes": int(match.group(2))}
            elif match := TIME_RE.fullmatch(text):
                self._sample(groups, params, lineno, match.group(1))
            elif TIME_PREFIX_RE.match(text):
                raise ParseError("malformed 'Time:' line", line=lineno)
            else:
                accounting.unknown(lineno, text)
        accounting.check()
        return self.result(groups.results(), warnings)

    @staticmethod
    def _sample(groups: ResultGroups, params: dict, lineno: int, token: str) -> None:
        value = parse_number(token, line=lineno, what="time in seconds")
        result = groups.get(lineno, benchmark="hackbench", params=params)
        if "mode" in params and "transport" not in params:
            # rt-tests' banner: pipe or socket is known only from the command line.
            result.missing = ["param.transport"]
            result.block = result.block or str(result.line)
        result.add("time_s", value)

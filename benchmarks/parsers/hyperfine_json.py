"""hyperfine `--export-json` output: one result set per benchmarked command.

Every entry of "times" is a sample of time_s (falling back to "mean" when times are missing);
"parameters" from `--parameter-scan`/`-L` become params; the command is labels["command"] and its
program's name the benchmark hint.

hyperfine's other exports (`--export-csv`, `--export-markdown`, `--export-asciidoc`,
`--export-orgmode`) and its terminal summary carry only mean, stddev, min and max, never the
runs themselves; they are recognised here so that the refusal says what works: rerun with
`--export-json FILE` and upload that file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from itertools import chain, islice

from .base import BOM, ParseError, Parser, ParseResult, ResultSet, Warnings, maybe_number
from .jsondoc import expect, read_document

CSV_HEADER_RE = re.compile(r"command,mean,stddev,median,user,system,min,max(?:,.*)?")
MARKDOWN_HEADER_RE = re.compile(r"\|\s*Command\s*\|\s*Mean \[\w+\]\s*\|.*Relative\s*\|")
TABLE_HEADER_RE = re.compile(r"[|=\s]*Command\s*\|\s*Mean \[\w+\].*", re.I)
SUMMARY_RE = re.compile(r"Time \(mean ± σ\):.*")
OTHER_EXPORTS = ((CSV_HEADER_RE, "a hyperfine CSV export (--export-csv)"),
                 (MARKDOWN_HEADER_RE, "a hyperfine markdown export (--export-markdown)"),
                 (TABLE_HEADER_RE, "a hyperfine table export"),
                 (SUMMARY_RE, "hyperfine's terminal summary"))


def other_export(head: str) -> tuple[int, str] | None:
    """(line, what) when `head` is one of hyperfine's exports that hold no single runs."""
    for number, raw in enumerate(head.lstrip(BOM).splitlines()[:50], 1):
        text = raw.strip()
        for pattern, what in OTHER_EXPORTS:
            if pattern.fullmatch(text):
                return number, what
    return None


class HyperfineJsonParser(Parser):
    name = "hyperfine-json"
    version = 1
    description = "hyperfine JSON export"

    def detect(self, head: str) -> float:
        text = head.lstrip(BOM + " \t\r\n")
        if not text.startswith("{") or '"results"' not in text:
            return 0.9 if other_export(head) else 0.0
        return 0.97 if '"command"' in text and re.search(r'"(times|mean)"', text) else 0.5

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        lines = iter(lines)
        first = [line if isinstance(line, str) else bytes(line).decode("utf-8", "replace")
                 for line in islice(lines, 50)]
        found = other_export("\n".join(line.rstrip("\r\n") for line in first))
        if found and not "".join(first).lstrip(BOM + " \t\r\n").startswith("{"):
            raise ParseError(f"this is {found[1]}: it holds only summaries (mean, min, max), "
                             "not the runs. Rerun hyperfine with --export-json FILE and upload "
                             "that file", line=found[0])
        lines = chain(first, lines)
        document = expect(read_document(lines, warnings), dict, "hyperfine export", 1)
        entries = expect(document.get("results"), list, '"results"', 1)
        results = [self._entry(entry, index) for index, entry in enumerate(entries)]
        return self.result(results, warnings)

    @staticmethod
    def _entry(entry, index: int) -> ResultSet:
        what = f"results[{index}]"
        expect(entry, dict, what, None)
        command = expect(entry.get("command"), str, f"{what}.command", None)
        times = entry.get("times")
        if times is None:
            times = [entry.get("mean")]
        expect(times, list, f"{what}.times", None)
        program = os.path.basename(command.split()[0]) if command.split() else None
        result = ResultSet(benchmark=program or None, labels={"command": command}, line=1)
        for value in times:
            result.add("time_s", expect(value, float, f"{what}.times[]", None))
        parameters = entry.get("parameters") or {}
        expect(parameters, dict, f"{what}.parameters", None)
        for key, value in parameters.items():
            if not isinstance(value, str | int | float) or isinstance(value, bool):
                raise ParseError(f"{what}.parameters[{key!r}] must be a string or number")
            result.params[key] = maybe_number(value) if isinstance(value, str) else value
        return result

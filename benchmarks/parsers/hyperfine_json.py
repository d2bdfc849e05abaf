"""hyperfine `--export-json` output: one result set per benchmarked command.

Every entry of "times" is a sample of time_s (falling back to "mean" when times are missing);
"parameters" from `--parameter-scan`/`-L` become params; the command is labels["command"] and its
program's name the benchmark hint.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from .base import BOM, ParseError, Parser, ParseResult, ResultSet, Warnings, maybe_number
from .jsondoc import expect, read_document


class HyperfineJsonParser(Parser):
    name = "hyperfine-json"
    version = 1
    description = "hyperfine JSON export"

    def detect(self, head: str) -> float:
        text = head.lstrip(BOM + " \t\r\n")
        if not text.startswith("{") or '"results"' not in text:
            return 0.0
        return 0.97 if '"command"' in text and re.search(r'"(times|mean)"', text) else 0.5

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
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

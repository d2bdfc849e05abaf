"""Our own JSON format, `schedbench-v1`, plus the simulator's `run --format json` objects.

    {"format": "schedbench-v1",
     "runs": [{"benchmark": "threadtest", "kernel": "2.6.24", "machine": "core2-laptop",
               "policy": "SCHED_OTHER", "params": {"loops": 10000}, "tunables": {},
               "metrics": {"time_ms": [8953, 8990]}, "series": {}}]}

A metric is a list of numbers, or {"unit", "values", "higher_is_better"}. Also accepted: a bare
list of runs, a single run object, a simulator object (recognised by "simulator_version" or
"workload"), and NDJSON (one such object per line, e.g. `simulator sweep` output), which is read
line by line instead of as one document.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from .base import BOM, ParseError, Parser, ParseResult, ResultSet, Warnings, clean_line, is_quoted
from .jsondoc import expect, loads, scalar_dict

FORMAT_NAME = "schedbench-v1"


class SchedbenchJsonParser(Parser):
    name = "schedbench-json"
    version = 1
    description = "schedbench JSON"

    def detect(self, head: str) -> float:
        text = head.lstrip(BOM + " \t\r\n")
        if not text.startswith(("{", "[")):
            return 0.0
        if f'"{FORMAT_NAME}"' in text:
            return 0.99
        if '"simulator_version"' in text:
            return 0.95
        if '"metrics"' in text and ('"kernel"' in text or '"benchmark"' in text):
            return 0.8
        return 0.2

    def parse(self, lines: Iterable[str]) -> ParseResult:
        warnings = Warnings()
        results: list[ResultSet] = []
        for value, lineno in json_values(lines, warnings):
            results.extend(results_of(value, lineno))
        return self.result(results, warnings)


def json_values(lines: Iterable, warnings: Warnings):
    """(value, line) pairs: one per line for NDJSON, else the single document."""
    iterator = iter(lines)
    pending: list[str] = []
    first_line = None
    for lineno, raw in enumerate(iterator, 1):
        text = clean_line(raw, lineno)
        if is_quoted(text):
            warnings.add(lineno, "skipped quoted line")
            text = ""
        pending.append(text)
        if text.strip():
            first_line = lineno
            break
    if first_line is None:
        raise ParseError("empty input")
    try:
        first = loads(pending[-1], first_line=first_line)
    except ParseError:
        first = None  # not a complete value on one line: a pretty-printed document
    if isinstance(first, dict):
        yield from _ndjson(first, first_line, iterator, warnings)
        return
    for lineno, raw in enumerate(iterator, first_line + 1):
        text = clean_line(raw, lineno)
        if is_quoted(text):
            warnings.add(lineno, "skipped quoted line")
            text = ""
        pending.append(text)
    yield loads("\n".join(pending), first_line=1), first_line


def _ndjson(first: dict, first_line: int, iterator, warnings: Warnings):
    yield first, first_line
    for lineno, raw in enumerate(iterator, first_line + 1):
        text = clean_line(raw, lineno)
        if not text.strip():
            continue
        if is_quoted(text):
            warnings.add(lineno, "skipped quoted line")
            continue
        yield loads(text, first_line=lineno), lineno


def results_of(value, line: int) -> list[ResultSet]:
    if isinstance(value, list):
        return [run_result(run, line, f"runs[{i}]") for i, run in enumerate(value)]
    expect(value, dict, "JSON document", line)
    if "runs" in value:
        declared = value.get("format", FORMAT_NAME)
        if declared != FORMAT_NAME:
            raise ParseError(f"unsupported format {str(declared)[:40]!r}, "
                             f"expected {FORMAT_NAME!r}", line=line)
        runs = expect(value["runs"], list, '"runs"', line)
        return [run_result(run, line, f"runs[{i}]") for i, run in enumerate(runs)]
    if "simulator_version" in value or "workload" in value:
        return [simulator_result(value, line)]
    return [run_result(value, line, "run")]


def run_result(run, line: int, what: str) -> ResultSet:
    expect(run, dict, what, line)
    result = ResultSet(
        benchmark=_optional_str(run.get("benchmark"), f"{what}.benchmark", line),
        kernel=_optional_str(run.get("kernel"), f"{what}.kernel", line),
        policy=_optional_str(run.get("policy"), f"{what}.policy", line),
        machine=_machine(run.get("machine"), f"{what}.machine", line),
        params=scalar_dict(run.get("params"), f"{what}.params", line),
        tunables=scalar_dict(run.get("tunables"), f"{what}.tunables", line),
        labels={k: str(v) for k, v in scalar_dict(run.get("labels"), f"{what}.labels",
                                                  line).items()},
        line=line,
    )
    _add_metrics(result, run.get("metrics"), f"{what}.metrics", line)
    for name, series in (_dict_or_empty(run.get("series"), f"{what}.series", line)).items():
        result.series[name] = _series(series, f"{what}.series.{name}", line)
    if not result.metrics and not result.series:
        raise ParseError(f"{what} has no metric values and no series", line=line)
    return result


def simulator_result(sim: dict, line: int) -> ResultSet:
    result = ResultSet(
        benchmark=_optional_str(sim.get("workload"), "workload", line),
        kernel=_optional_str(sim.get("kernel"), "kernel", line),
        params=scalar_dict(sim.get("params"), "params", line),
        tunables=scalar_dict(sim.get("tunables"), "tunables", line),
        line=line,
    )
    for key in ("simulator_version", "seed", "topology", "wall_seconds"):
        if sim.get(key) is not None:
            item = sim[key]
            result.labels[key] = item if isinstance(item, str) else json.dumps(item)
    _add_metrics(result, sim.get("metrics"), "metrics", line)
    if sim.get("vmstat") is not None:
        result.series["vmstat"] = _series(sim["vmstat"], "vmstat", line)
    counters = scalar_dict(sim.get("counters"), "counters", line)
    if counters:
        result.series["counters"] = {"columns": list(counters), "rows": [list(counters.values())]}
    groups = _dict_or_empty(sim.get("groups"), "groups", line)
    if groups:
        result.series["groups"] = _groups_series(groups, line)
    return result


def _groups_series(groups: dict, line: int) -> dict:
    columns: list[str] = []
    for stats in groups.values():
        for key in scalar_dict(stats, "groups[]", line):
            if key not in columns:
                columns.append(key)
    rows = [[name, *(stats.get(key) for key in columns)] for name, stats in groups.items()]
    return {"columns": ["group", *columns], "rows": rows}


def _add_metrics(result: ResultSet, metrics, what: str, line: int) -> None:
    for name, spec in _dict_or_empty(metrics, what, line).items():
        unit = higher = None
        values = spec
        if isinstance(spec, dict):
            values = spec.get("values")
            unit = spec.get("unit")
            higher = spec.get("higher_is_better")
            if unit is not None:
                expect(unit, str, f"{what}.{name}.unit", line)
            if higher is not None:
                expect(higher, bool, f"{what}.{name}.higher_is_better", line)
        if not isinstance(values, list):
            values = [values]
        for value in values:
            result.add(name, expect(value, float, f"{what}.{name} values", line), unit, higher)


def _series(series, what: str, line: int) -> dict:
    expect(series, dict, what, line)
    columns = expect(series.get("columns"), list, f"{what}.columns", line)
    for column in columns:
        expect(column, str, f"{what}.columns[]", line)
    rows = expect(series.get("rows"), list, f"{what}.rows", line)
    for row in rows:
        expect(row, list, f"{what}.rows[]", line)
        if len(row) != len(columns):
            raise ParseError(f"{what}: a row has {len(row)} values for {len(columns)} columns",
                             line=line)
        for cell in row:
            if cell is not None and not isinstance(cell, int | float | str):
                raise ParseError(f"{what}: cells must be numbers or strings", line=line)
    return {"columns": list(columns), "rows": rows}


def _dict_or_empty(value, what: str, line: int) -> dict:
    return {} if value is None else expect(value, dict, what, line)


def _optional_str(value, what: str, line: int) -> str | None:
    return None if value is None else expect(value, str, what, line)


def _machine(value, what: str, line: int) -> str | None:
    """A machine name; a machine object (REST shape) contributes its "name"."""
    if isinstance(value, dict):
        name = value.get("name")
        return None if name is None else expect(name, str, f"{what}.name", line)
    return _optional_str(value, what, line)

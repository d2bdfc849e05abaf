"""Shared helpers for the parser tests: fixture access and compact result views."""

from pathlib import Path

from benchmarks.parsers import PARSERS

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers"


def fixture_text(name: str) -> str:
    # newline="" keeps CRLF as written, so the parsers see the real line endings.
    with open(FIXTURES / name, encoding="utf-8", newline="") as handle:
        return handle.read()


def fixture_lines(name: str):
    """A lazy line iterator over a fixture, as an upload view would pass a file."""
    with open(FIXTURES / name, encoding="utf-8", newline="") as handle:
        yield from handle


def parse_fixture(format_name: str, name: str):
    return PARSERS[format_name].parse(fixture_lines(name))


def values(result_set, metric: str) -> list[float]:
    return list(result_set.metrics[metric])


def summary(result) -> list[tuple]:
    """(line, kernel, params, {metric: values}) per result set, for exact comparisons."""
    return [
        (r.line, r.kernel, r.params, {m: list(v) for m, v in r.metrics.items()})
        for r in result.results
    ]

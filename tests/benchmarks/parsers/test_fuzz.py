"""Hypothesis fuzzing: whatever the input, only ParseError may come out of a parser."""

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.parsers import PARSERS, ParseError, ParseResult, detect, formats, parse_text

from .helpers import FIXTURES

# PARSER_FUZZ_EXAMPLES=5000 for a long hunt; the default keeps the suite fast.
EXAMPLES = int(os.environ.get("PARSER_FUZZ_EXAMPLES", "120"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

# Every line of every fixture: the realistic vocabulary the fuzzer recombines.
FRAGMENTS = sorted({
    line
    for path in FIXTURES.iterdir()
    for line in path.read_text(encoding="utf-8").splitlines()
})
EXTRA_FRAGMENTS = [
    "time ms", "time -5 ms", "time 1e999 ms", "99999999999999999999999999 loops time 1 ms",
    "Loop to 0M:", "1.5k:", "<>", "Time: nan", "Time (sec)", "r b cs", "{", "}", "[", "]",
    '{"runs": [', '{"format": "schedbench-v1"}', '{"results": [{"command": ""}]}', "null",
    '"metrics": {"x_ms": [1e400]}', "kernel,time_ms", "kernel,time_ms,time_ms", ",,,", '"',
    "# Running 'sched/pipe' benchmark:", "average rps: x", "min=, max=", "\t* 99.0th:",
    "sysbench 1.0", "Latency (ms):", "95th percentile: 1e308", "echo > /proc/sys/kernel/",
    "host:~ # ", "tip  tip + patch", "a 1 1 1 1 1 1 1 1 1", "\ufeff", "\u2028", "\x0b", "\x1c",
]
NOISE = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


def _mutate(line: str, replacement: str) -> str:
    tokens = line.split()
    if not tokens:
        return replacement
    index = len(replacement) % len(tokens)
    tokens[index] = replacement
    return " ".join(tokens)


MUTATED = st.builds(_mutate, st.sampled_from(FRAGMENTS), st.one_of(
    NOISE, st.integers().map(str), st.floats().map(str), st.sampled_from(["-", "1M", "10k", ""])))
LINE = st.one_of(st.sampled_from(FRAGMENTS), st.sampled_from(EXTRA_FRAGMENTS), MUTATED, NOISE)
ENDING = st.sampled_from(["\n", "\r\n", "", " \n", "\t\r\n"])
LINES = st.lists(st.tuples(LINE, ENDING).map("".join), max_size=25)


def _only_parse_errors(call):
    try:
        result = call()
    except ParseError as error:
        assert isinstance(error.message, str)
        assert error.line is None or (isinstance(error.line, int) and error.line >= 1)
        return None
    assert isinstance(result, ParseResult) and result.results
    json.dumps(result.to_dict())  # whatever parses must be storable
    return result


@pytest.mark.parametrize("format_name", formats())
@FUZZ
@given(lines=LINES)
def test_each_parser_on_recombined_fragments(format_name, lines):
    _only_parse_errors(lambda: PARSERS[format_name].parse(iter(lines)))


@pytest.mark.parametrize("format_name", formats())
@settings(max_examples=40, deadline=None)
@given(text=st.text())
def test_each_parser_on_arbitrary_text(format_name, text):
    _only_parse_errors(lambda: PARSERS[format_name].parse(text.splitlines(keepends=True)))


@FUZZ
@given(lines=LINES)
def test_auto_detect_on_recombined_fragments(lines):
    text = "".join(lines)
    scores = detect(text)
    assert all(0 < score <= 1 for _, score in scores)
    _only_parse_errors(lambda: parse_text(text))


@FUZZ
@given(text=st.one_of(st.text(), st.binary().map(lambda b: b.decode("latin-1"))))
def test_auto_detect_on_arbitrary_text(text):
    _only_parse_errors(lambda: parse_text(text))


@settings(max_examples=60, deadline=None)
@given(value=st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["runs", "metrics", "params", "series", "columns", "rows", "values",
                         "unit", "results", "times", "command", "kernel", "format", "workload",
                         "vmstat", "counters", "groups", "labels", "machine", "x_ms"]),
        inner, max_size=5),
    max_leaves=20))
def test_json_parsers_on_arbitrary_json_values(value):
    text = json.dumps(value)
    for name in ("schedbench-json", "hyperfine-json"):
        _only_parse_errors(lambda name=name: PARSERS[name].parse([text]))


@pytest.mark.parametrize("format_name", formats())
@FUZZ
@given(lines=LINES)
def test_each_detector_returns_a_score_and_never_raises(format_name, lines):
    # Called directly: the registry would hide a raising detector behind a zero score.
    score = PARSERS[format_name].detect("".join(lines))
    assert 0.0 <= score <= 1.0

"""Long junk lines must not make any parser's regexes backtrack for ages (a cheap DoS)."""

import contextlib
import time

import pytest

from benchmarks.parsers import PARSERS, ParseError, detect, formats
from benchmarks.parsers.base import MAX_LINE_CHARS

WIDTH = MAX_LINE_CHARS - 10
SHAPES = {
    "blanks": "a" + " " * WIDTH + "b",
    "tabs": "x" + "\t" * WIDTH + "y",
    "digits": "1" * WIDTH,
    "blanks then digits": "x" + " " * (WIDTH // 2) + "1" * (WIDTH // 2) + "y",
    "words": "a " * (WIDTH // 2),
    "numbers": "1 " * (WIDTH // 2),
    "dotted": "1." * (WIDTH // 2),
    "colons": "a:" * (WIDTH // 2),
    "brackets": "[(<" * (WIDTH // 3),
    "keywords": "time loops ms percentiles Total time: " * (WIDTH // 40),
    "kernels": "2.6.24-git19 " * (WIDTH // 13),
}
# A keyword followed by a long run of blanks: where optional-blank patterns sit side by side.
for keyword in ("time", "time:", "1 loops", "2.6.22:", "10", "Loop to", "procs", "time -", "a",
                "Number of threads:", "Total time:", "rps percentiles (usec)", "time: 1 (us)"):
    SHAPES[f"{keyword} + blanks"] = keyword + " " * (WIDTH - len(keyword)) + "z"
    SHAPES[f"{keyword} + tabs"] = keyword + "\t" * (WIDTH - len(keyword)) + "z"


@pytest.mark.parametrize("format_name", formats())
def test_long_junk_lines_are_cheap(format_name):
    parser = PARSERS[format_name]
    started = time.perf_counter()
    for shape in SHAPES.values():
        parser.detect(shape + "\n" + shape)
        with contextlib.suppress(ParseError):
            parser.parse(["time 5 ms", shape, shape])
    # Linear-time matching takes milliseconds; the quadratic patterns this guards against took
    # seconds to minutes on these lines.
    assert time.perf_counter() - started < 3.0


def test_auto_detect_on_long_junk_is_cheap():
    started = time.perf_counter()
    detect("\n".join(SHAPES.values()))
    assert time.perf_counter() - started < 2.0


def test_overlong_lines_are_skipped_with_a_warning():
    result = PARSERS["time-ms"].parse(["time 5 ms", "x" * (MAX_LINE_CHARS + 1), "time 6 ms"])
    assert list(result.results[0].metrics["time_ms"]) == [5, 6]
    assert result.warnings == [f"line 2: ignored line longer than {MAX_LINE_CHARS} characters"]

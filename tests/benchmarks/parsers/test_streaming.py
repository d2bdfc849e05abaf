"""Parsing streams: big inputs are consumed line by line, never joined into one string."""

import tracemalloc

from benchmarks.parsers import PARSERS, parse_lines

SAMPLES = 2_000_000


def time_lines(count):
    for index in range(count):
        yield f"time {1000 + index % 997} ms\n"


def test_two_million_time_lines_from_a_generator():
    consumed = 0

    def counted():
        nonlocal consumed
        for line in time_lines(SAMPLES):
            consumed += 1
            yield line

    result = parse_lines(counted(), head="time 1000 ms\n" * 10)
    (only,) = result.results
    samples = only.metrics["time_ms"]
    assert consumed == SAMPLES and len(samples) == SAMPLES
    assert samples[0] == 1000 and samples[-1] == 1000 + (SAMPLES - 1) % 997
    assert samples.itemsize == 8  # array('d'): 16 MB for 2M samples, not 2M float objects


def test_memory_is_bounded_by_the_samples():
    count = 100_000
    tracemalloc.start()
    try:
        PARSERS["time-ms"].parse(time_lines(count))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The text is ~1.3 MB; samples take 0.8 MB plus array over-allocation. Holding the lines
    # or float objects would need far more than this.
    assert peak < 2 * 1024 * 1024


def test_parse_lines_sniffs_head_from_a_generator_when_not_given():
    result = parse_lines(time_lines(50_000))
    assert result.format == "time-ms" and len(result.results[0].metrics["time_ms"]) == 50_000

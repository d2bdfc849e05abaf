"""The timeline mipmap: windows hold only overlapping segments, stay bounded, say when they are
decimated, and never lose busy time (checked against the raw segments directly)."""

import random

import numpy as np
import pytest

from traces.timeline import (
    FIELDS,
    MAX_SEGMENTS,
    TimelineReader,
    TimelineWriter,
    dominant_tasks,
    merge_level,
)


class Task:
    def __init__(self, index):
        self.index = index


def synthetic(directory, *, cpus=2, per_cpu=60_000, seed=7):
    """Random runs of 1 us to 5 ms with small gaps; returns the raw segments per CPU."""
    rng = random.Random(seed)
    writer = TimelineWriter(directory)
    tasks = [Task(i) for i in range(40)]
    raw = {}
    end_ns = 0
    for cpu in range(cpus):
        now, rows = 0, []
        for _ in range(per_cpu):
            now += rng.choice((0, 0, 500, 20_000))
            length = rng.choice((1_000, 3_000, 10_000, 80_000, 5_000_000))
            task = rng.choice(tasks)
            writer.segment(cpu, task, now, now + length, rng.choice("RSD"))
            rows.append((now, now + length, task.index))
            now += length
        raw[cpu] = rows
        end_ns = max(end_ns, now)
        for k in range(0, per_cpu, 997):
            writer.wakeup(cpu, 1 - cpu, tasks[k % 40], rows[k][0])
    writer.finish(cpus=range(cpus), task_table=[[1000 + i, f"t{i}"] for i in range(40)],
                  start_ns=0, end_ns=end_ns)
    return raw, end_ns


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    directory = tmp_path_factory.mktemp("timeline")
    raw, end_ns = synthetic(directory)
    return TimelineReader(directory), raw, end_ns


def test_levels_are_sorted_non_overlapping_and_conserve_busy_time(built):
    reader, raw, _ = built
    total_raw = sum(e - s for rows in raw.values() for s, e, _ in rows)
    assert reader.index["levels"] >= 6
    for level in range(reader.index["levels"]):
        arrays = {f: np.load(reader.directory / f"L{level}_{f}.npy") for f in FIELDS}
        assert int(arrays["busy"].sum()) == total_raw
        assert int(arrays["count"].sum()) == sum(len(rows) for rows in raw.values())
        for _cpu, lo, hi in reader.index["offsets"][str(level)]:
            starts, ends = arrays["start"][lo:hi], arrays["end"][lo:hi]
            assert np.all(starts[1:] >= ends[:-1])
            assert np.all(ends >= starts)


def test_random_windows_are_bounded_overlapping_and_flag_decimation(built):
    reader, raw, end_ns = built
    rng = random.Random(3)
    for _ in range(60):
        width = int(10 ** rng.uniform(4, np.log10(end_ns)))
        start = rng.randrange(0, max(end_ns - width, 1))
        window = reader.window(start, start + width)
        rows = window["rows"]
        assert len(rows) <= 1.1 * MAX_SEGMENTS
        assert all(row[2] > start and row[1] < start + width for row in rows)
        raw_count = sum(1 for rows_ in raw.values() for s, e, _ in rows_
                        if e > start and s < start + width)
        merged = any(row[5] > 1 for row in rows)
        if window["level"] == 0:
            assert len(rows) == raw_count and not merged
        if raw_count > 1.1 * MAX_SEGMENTS:
            assert merged  # the answer had to be decimated to stay bounded


def test_level_zero_window_is_exactly_the_raw_segments(built):
    reader, raw, _ = built
    start, stop = raw[0][100][0], raw[0][140][1]
    window = reader.window(start, stop, level=0)
    got = [(r[1], r[2], r[3]) for r in window["rows"] if r[0] == 0]
    expected = [row for row in raw[0] if row[1] > start and row[0] < stop]
    assert got == expected


def test_merge_keeps_a_dominant_task_or_says_many():
    arrays = {"start": np.array([0, 10, 20, 30, 1000], "i8"),
              "end": np.array([10, 20, 30, 34, 5000], "i8"),
              "task": np.array([1, 1, 2, 1, 3], "i4"), "state": np.array([1, 2, 1, 2, 3], "i1"),
              "count": np.ones(5, "i4"), "busy": np.array([10, 10, 10, 4, 4000], "i8")}
    merged = merge_level(arrays, 100)
    assert merged["start"].tolist() == [0, 1000]
    assert merged["end"].tolist() == [34, 5000]
    assert merged["task"].tolist() == [1, 3]          # task 1 ran 24 of 34 ns
    assert merged["count"].tolist() == [4, 1]
    assert merged["state"].tolist() == [0, 3]         # merged: unknown; single: kept
    arrays["task"] = np.array([1, 2, 3, 4, 3], "i4")
    assert merge_level(arrays, 100)["task"].tolist() == [-1, 3]  # nobody had half: "(many)"


def test_merge_sums_only_groups_of_several_as_summing_every_group_does():
    """merge_level gives a group of one segment its task without the per-task sums: the same
    tasks as summing every group (dominant_tasks over all of them), on random levels with
    ties, idle-less "(many)" segments (-1), empty segments and merged ones."""
    rng = np.random.default_rng(25)
    for size in (1, 2, 7, 500, 5000):
        for width in (3, 40, 1000):
            lengths = rng.choice([0, 1, 2, 5, 30, 50, 2000], size)
            gaps = rng.choice([0, 1, 10, 100, 5000], size)
            start = np.cumsum(gaps + np.append(0, lengths[:-1])).astype("i8")
            arrays = {"start": start, "end": start + lengths,
                      "task": rng.integers(-1, 4, size).astype("i4"),
                      "state": rng.integers(0, 5, size).astype("i1"),
                      "count": rng.integers(1, 3, size).astype("i4"),
                      "busy": lengths.astype("i8")}
            merged = merge_level(arrays, width)
            short = (arrays["end"] - start) < width
            joins = np.zeros(size, bool)
            joins[1:] = short[1:] & short[:-1] & ((start[1:] - arrays["end"][:-1]) < width)
            group = np.cumsum(~joins) - 1
            busy = np.add.reduceat(arrays["busy"], np.flatnonzero(~joins))
            expected = dominant_tasks(group, arrays["task"], arrays["busy"], busy) \
                if joins.any() else arrays["task"]
            assert merged["task"].tolist() == expected.tolist()


def test_wakeups_window_is_thinned_to_a_bound(built):
    reader, _, end_ns = built
    rows, thinned = reader.wakeups(0, end_ns)
    assert not thinned and len(rows) == 2 * len(range(0, 60_000, 997))
    assert all(a[0] <= b[0] for a, b in zip(rows, rows[1:], strict=False))


@pytest.mark.parametrize("chunk", [1, 97, 4096])
def test_levels_built_a_chunk_at_a_time_are_the_levels_built_whole(tmp_path, monkeypatch,
                                                                   chunk):
    """finish() reads a CPU's segments back a chunk at a time (its memory does not grow with
    the trace); a stretch a merge joins may span chunks. Every file must be what building each
    level from all of a CPU's segments at once gives (a chunk larger than the trace)."""
    from traces import timeline

    def files(directory):
        return {path.name: (np.load(path) if path.suffix == ".npy" else path.read_bytes())
                for path in sorted(directory.iterdir())}

    monkeypatch.setattr(timeline, "CHUNK", 1 << 30)
    synthetic(tmp_path / "whole", per_cpu=3_000, seed=11)
    monkeypatch.setattr(timeline, "CHUNK", chunk)
    synthetic(tmp_path / "chunked", per_cpu=3_000, seed=11)
    whole, chunked = files(tmp_path / "whole"), files(tmp_path / "chunked")
    assert whole.keys() == chunked.keys() and len(whole) > 20
    assert sum(name.startswith("L") for name in whole) >= 6 * len(FIELDS)
    for name, value in whole.items():
        assert np.array_equal(value, chunked[name]) if name.endswith(".npy") \
            else value == chunked[name], name


def test_a_cpu_with_fewer_levels_repeats_its_coarsest_in_the_levels_above(tmp_path):
    """finish() writes every CPU's levels straight into the level files, CPU after CPU: a CPU
    that runs out of levels (one segment left, or none at all) must still have its coarsest
    rows in each level the others need, and no level file may be left that no CPU needs."""
    writer = TimelineWriter(tmp_path)
    tasks = [Task(i) for i in range(3)]
    now = 0
    for step in range(5_000):  # CPU 0: short runs, gaps that part them at each level
        writer.segment(0, tasks[step % 3], now, now + 700, "S")
        now += 700 + max([200] + [2 * 4**k * 1000 for k in range(5) if step % 4**(k + 1)
                                  == 4**(k + 1) - 1])
    writer.segment(2, tasks[1], 10_000, 4_000_000, "R")  # CPU 2: one long segment
    writer.finish(cpus=[0, 1, 2], task_table=[[1, "a"], [2, "b"], [3, "c"]],
                  start_ns=0, end_ns=now)
    reader = TimelineReader(tmp_path)
    levels = reader.index["levels"]
    assert levels >= 4
    assert sorted(p.name for p in tmp_path.glob("L*_start.npy")) == sorted(
        f"L{level}_start.npy" for level in range(levels))
    counts = []
    for level in range(levels):
        offsets = {cpu: (first, stop) for cpu, first, stop in reader.index["offsets"][str(level)]}
        assert offsets[1][0] == offsets[1][1]  # CPU 1: nothing, at every level
        rows = reader.window(0, now, level=level)["rows"]
        assert [row[1:4] for row in rows if row[0] == 2] == [(10_000, 4_000_000, 1)]
        counts.append(sum(row[0] == 0 for row in rows))
        assert sum(row[6] for row in rows if row[0] == 0) == 5_000 * 700
    assert counts[0] == 5_000 and counts[-1] == 1
    # CPU 0 needs every level (1 segment only at the last); CPU 2 has one level of its own
    assert counts == sorted(counts, reverse=True) and counts[-2] > 1

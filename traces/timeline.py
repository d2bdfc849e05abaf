"""The precomputed timeline of a trace: per-CPU run segments at several zoom levels (a mipmap),
plus wakeup arrows, as numpy arrays on disk that a window query memory-maps.

Level 0 holds every segment. Level k merges, on each CPU, runs of consecutive segments shorter
than WIDTHS_NS[k] that are separated by gaps shorter than that width into one segment: it keeps
the task that ran most of that stretch when it ran at least half of it, else becomes the
"(many)" pseudo-task (task index -1). Segments at least that long stay as they are. A window of
width W over C CPUs is served from the coarsest level that still shows detail, i.e. the finest
level whose width is at least 2*W*C/MAX_SEGMENTS: each CPU then holds at most about 2*W/width
segments in the window (long ones are at least `width` apart, merged groups are separated by
gaps of at least `width`), so a response stays near MAX_SEGMENTS whatever the trace's size.

Per CPU, segments never overlap, so both their starts and ends are sorted: a window is two
binary searches per CPU on memory-mapped files, never a scan of the trace.
"""

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from schedtrace.runs import RunRecorder

WIDTHS_NS = [0] + [1000 * 4**i for i in range(13)]   # raw, 1 us, 4 us, ..., ~16.8 s
MAX_SEGMENTS = 4000
MAX_WAKEUPS = 2000
STATES = ["?", "R", "S", "D", "X", "Z", "I", "T", "P", "other"]
_STATE_CODE = {name: code for code, name in enumerate(STATES)}
FIELDS = ("start", "end", "task", "state", "count", "busy")
DTYPES = ("i8", "i8", "i4", "i1", "i4", "i8")
_SPILL = 1 << 16  # segments buffered per CPU before they go to disk
CHUNK = 1 << 16  # segments read at once while the levels are built: what bounds memory


def state_code(prev_state: str) -> int:
    """One letter: R (preempted, also R+), S, D, X, ...; '?' when the trace does not say."""
    letter = prev_state[:1] if prev_state else "?"
    return _STATE_CODE.get(letter, _STATE_CODE["other"])


class TimelineWriter:
    """Collects segments and wakeups while a trace streams past (`segment` and `wakeup`, the
    TraceStats hooks: schedtrace.runs.RunRecorder's, compiled with schedtrace where it can be),
    spilling them to files in `directory`, then `finish()` builds the levels. Memory: a few
    buffers, not the trace."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._recorder = RunRecorder(_STATE_CODE, _STATE_CODE["other"], self._spill, _SPILL)
        self._cpu = self._recorder.cpus  # cpu -> (start, end, task, state) not yet written
        self.segment = self._recorder.segment
        self.wakeup = self._recorder.wakeup
        self._files = {}
        self._pieces = {}    # field -> scratch file of every CPU's levels (see _save_piece)
        self._piece_at = {}  # (level, cpu, field) -> (byte offset, count) in it

    def _spill(self, name, buffers):
        for number, buffer in enumerate(buffers):
            key = (name, number)
            handle = self._files.get(key)
            if handle is None:
                handle = self._files[key] = open(  # noqa: SIM115 - closed in finish()
                    self.directory / f"spill-{name}-{number}.bin", "wb")
            buffer.tofile(handle)
            del buffer[:]

    def _spilled(self, name, dtypes):
        """The spill files of `name`, what is still buffered written first."""
        self._recorder.flush(name)
        paths = []
        for number in range(len(dtypes)):
            self._files.pop((name, number)).close()
            paths.append(self.directory / f"spill-{name}-{number}.bin")
        return paths

    def finish(self, *, cpus, task_table, start_ns, end_ns):
        """Write the levels, wakeups and index. `task_table`: [[pid, comm], ...] by index.

        One CPU at a time, CHUNK segments at a time: its levels go to scratch files (a level
        is merged from the one below, read back in chunks; a stretch that a merge joins is
        never split), then each level's pieces are copied into one file per field. Peak memory
        is a chunk and its merge's temporaries, whatever the trace's length (traces with
        events used late sort a CPU's segments in memory first)."""
        span = max(end_ns - start_ns, 1)
        pieces = {}  # cpu -> number of levels it has
        counts = {}  # (level, cpu) -> segments
        for cpu in sorted(cpus):
            level, count = 0, self._save_level0(cpu)
            while True:
                counts[level, cpu] = count
                if level + 1 == len(WIDTHS_NS) or count <= 1 or WIDTHS_NS[level] > span:
                    break
                level += 1
                count = self._save_merged(level, cpu, WIDTHS_NS[level])
            pieces[cpu] = level + 1
        levels = max(pieces.values(), default=1)
        offsets = {str(level): self._write_level(level, pieces, counts)
                   for level in range(levels)}
        for writer, reader in self._pieces.values():
            writer.close()
            reader.close()
        for path in self.directory.glob("pieces-*.bin"):
            path.unlink()
        self._write_wakeups()
        index = {"levels": levels, "widths_ns": WIDTHS_NS[:levels], "cpus": sorted(cpus),
                 "start_ns": start_ns, "end_ns": end_ns, "offsets": offsets}
        (self.directory / "index.json").write_text(json.dumps(index))
        (self.directory / "tasks.json").write_text(json.dumps(task_table))

    def _save_level0(self, cpu) -> int:
        self._begin_piece(0, cpu)
        if cpu not in self._cpu:
            return 0
        dtypes = ("i8", "i8", "i4", "i1")
        paths = self._spilled(f"cpu{cpu}", dtypes)
        for start, end, task, state in _in_order(paths, dtypes):
            end = np.maximum(end, start)
            self._append_piece(0, cpu, {"start": start, "end": end, "task": task,
                                        "state": state, "count": np.ones(len(start), "i4"),
                                        "busy": end - start})
        return self._piece_at[0, cpu, "start"][1]

    def _save_merged(self, level, cpu, width) -> int:
        """Level `level` of `cpu` from the level below, a chunk at a time: the last stretch a
        chunk ends in waits for the next chunk, so merge_level sees every stretch whole."""
        self._begin_piece(level, cpu)
        carry = None
        for chunk in self._piece_chunks(level - 1, cpu):
            combined = chunk if carry is None else {
                field: np.concatenate([carry[field], chunk[field]]) for field in FIELDS}
            cut = _last_stretch_start(combined, width)
            if cut:
                self._append_piece(level, cpu, merge_level(
                    {field: values[:cut] for field, values in combined.items()}, width))
            carry = {field: values[cut:] for field, values in combined.items()}
        if carry is not None and len(carry["start"]):
            self._append_piece(level, cpu, merge_level(carry, width))
        return self._piece_at[level, cpu, "start"][1]

    def _begin_piece(self, level, cpu):
        """Pieces live in one scratch file per field (creating and deleting a file per level,
        CPU and field cost more than writing them), each piece contiguous in it."""
        for field in FIELDS:
            handles = self._pieces.get(field)
            if handles is None:
                path = self.directory / f"pieces-{field}.bin"
                writer = open(path, "wb")  # noqa: SIM115 - closed in finish()
                handles = self._pieces[field] = (writer, open(path, "rb"))  # noqa: SIM115
            self._piece_at[level, cpu, field] = (handles[0].tell(), 0)

    def _append_piece(self, level, cpu, arrays):
        for field, dtype in zip(FIELDS, DTYPES, strict=True):
            values = np.ascontiguousarray(arrays[field], dtype=dtype)
            values.tofile(self._pieces[field][0])
            offset, count = self._piece_at[level, cpu, field]
            self._piece_at[level, cpu, field] = (offset, count + len(values))

    def _piece_chunks(self, level, cpu, fields=FIELDS):
        """A piece read back CHUNK segments at a time, as {field: array}."""
        count = self._piece_at[level, cpu, "start"][1]
        for first in range(0, count, CHUNK):
            chunk = {}
            for field in fields:
                writer, reader = self._pieces[field]
                writer.flush()
                offset, _ = self._piece_at[level, cpu, field]
                dtype = np.dtype(DTYPES[FIELDS.index(field)])
                reader.seek(offset + first * dtype.itemsize)
                chunk[field] = np.fromfile(reader, dtype=dtype,
                                           count=min(CHUNK, count - first))
            yield chunk

    def _write_level(self, level, pieces, counts):
        """Concatenate the CPUs' pieces of `level` (a CPU with fewer levels repeats its
        coarsest) into L<level>_<field>.npy; returns [[cpu, first, stop], ...]."""
        sources = {cpu: min(level, have - 1) for cpu, have in pieces.items()}
        offsets, position = [], 0
        for cpu in sorted(sources):
            size = counts[sources[cpu], cpu]
            offsets.append([cpu, position, position + size])
            position += size
        for field, dtype in zip(FIELDS, DTYPES, strict=True):
            # Written in sequence, a chunk at a time (no memory map to sync: that cost more
            # than the writing on a busy disk).
            with open(self.directory / f"L{level}_{field}.npy", "wb") as target:
                np.lib.format.write_array_header_1_0(target, {
                    "descr": np.dtype(dtype).str, "fortran_order": False,
                    "shape": (position,)})
                for cpu, _, _ in offsets:
                    for chunk in self._piece_chunks(sources[cpu], cpu, (field,)):
                        chunk[field].tofile(target)
        return offsets

    def _write_wakeups(self):
        dtypes = ("i8", "i4", "i4", "i4")
        paths = self._spilled("wake", dtypes)
        total = paths[0].stat().st_size // 8
        targets = []
        try:
            for name, dtype in zip(("at", "from", "to", "task"), dtypes, strict=True):
                target = open(self.directory / f"wake_{name}.npy", "wb")  # noqa: SIM115
                targets.append(target)
                np.lib.format.write_array_header_1_0(target, {
                    "descr": np.dtype(dtype).str, "fortran_order": False, "shape": (total,)})
            for parts in _in_order(paths, dtypes):
                for values, target in zip(parts, targets, strict=True):
                    values.tofile(target)
        finally:
            for target in targets:
                target.close()


def _in_order(paths, dtypes):
    """Side-by-side spill files, sorted by the first (stably), CHUNK values at a time, then
    removed. They are in order unless events were used late: then they are sorted in memory."""
    previous, in_order = None, True
    with open(paths[0], "rb") as handle:
        while in_order and len(part := np.fromfile(handle, dtype=dtypes[0], count=CHUNK)):
            in_order = (previous is None or part[0] >= previous) and \
                not np.any(part[1:] < part[:-1])
            previous = part[-1]
    handles = [open(path, "rb") for path in paths]  # noqa: SIM115 - closed below
    try:
        if not in_order:
            arrays = [np.fromfile(handle, dtype=dtype)
                      for handle, dtype in zip(handles, dtypes, strict=True)]
            order = np.argsort(arrays[0], kind="stable")
            yield [values[order] for values in arrays]
            return
        while True:
            parts = [np.fromfile(handle, dtype=dtype, count=CHUNK)
                     for handle, dtype in zip(handles, dtypes, strict=True)]
            if not len(parts[0]):
                return
            yield parts
    finally:
        for handle in handles:
            handle.close()
        for path in paths:
            path.unlink()


def _last_stretch_start(arrays: dict, width: int) -> int:
    """Where the last stretch merge_level would join (or the last segment) starts."""
    start, end = arrays["start"], arrays["end"]
    short = (end - start) < width
    joins = np.zeros(len(start), bool)
    joins[1:] = short[1:] & short[:-1] & ((start[1:] - end[:-1]) < width)
    return int(np.flatnonzero(~joins)[-1]) if len(start) else 0


def merge_level(arrays: dict, width: int) -> dict:
    """One CPU's segments with stretches of short segments merged (see the module text)."""
    start, end = arrays["start"], arrays["end"]
    count = len(start)
    if count == 0:
        return arrays
    short = (end - start) < width
    joins = np.zeros(count, bool)
    joins[1:] = short[1:] & short[:-1] & ((start[1:] - end[:-1]) < width)
    group = np.cumsum(~joins) - 1
    first = np.flatnonzero(~joins)
    if len(first) == count:
        return arrays
    last = np.append(first[1:] - 1, count - 1)
    busy = np.add.reduceat(arrays["busy"], first)
    merged_count = np.add.reduceat(arrays["count"], first)
    state = np.where(merged_count == 1, arrays["state"][last], 0).astype("i1")
    return {"start": start[first], "end": end[last],
            "task": _merged_tasks(group, arrays["task"], arrays["busy"], first, busy),
            "state": state, "count": merged_count.astype("i4"), "busy": busy.astype("i8")}


def _merged_tasks(group, task, busy, first, group_busy):
    """Per group (`group`: each segment's, `first`: each group's first segment): the task that
    ran at least half of its busy time, else -1. A group of one segment keeps its task (when it
    ran at all); the busy time per task is summed over the groups of several only: most groups
    at the fine levels are one segment, and the sums sort."""
    merged = np.where(group_busy > 0, task[first], -1).astype("i4")
    several = np.diff(np.append(first, len(group))) > 1
    if several.any():
        members = several[group]
        merged[several] = dominant_tasks(group[members], task[members], busy[members],
                                         group_busy[several])
    return merged


def dominant_tasks(group, task, busy, group_busy):
    """Per group (`group`: each segment's group number, non-decreasing, `group_busy` the groups'
    busy sums): the task with the most busy time when it has at least half, else -1 (ties: the
    highest task index, -1 last)."""
    key_task = np.where(task < 0, np.int64(2**31), task.astype(np.int64))
    keys = group.astype(np.int64) * np.int64(2**32) + key_task
    unique, inverse = np.unique(keys, return_inverse=True)
    per_key = np.bincount(inverse, weights=busy, minlength=len(unique))
    key_group = unique // np.int64(2**32)
    order = np.lexsort((per_key, key_group))
    best = order[np.append(np.flatnonzero(np.diff(key_group[order])), len(order) - 1)]
    best_task = (unique[best] % np.int64(2**32))
    best_task = np.where(best_task == 2**31, -1, best_task).astype("i4")
    share = per_key[best] / np.maximum(group_busy, 1)
    return np.where(share >= 0.5, best_task, -1).astype("i4")


class TimelineReader:
    """Window queries over a directory written by TimelineWriter."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.index = json.loads((self.directory / "index.json").read_text())
        self._tasks = None

    @property
    def tasks(self) -> list:
        if self._tasks is None:
            self._tasks = json.loads((self.directory / "tasks.json").read_text())
        return self._tasks

    def level_for(self, width_ns: int) -> int:
        need = 2 * width_ns * max(len(self.index["cpus"]), 1) / MAX_SEGMENTS
        widths = self.index["widths_ns"]
        for level, width in enumerate(widths):
            if width >= need:
                return level
        return len(widths) - 1

    def _array(self, name):
        return np.load(self.directory / f"{name}.npy", mmap_mode="r")

    def window(self, start_ns: int, end_ns: int, *, level: int | None = None) -> dict:
        """Segments overlapping [start_ns, end_ns] (absolute ns), clipped to nothing: a caller
        sees each segment's true extent. Returns {"level", "rows": [(cpu, start, end, task,
        state, count, busy)]}."""
        if level is None:
            level = self.level_for(end_ns - start_ns)
        arrays = {field: self._array(f"L{level}_{field}") for field in FIELDS}
        rows = []
        for cpu, lo, hi in self.index["offsets"][str(level)]:
            starts, ends = arrays["start"][lo:hi], arrays["end"][lo:hi]
            first = int(np.searchsorted(ends, start_ns, side="right"))
            stop = int(np.searchsorted(starts, end_ns, side="left"))
            if stop <= first:
                continue
            piece = slice(lo + first, lo + stop)
            rows.extend(zip([cpu] * (stop - first), arrays["start"][piece].tolist(),
                            arrays["end"][piece].tolist(), arrays["task"][piece].tolist(),
                            arrays["state"][piece].tolist(), arrays["count"][piece].tolist(),
                            arrays["busy"][piece].tolist(), strict=True))
        return {"level": level, "rows": rows}

    def wakeups(self, start_ns: int, end_ns: int) -> tuple[list, bool]:
        """(rows (at, from_cpu, to_cpu, task), thinned?) inside the window, at most MAX_WAKEUPS
        evenly picked."""
        at = self._array("wake_at")
        first = int(np.searchsorted(at, start_ns, side="left"))
        stop = int(np.searchsorted(at, end_ns, side="right"))
        picks = np.arange(first, stop)
        thinned = len(picks) > MAX_WAKEUPS
        if thinned:
            picks = np.linspace(first, stop - 1, MAX_WAKEUPS).astype(np.int64)
        columns = [self._array(f"wake_{name}")[picks].tolist()
                   for name in ("at", "from", "to", "task")]
        return list(zip(*columns, strict=True)), thinned


def build_directory(parent: Path) -> Path:
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="building-", dir=parent))


def remove_directory(path: Path) -> None:
    if path and os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)

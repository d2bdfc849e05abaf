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

    def _load(self, name, dtypes):
        """The spilled file plus what is still buffered, as numpy arrays."""
        self._recorder.flush(name)
        out = []
        for number, dtype in enumerate(dtypes):
            self._files.pop((name, number)).close()
            path = self.directory / f"spill-{name}-{number}.bin"
            out.append(np.fromfile(path, dtype=dtype))
            path.unlink()
        return out

    def finish(self, *, cpus, task_table, start_ns, end_ns):
        """Write the levels, wakeups and index. `task_table`: [[pid, comm], ...] by index.

        One CPU at a time: its levels go to scratch files, then each level's pieces are copied
        into one file per field. Peak memory is one CPU's segments (and the
        merge's temporaries), not the whole trace's."""
        span = max(end_ns - start_ns, 1)
        pieces = {}  # cpu -> number of levels it has
        counts = {}  # (level, cpu) -> segments
        for cpu in sorted(cpus):
            arrays, level = self._level0(cpu), 0
            while True:
                self._save_piece(level, cpu, arrays)
                counts[level, cpu] = len(arrays["start"])
                if level + 1 == len(WIDTHS_NS) or len(arrays["start"]) <= 1 \
                        or WIDTHS_NS[level] > span:
                    break
                level += 1
                arrays = merge_level(arrays, WIDTHS_NS[level])
            pieces[cpu] = level + 1
        levels = max(pieces.values(), default=1)
        offsets = {str(level): self._write_level(level, pieces, counts)
                   for level in range(levels)}
        for handle in self._pieces.values():
            handle.close()
        for path in self.directory.glob("pieces-*.bin"):
            path.unlink()
        wake = self._load("wake", ("i8", "i4", "i4", "i4"))
        order = np.argsort(wake[0], kind="stable")
        for name, values in zip(("at", "from", "to", "task"), wake, strict=True):
            np.save(self.directory / f"wake_{name}.npy", values[order])
        index = {"levels": levels, "widths_ns": WIDTHS_NS[:levels], "cpus": sorted(cpus),
                 "start_ns": start_ns, "end_ns": end_ns, "offsets": offsets}
        (self.directory / "index.json").write_text(json.dumps(index))
        (self.directory / "tasks.json").write_text(json.dumps(task_table))

    def _save_piece(self, level, cpu, arrays):
        """Append one CPU's level to the scratch file of each field (one file per field, not
        one per piece: creating and deleting hundreds of files cost more than writing them)."""
        for field, dtype in zip(FIELDS, DTYPES, strict=True):
            handle = self._pieces.get(field)
            if handle is None:
                handle = self._pieces[field] = open(  # noqa: SIM115 - closed in finish()
                    self.directory / f"pieces-{field}.bin", "w+b")
            values = np.ascontiguousarray(arrays[field], dtype=dtype)
            self._piece_at[level, cpu, field] = (handle.tell(), len(values))
            values.tofile(handle)

    def _piece(self, level, cpu, field, dtype):
        handle = self._pieces[field]
        offset, count = self._piece_at[level, cpu, field]
        handle.flush()
        handle.seek(offset)
        return np.fromfile(handle, dtype=dtype, count=count)

    def _write_level(self, level, pieces, counts):
        """Concatenate the CPUs' pieces of `level` (a CPU with fewer levels repeats its
        coarsest) into L<level>_<field>.npy; returns [[cpu, first, stop], ...]."""
        sources = {cpu: min(level, have - 1) for cpu, have in pieces.items()}
        offsets, position = [], 0
        for cpu in sorted(sources):
            size = counts[sources[cpu], cpu]
            offsets.append([cpu, position, position + size])
            position += size
        for field, dtype in zip(FIELDS, ("i8", "i8", "i4", "i1", "i4", "i8"), strict=True):
            # Written in sequence, a piece at a time (no memory map to sync: that cost more
            # than the writing on a busy disk).
            with open(self.directory / f"L{level}_{field}.npy", "wb") as target:
                np.lib.format.write_array_header_1_0(target, {
                    "descr": np.dtype(dtype).str, "fortran_order": False,
                    "shape": (position,)})
                for cpu, first, stop in offsets:
                    if stop > first:
                        self._piece(sources[cpu], cpu, field, dtype).tofile(target)
        return offsets

    def _level0(self, cpu):
        name = f"cpu{cpu}"
        buffers = self._cpu.get(cpu)
        if buffers is None:
            return {field: np.zeros(0, dtype) for field, dtype in
                    zip(FIELDS, ("i8", "i8", "i4", "i1", "i4", "i8"), strict=True)}
        start, end, task, state = self._load(name, ("i8", "i8", "i4", "i1"))
        order = np.argsort(start, kind="stable")  # already sorted unless events were late
        start, end, task, state = start[order], end[order], task[order], state[order]
        end = np.maximum(end, start)
        return {"start": start, "end": end, "task": task, "state": state,
                "count": np.ones(len(start), "i4"), "busy": end - start}


def merge_level(arrays: dict, width: int) -> dict:
    """One CPU's segments with stretches of short segments merged (see the module text)."""
    start, end, task = arrays["start"], arrays["end"], arrays["task"]
    count = len(start)
    if count == 0:
        return arrays
    short = (end - start) < width
    gap_small = np.zeros(count, bool)
    gap_small[1:] = (start[1:] - end[:-1]) < width
    joins = np.zeros(count, bool)
    joins[1:] = short[1:] & short[:-1] & gap_small[1:]
    group = np.cumsum(~joins) - 1
    groups = int(group[-1]) + 1
    if groups == count:
        return arrays
    first = np.flatnonzero(~joins)
    last = np.append(first[1:] - 1, count - 1)
    busy = np.add.reduceat(arrays["busy"], first)
    merged_count = np.add.reduceat(arrays["count"], first)
    # Dominant task per group: busy time per (group, task), the largest per group.
    key_task = np.where(task < 0, np.int64(2**31), task.astype(np.int64))
    keys = group.astype(np.int64) * np.int64(2**32) + key_task
    unique, inverse = np.unique(keys, return_inverse=True)
    per_key = np.bincount(inverse, weights=arrays["busy"], minlength=len(unique))
    key_group = unique // np.int64(2**32)
    order = np.lexsort((per_key, key_group))
    best = order[np.append(np.flatnonzero(np.diff(key_group[order])), len(order) - 1)]
    best_task = (unique[best] % np.int64(2**32))
    best_task = np.where(best_task == 2**31, -1, best_task).astype("i4")
    share = per_key[best] / np.maximum(busy, 1)
    merged_task = np.where(share >= 0.5, best_task, -1).astype("i4")
    state = np.where(merged_count == 1, arrays["state"][last], 0).astype("i1")
    return {"start": start[first], "end": end[last], "task": merged_task, "state": state,
            "count": merged_count.astype("i4"), "busy": busy.astype("i8")}


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

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

        One CPU at a time, CHUNK segments at a time: each chunk of level 0 is written and
        merged into level 1, whose rows are written and merged into level 2, and so on (a
        stretch that a merge joins waits for the next rows, so none is split), straight into
        the level files (L<level>_<field>.npy: the CPUs in order, each level's header written
        last, when its length is known). Peak memory is a chunk and its merges' temporaries,
        whatever the trace's length (traces with events used late sort a CPU's segments in
        memory first)."""
        span = max(end_ns - start_ns, 1)
        top = 0  # the coarsest level any CPU may need: WIDTHS_NS[top] covers the trace
        while top + 1 < len(WIDTHS_NS) and WIDTHS_NS[top] <= span:
            top += 1
        files = _LevelFiles(self.directory, top)
        used = 1  # levels written: a CPU stops at its first level of at most one segment
        try:
            for cpu in sorted(cpus):
                counts = self._save_levels(cpu, files, top)
                used = max(used, next((level + 1 for level, count in enumerate(counts)
                                       if count <= 1), top + 1))
        finally:
            files.close(used)
        # a CPU with fewer levels of its own repeats its coarsest in the levels above: what
        # merging one segment (or none) again gives, so those rows were written as they are
        offsets = {str(level): files.offsets[level] for level in range(used)}
        self._write_wakeups()
        index = {"levels": used, "widths_ns": WIDTHS_NS[:used], "cpus": sorted(cpus),
                 "start_ns": start_ns, "end_ns": end_ns, "offsets": offsets}
        (self.directory / "index.json").write_text(json.dumps(index))
        (self.directory / "tasks.json").write_text(json.dumps(task_table))

    def _save_levels(self, cpu, files, top) -> list[int]:
        """Every level of `cpu` up to `top`, in its place in the level files; their lengths."""
        cascade = _Cascade(cpu, files, top)
        if cpu in self._cpu:
            dtypes = ("i8", "i8", "i4", "i1")
            for start, end, task, state in _in_order(self._spilled(f"cpu{cpu}", dtypes),
                                                      dtypes):
                end = np.maximum(end, start)
                cascade.feed(0, {"start": start, "end": end, "task": task, "state": state,
                                 "count": np.ones(len(start), "i4"), "busy": end - start})
        return cascade.close()

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


class _LevelFiles:
    """L<level>_<field>.npy for levels 0 to `top`, open for appending a CPU's rows at a time
    (`append`); `offsets[level]` gets [cpu, first, stop] per CPU (`begin`). `close(used)`
    writes the headers of the first `used` levels and removes the others (no CPU needed them).
    The header's length does not depend on the shape (numpy pads it so that a shape can be
    rewritten in place): it is written first with length 0 and again once the length is known."""

    def __init__(self, directory: Path, top: int):
        self.directory = directory
        self.handles = {}
        self.offsets = [[] for _ in range(top + 1)]
        self.lengths = [0] * (top + 1)
        for level in range(top + 1):
            for field, dtype in zip(FIELDS, DTYPES, strict=True):
                handle = open(self._path(level, field), "wb")  # noqa: SIM115 - see close()
                self.handles[level, field] = handle
                _write_header(handle, dtype, 0)

    def _path(self, level, field):
        return self.directory / f"L{level}_{field}.npy"

    def begin(self, level, cpu):
        self.offsets[level].append([cpu, self.lengths[level], self.lengths[level]])

    def append(self, level, arrays):
        for field, dtype in zip(FIELDS, DTYPES, strict=True):
            np.ascontiguousarray(arrays[field], dtype=dtype).tofile(self.handles[level, field])
        self.lengths[level] += len(arrays["start"])
        self.offsets[level][-1][2] = self.lengths[level]

    def close(self, used):
        for (level, field), handle in self.handles.items():
            if level < used:
                handle.seek(0)
                _write_header(handle, DTYPES[FIELDS.index(field)], self.lengths[level])
            handle.close()
            if level >= used:
                self._path(level, field).unlink()


def _write_header(handle, dtype, length):
    np.lib.format.write_array_header_1_0(handle, {
        "descr": np.dtype(dtype).str, "fortran_order": False, "shape": (length,)})


class _Cascade:
    """One CPU's levels built as its segments stream past: rows of level k given to `feed` are
    written and merged into level k + 1, all but the last stretch that merge would join (the
    next rows may continue it: it is carried until they come, or until `close`)."""

    def __init__(self, cpu, files: _LevelFiles, top: int):
        self.files = files
        self.top = top
        self.carry = [None] * (top + 1)  # level -> rows of level - 1 not merged yet
        self.counts = [0] * (top + 1)
        for level in range(top + 1):
            files.begin(level, cpu)

    def feed(self, level, arrays):
        if not len(arrays["start"]):
            return
        self.files.append(level, arrays)
        self.counts[level] += len(arrays["start"])
        if level == self.top:
            return
        width, carry = WIDTHS_NS[level + 1], self.carry[level + 1]
        combined = arrays if carry is None else {
            field: np.concatenate([carry[field], arrays[field]]) for field in FIELDS}
        cut = _last_stretch_start(combined, width)
        self.carry[level + 1] = {field: values[cut:] for field, values in combined.items()}
        if cut:
            self.feed(level + 1, merge_level(
                {field: values[:cut] for field, values in combined.items()}, width))

    def close(self) -> list[int]:
        """Merge what is carried, level by level; each level's number of rows."""
        for level in range(1, self.top + 1):
            carry = self.carry[level]
            if carry is not None and len(carry["start"]):
                self.carry[level] = None
                self.feed(level, merge_level(carry, WIDTHS_NS[level]))
        return self.counts


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

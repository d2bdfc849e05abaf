"""Run segments and wakeups gathered for a timeline while a trace streams past: TraceStats'
on_segment / on_wakeup hooks, compiled with the other hot modules, so a segment costs a few list
appends rather than a Python call's worth of work. Full buffers are handed to `spill(name,
arrays)` as typed arrays: memory stays a few buffers, whatever the trace's length."""

from array import array
from collections.abc import Callable

from .stats import TaskStats

Lists = tuple[list[int], list[int], list[int], list[int]]
SEGMENT_TYPES = ("q", "q", "i", "b")  # start, end (ns), task index, end state code
WAKEUP_TYPES = ("q", "i", "i", "i")   # at (ns), from cpu, to cpu, task index


class RunRecorder:
    """`segment(cpu, task, start_ns, end_ns, end_state)` keeps, per CPU, start, end, the task's
    index and `state_codes[end_state[:1]]` (`other` when the letter is not there,
    `state_codes["?"]` for an empty state); `wakeup(from_cpu, to_cpu, task, at_ns)` keeps at,
    from, to and the task's index. Once `limit` are held, or on `flush(name)`, they go to
    `spill(name, arrays)` (name "cpu<N>" or "wake"; arrays typed as SEGMENT_TYPES or
    WAKEUP_TYPES) and the buffers start again."""

    def __init__(self, state_codes: dict[str, int], other: int,
                 spill: Callable[[str, tuple[array, ...]], object], limit: int = 1 << 16) -> None:
        self.state_codes = state_codes
        self.other = other
        self.unknown = state_codes["?"]
        self.spill = spill
        self.limit = limit
        self.cpus: dict[int, Lists] = {}
        self.wakes: Lists = ([], [], [], [])

    def segment(self, cpu: int, task: object, start_ns: int, end_ns: int,
                end_state: str) -> None:
        lists = self.cpus.get(cpu)
        if lists is None:
            lists = ([], [], [], [])
            self.cpus[cpu] = lists
        starts = lists[0]
        starts.append(start_ns)
        lists[1].append(end_ns)
        lists[2].append(_index(task))
        lists[3].append(self.state_codes.get(end_state[:1], self.other) if end_state
                        else self.unknown)
        if len(starts) >= self.limit:
            self.flush(f"cpu{cpu}")

    def wakeup(self, from_cpu: int, to_cpu: int, task: object, at_ns: int) -> None:
        at, source, target, index = self.wakes
        at.append(at_ns)
        source.append(from_cpu)
        target.append(to_cpu)
        index.append(_index(task))
        if len(at) >= self.limit:
            self.flush("wake")

    def flush(self, name: str) -> None:
        """Hand what `name` holds ("cpu<N>" or "wake") to `spill`, even when it is nothing."""
        if name == "wake":
            lists, types = self.wakes, WAKEUP_TYPES
        else:
            lists, types = self.cpus.get(int(name[3:]), ([], [], [], [])), SEGMENT_TYPES
        arrays = tuple(array(code, values) for code, values in zip(types, lists, strict=True))
        for values in lists:
            values.clear()
        self.spill(name, arrays)


def _index(task: object) -> int:
    """The task's index: TraceStats passes its TaskStats (read directly, compiled); anything
    else with an `index` is accepted too (e.g. a caller building a timeline by hand)."""
    if isinstance(task, TaskStats):
        return task.index
    index: int = getattr(task, "index")  # noqa: B009 - typed for the compiled build
    return index

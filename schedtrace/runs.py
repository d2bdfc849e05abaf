"""Run segments and wakeups gathered for a timeline while a trace streams past: TraceStats'
on_segment / on_wakeup hooks that append to typed arrays (compiled with the other hot modules,
so a segment costs a few stores rather than a Python call's worth of work). A full buffer is
handed to `spill(name, buffers)`, which must empty it: memory stays a few buffers, whatever
the trace's length."""

from array import array
from collections.abc import Callable

from .stats import TaskStats

Buffers = tuple[array, array, array, array]


class RunRecorder:
    """`segment(cpu, task, start_ns, end_ns, end_state)` keeps, per CPU, start and end (int64),
    the task's index (int32) and `state_codes[end_state[:1]]` (int8; `other` when the letter
    is not there, `state_codes["?"]` for an empty state); `wakeup(from_cpu, to_cpu, task,
    at_ns)` keeps at (int64), from, to and the task's index (int32). `spill(name, buffers)` gets
    "cpu<N>" or "wake" once `limit` entries are held."""

    def __init__(self, state_codes: dict[str, int], other: int,
                 spill: Callable[[str, Buffers], object], limit: int = 1 << 16) -> None:
        self.state_codes = state_codes
        self.other = other
        self.unknown = state_codes["?"]
        self.spill = spill
        self.limit = limit
        self.cpus: dict[int, Buffers] = {}
        self.wakes: Buffers = (array("q"), array("i"), array("i"), array("i"))

    def segment(self, cpu: int, task: object, start_ns: int, end_ns: int,
                end_state: str) -> None:
        buffers = self.cpus.get(cpu)
        if buffers is None:
            buffers = (array("q"), array("q"), array("i"), array("b"))
            self.cpus[cpu] = buffers
        starts = buffers[0]
        starts.append(start_ns)
        buffers[1].append(end_ns)
        buffers[2].append(_index(task))
        code = self.state_codes.get(end_state[:1], self.other) if end_state else self.unknown
        buffers[3].append(code)
        if len(starts) >= self.limit:
            self.spill(f"cpu{cpu}", buffers)

    def wakeup(self, from_cpu: int, to_cpu: int, task: object, at_ns: int) -> None:
        at, source, target, index = self.wakes
        at.append(at_ns)
        source.append(from_cpu)
        target.append(to_cpu)
        index.append(_index(task))
        if len(at) >= self.limit:
            self.spill("wake", self.wakes)


def _index(task: object) -> int:
    """The task's index: TraceStats passes its TaskStats (read directly, compiled); anything
    else with an `index` is accepted too (e.g. a caller building a timeline by hand)."""
    if isinstance(task, TaskStats):
        return task.index
    index: int = getattr(task, "index")  # noqa: B009 - typed for the compiled build
    return index

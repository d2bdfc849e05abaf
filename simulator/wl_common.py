"""Shared helpers for workloads.

A workload builds task programs for one benchmark and turns a finished run into metrics.

Work amounts are CPU time at full speed; ``loops`` are converted with the ``loop_ns`` calibration.
Every task a workload starts at time 0 is created by the benchmark's main process, so it is placed
by the kernel's fork rules (the parent's CPU unless SD_BALANCE_FORK) and spread by the balancer.
"""

from .errors import InvalidValueError
from .program import MARK, Task

US = 1000
MS = 1_000_000


def p(default, type_, help_, min_=None, max_=None):
    spec = {"default": default, "type": type_, "help": help_}
    if min_ is not None:
        spec["min"] = min_
    if max_ is not None:
        spec["max"] = max_
    return spec


def m(unit, higher_is_better):
    return {"unit": unit, "higher_is_better": higher_is_better}


class Build:
    """Per-repeat construction helper: numbering tasks and remembering what metrics need."""

    def __init__(self, eng, params):
        self.eng = eng
        self.params = params
        self.tun = eng.tun
        self.next_tid = 1
        self.state = {}

    def task(self, name, prog, group="default", nice=0, affinity=None):
        t = Task(self.next_tid, name, prog, group=group, nice=nice, affinity=affinity)
        self.next_tid += 1
        return t

    def start(self, task, cpu_id=None):
        return self.eng.spawn(task, cpu_id)

    def check_budget(self, events, duration_ns):
        """Refuse up front a run that cannot finish within the event budget: ``events`` is a
        lower bound on the workload's events and ``duration_ns`` on its simulated time (each
        vmstat sample is one more event)."""
        interval_ns = self.tun["vmstat_interval_ms"] * MS
        if interval_ns > 0 and duration_ns > 0:
            events += duration_ns / interval_ns
        budget = self.eng.max_events
        if events > budget:
            raise InvalidValueError("max_events", f"event budget exceeded before the run starts: "
                                    f"it needs at least {events:.3g} events, more than "
                                    f"max_events = {budget}; shrink the workload, raise "
                                    "vmstat_interval_ms or raise max_events")


def mark_time(key):
    def record(eng, task):
        eng.marks[key] = eng.now
    return (MARK, record)



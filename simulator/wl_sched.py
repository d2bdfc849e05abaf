"""Scheduler-exercising workloads: yield-loop, runqueue-cost and periodic real-time tasks."""

import math

from .errors import InvalidValueError
from .program import LOOP, RUN, SPIN, TIMER, Counter
from .wl_common import MS, m, p

FOREVER = 10**15


class YieldLoop:
    name = "yield-loop"
    description = ("N tasks looping on sched_yield().  Counts context switches and yields after a "
                   "warm-up; with fewer tasks than CPUs a modern kernel never switches.  Prints "
                   "`context switches: <n>` and `yields per second: <f>`.")
    params = {
        "tasks": p(2, "int", "number of yielding tasks", 1, 10_000),
        "duration_ms": p(1000, "int", "measured run time", 1, 10**7),
        "warmup_ms": p(100, "int", "time before counting starts (lets the balancer spread "
                       "the tasks)", 0, 10**7),
    }
    metrics = {"context_switches": m("count", None), "yields_per_s": m("1/s", True)}

    def build(self, b):
        never = Counter("never")
        for i in range(b.params["tasks"]):
            b.start(b.task(f"yielder{i}", [(SPIN, never, 1, True)]))
        warm = b.params["warmup_ms"] * MS
        b.eng.stop_at = warm + b.params["duration_ms"] * MS
        b.check_budget(b.params["tasks"], b.eng.stop_at)

        def snapshot(eng):
            for cpu in eng.cpus:
                eng.account(cpu)
            b.state["cs0"] = eng.counters["context_switches"]
            b.state["y0"] = eng.counters["yields"]

        b.state["cs0"] = b.state["y0"] = 0
        b.eng.call_at(warm, snapshot)

    def collect(self, b):
        c = b.eng.counters
        seconds = b.params["duration_ms"] / 1000
        return {"context_switches": c["context_switches"] - b.state["cs0"],
                "yields_per_s": (c["yields"] - b.state["y0"]) / seconds}


class RunqueueCost:
    name = "runqueue-cost"
    description = ("schedule() cost with the runqueue of CPU 0 filled by `runqueue_length` busy "
                   "loops; the mean cost of a decision in microseconds.  Prints a two-column "
                   "table `runqueue length  microseconds`.")
    params = {
        "runqueue_length": p(16, "int", "busy-looping tasks pinned to CPU 0 (also accepted as "
                             "`tasks`)", 1, 100_000),
        "duration_ms": p(500, "int", "run time", 1, 10**7),
    }
    metrics = {"schedule_us": m("us", False)}
    aliases = {"tasks": "runqueue_length"}  # the name the first versions used

    def build(self, b):
        b.eng.stop_at = b.params["duration_ms"] * MS
        b.check_budget(b.params["runqueue_length"], b.eng.stop_at)
        for i in range(b.params["runqueue_length"]):
            b.start(b.task(f"loop{i}", [(RUN, FOREVER)], affinity={0}))

    def collect(self, b):
        c = b.eng.counters
        n = max(1, c["sched_decisions"])
        return {"schedule_us": c["sched_cost_total_ns"] / n / 1000}


def parse_periodic(text):
    """`period:wcet;...` in milliseconds (floats allowed) -> [(period_ns, wcet_ns)]."""
    tasks = []
    for part in str(text).replace(",", ";").split(";"):
        part = part.strip()
        if not part:
            continue
        try:
            period, wcet = (float(x) for x in part.split(":"))
        except ValueError:
            raise InvalidValueError("params.tasks", f"periodic task {part!r} is not "
                                    "period_ms:wcet_ms") from None
        if not (math.isfinite(period) and math.isfinite(wcet)):
            raise InvalidValueError("params.tasks", f"periodic task {part!r} is not finite")
        if not 0 < wcet <= period <= 1e9:
            raise InvalidValueError("params.tasks", f"periodic task {part!r} needs "
                                    "0 < wcet <= period <= 1e9 ms")
        if int(wcet * MS) < 1:
            raise InvalidValueError("params.tasks", f"periodic task {part!r}: wcet is below "
                                    "1 ns")
        tasks.append((int(period * MS), int(wcet * MS)))
    if len(tasks) > 10_000:
        raise InvalidValueError("params.tasks", f"{len(tasks)} periodic tasks; at most 10000")
    if not tasks:
        raise InvalidValueError("params.tasks", "periodic needs at least one period:wcet task")
    return tasks


class Periodic:
    name = "periodic"
    description = ("Periodic real-time tasks `period:wcet;...` (ms), implicit deadlines, released "
                   "together at 0.  SCHED_DEADLINE (global EDF) where the profile has it, else "
                   "normal tasks sleeping on a timer.  Prints `jobs: <n>` style lines.")
    params = {
        "tasks": p("10:3;20:5;40:8;50:10;25:6;100:20;80:16;200:30", "str",
                   "tasks as period_ms:wcet_ms separated by ';'"),
        "duration_ms": p(1000, "int", "simulated time", 1, 10**8),
    }
    metrics = {"jobs": m("count", None), "deadline_misses": m("count", False),
               "preemptions": m("count", False), "migrations": m("count", False)}
    wants_deadline = True

    def build(self, b):
        specs = parse_periodic(b.params["tasks"])
        duration = b.params["duration_ms"] * MS
        b.check_budget(sum(duration // period + 1 for period, _wcet in specs), duration)
        b.state["tasks"] = []
        for i, (period, wcet) in enumerate(specs):
            t = b.task(f"rt{i}", [(RUN, wcet), (TIMER, period), (LOOP, FOREVER, 0)])
            t.period = period
            t.release = 0
            t.deadline = t.job_deadline = period
            b.state["tasks"].append(t)
            b.start(t)
        b.eng.stop_at = b.params["duration_ms"] * MS

    def collect(self, b):
        eng = b.eng
        end = b.params["duration_ms"] * MS
        # releases in [0, duration], the end instant included (as SimSo counts them)
        jobs = sum(end // t.period + 1 for t in b.state["tasks"])
        missed = eng.counters["deadline_misses"]
        for t in b.state["tasks"]:
            # the job in progress at the end: missed if its deadline has passed unfinished
            if t.release < end and t.job_deadline <= end and t.state != 2:
                missed += 1
        return {"jobs": jobs, "deadline_misses": missed,
                "preemptions": eng.counters["preemptions"],
                "migrations": eng.counters["migrations"]}

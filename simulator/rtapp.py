"""A documented subset of rt-app's JSON task description (see docs/simulator.md).

Supported: ``global.duration`` (s), and per task ``instance``, ``loop`` (-1 = until duration),
``nice``/``priority``, ``cpus``, optional ``phases`` (each with its own ``loop``) and the events
``run``/``runtime`` (us of CPU), ``sleep`` (us), ``timer`` ({"period": us}), ``lock``/``unlock``
(mutex name, futex semantics), ``yield``, ``fork`` (name of a task template with instance 0),
``barrier`` (name; all instances using it meet).  Event keys may carry a numeric suffix
(``run0``, ``sleep1``) as in rt-app.  Anything else is an error naming the key.
"""

import json
import math
import re
from typing import Any

from .errors import InvalidValueError
from .program import (
    BARRIER,
    EXIT,
    FORK,
    LOCK,
    LOOP,
    RUN,
    SLEEP,
    TIMER,
    UNLOCK,
    YIELD,
    Barrier,
    Mutex,
)
from .wl_common import MS, US, m, mark_time, p

FOREVER = 10**15
EVENTS = ("run", "runtime", "sleep", "timer", "lock", "unlock", "yield", "fork", "barrier")
TASK_KEYS = {"instance", "loop", "nice", "priority", "cpus", "phases", "policy"}
_SUFFIX = re.compile(r"^([a-z_]+?)\d*$")

DEFAULT_CONFIG = json.dumps({
    "global": {"duration": 1},
    "tasks": {
        "periodic": {"instance": 2, "loop": -1, "run": 2000, "timer": {"period": 10000}},
        "worker": {"instance": 2, "loop": -1, "lock": "m", "run": 500, "unlock": "m",
                   "sleep": 1000},
    },
})


MAX_TASKS = 100_000  # instances over all tasks (each is a live simulated task)
MAX_US = 1e12  # any duration in microseconds (about 11.6 days)


def _bad(key, msg):
    return InvalidValueError("params.config", f"rt-app {key}: {msg}")


def _number(where, value, low=0.0, high=MAX_US):
    """A finite JSON number within [low, high]; anything else names the key."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(where, f"{value!r} is not a number")
    if not math.isfinite(value) or not low <= value <= high:
        raise _bad(where, f"{value!r} is out of range {low:g}..{high:g}")
    return value


def _integer(where, value, low, high):
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(where, f"{value!r} is not an integer")
    if not low <= value <= high:
        raise _bad(where, f"{value} is out of range {low}..{high}")
    return value


def _object(where, value):
    if not isinstance(value, dict):
        raise _bad(where, f"must be an object, not {type(value).__name__}")
    return value


class RtappCompiler:
    def __init__(self, doc):
        self.doc = doc
        self.mutexes = {}
        self.barriers = {}
        self.templates = {}
        self.needs_duration = False
        self.timer_periods = []

    def event_ops(self, where, key, value):
        kind = suffixed.group(1) if (suffixed := _SUFFIX.match(key)) else key
        if kind in ("run", "runtime"):
            return [(RUN, int(_number(where, value) * US))]
        if kind == "sleep":
            return [(SLEEP, int(_number(where, value) * US))]
        if kind == "timer":
            period = value.get("period") if isinstance(value, dict) else None
            if period is None:
                raise _bad(where, "timer needs {\"period\": microseconds}")
            period_ns = int(_number(f"{where}.period", period) * US)
            if period_ns < 1000:
                raise _bad(f"{where}.period", f"{period!r} is below 1 us")
            self.timer_periods.append(period_ns)
            return [(TIMER, period_ns)]
        if kind in ("lock", "unlock"):
            mutex = self.mutexes.setdefault(str(value), Mutex(str(value)))
            return [(LOCK, mutex, "futex")] if kind == "lock" else [(UNLOCK, mutex)]
        if kind == "yield":
            return [(YIELD,)]
        if kind == "fork":
            return [("fork", str(value))]
        if kind == "barrier":
            bar = self.barriers.setdefault(str(value), Barrier(str(value), 0))
            return [(BARRIER, bar)]
        raise _bad(where, f"unknown event {key!r}; supported: {', '.join(EVENTS)}")

    def body(self, where, spec):
        ops = []
        for key, value in spec.items():
            if key in TASK_KEYS:
                continue
            ops.extend(self.event_ops(f"{where}.{key}", key, value))
        return ops

    def loop_count(self, where, spec):
        loop = _integer(f"{where}.loop", spec.get("loop", 1), -1, 10**12)
        if loop == -1:
            self.needs_duration = True
            return FOREVER
        if loop < 1:
            raise _bad(where, f"loop {loop} must be -1 or >= 1")
        return loop

    def program(self, name, spec):
        if not isinstance(spec, dict):
            raise _bad(name, "task must be an object")
        prog: list[tuple[Any, ...]] = []
        phases = spec.get("phases")
        if phases is not None:
            _object(f"{name}.phases", phases)
        if phases:
            for pname, pspec in phases.items():
                _object(f"{name}.phases.{pname}", pspec)
                start = len(prog)
                prog.extend(self.body(f"{name}.phases.{pname}", pspec))
                count = self.loop_count(f"{name}.phases.{pname}", pspec)
                if count > 1 and len(prog) > start:
                    prog.append((LOOP, count, start))
        else:
            prog.extend(self.body(name, spec))
        if not prog:
            raise _bad(name, "task has no events")
        count = self.loop_count(name, spec)
        if count > 1:
            prog.append((LOOP, count, 0))
        return prog + [mark_time("end"), (EXIT,)]


def parse_config(text):
    try:
        doc = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError as exc:
        raise InvalidValueError("params.config", f"rt-app config is not JSON: {exc}") from None
    except RecursionError:
        raise InvalidValueError("params.config", "rt-app config is nested too deeply") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("tasks"), dict) or not doc["tasks"]:
        raise InvalidValueError("params.config", "rt-app config needs a non-empty \"tasks\" object")
    _object("global", doc.get("global", {}))
    return doc


def _cpus(where, value, ncpus):
    if not isinstance(value, list) or not value:
        raise _bad(where, f"{value!r} is not a non-empty list of CPU numbers")
    return {_integer(where, c, 0, ncpus - 1) for c in value}


class Rtapp:
    name = "rtapp"
    description = ("Tasks described in a subset of rt-app's JSON (run, runtime, sleep, timer, "
                   "lock, unlock, yield, fork, barrier; phases; loop; instance).  Prints "
                   "`<metric>: <value>` lines.")
    params = {
        "config": p(DEFAULT_CONFIG, "str", "rt-app JSON document (string)"),
        "duration_ms": p(0, "int", "override global.duration (0: use the document)", 0, 10**8),
    }
    metrics = {"time_ms": m("ms", False), "jobs": m("count", None),
               "deadline_misses": m("count", False), "context_switches": m("count", None)}

    def build(self, b):
        doc = parse_config(b.params["config"])
        comp = RtappCompiler(doc)
        programs = {name: comp.program(name, spec) for name, spec in doc["tasks"].items()}
        counts = {name: _integer(f"{name}.instance", spec.get("instance", 1), 0, MAX_TASKS)
                  for name, spec in doc["tasks"].items()}
        if sum(counts.values()) > MAX_TASKS:
            raise _bad("instance", f"{sum(counts.values())} instances in all; at most "
                       f"{MAX_TASKS}")
        self._resolve_forks(b, doc, programs)
        self._count_barrier_parties(comp, programs, counts)
        seconds = _number("global.duration", doc.get("global", {}).get("duration", 0), 0, 1e6)
        duration = b.params["duration_ms"] * MS or int(seconds * 1e9)
        if comp.needs_duration and duration <= 0:
            raise InvalidValueError("params.config", "a task loops forever (loop -1) but no "
                                    "global.duration or duration_ms is set")
        if duration > 0:
            b.eng.stop_at = duration
        b.check_budget(sum(counts.values()) + sum(
            counts[name] * (duration // period if duration else 1)
            for name, prog in programs.items() for op in prog if op[0] == TIMER
            for period in (op[1],)), duration)
        ncpus = len(b.eng.cpus)
        for name, spec in doc["tasks"].items():
            if spec.get("cpus") is not None:
                _cpus(f"{name}.cpus", spec["cpus"], ncpus)
            for key in ("nice", "priority"):
                if spec.get(key) is not None:
                    _integer(f"{name}.{key}", spec[key], -20, 139)
        for name, prog in programs.items():
            for i in range(counts[name]):
                b.start(self._make(b, doc, name, prog, i))

    def _make(self, b, doc, name, prog, index):
        spec = doc["tasks"][name]
        cpus = spec.get("cpus")
        nice = int(spec.get("nice", spec.get("priority", 0)) or 0)  # checked by build()
        t = b.task(f"{name}-{index}", prog, nice=max(-20, min(19, nice)),
                   affinity=set(cpus) if cpus else None)
        for op in prog:
            if op[0] == TIMER:
                t.period = op[1]
                t.deadline = t.job_deadline = op[1]
                break
        return t

    def _resolve_forks(self, b, doc, programs):
        for name, prog in programs.items():
            for i, op in enumerate(prog):
                if op[0] != "fork":
                    continue
                target = op[1]
                if target not in programs:
                    raise _bad(f"{name}.fork", f"unknown task {target!r}; tasks: "
                               f"{', '.join(sorted(programs))}")
                prog[i] = (FORK, self._forker(b, doc, target, programs[target]))

    def _forker(self, b, doc, target, prog):
        def make(eng, parent):
            return self._make(b, doc, target, prog, eng.counters["forks"])
        return make

    def _count_barrier_parties(self, comp, programs, counts):
        for name, prog in programs.items():
            for bar in {op[1] for op in prog if op[0] == BARRIER}:
                bar.parties += counts[name]

    def collect(self, b):
        eng = b.eng
        return {"time_ms": eng.now / MS, "jobs": eng.counters["jobs"],
                "deadline_misses": eng.counters["deadline_misses"],
                "context_switches": eng.counters["context_switches"]}

"""Spec validation and the run driver behind the public API (simulator.validate / simulator.run)."""

import dataclasses
import time

from .engine import Engine
from .errors import InvalidValueError, SpecError, UnknownNameError
from .machine import MachineModel
from .policies import make_policy as make_family_policy
from .profiles import PROFILES, tunable_specs
from .results import assemble
from .topology import parse_topology, topology_for_cpus
from .workloads import WORKLOADS

SPEC_FIELDS = ("workload", "kernel", "params", "tunables", "cpus", "topology", "seed", "repeat",
               "max_events", "max_cpu_seconds", "machine")
DEFAULT_CPUS = 2
DEFAULT_MAX_EVENTS = 50_000_000
# CPU seconds one repeat may use: the event budget alone lets a slow case (10^4 tasks on a
# queue that is costly per event) run for many minutes before it stops
DEFAULT_MAX_CPU_SECONDS = 300.0
MAX_REPEAT = 10_000
MIN_VMSTAT_INTERVAL_MS = 0.001  # one sample per simulated microsecond at most
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _to_int(field, value):
    if isinstance(value, bool):
        raise InvalidValueError(field, f"{field} = {value!r} is not an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    try:
        return int(str(value).strip().replace("_", ""), 10)
    except ValueError:
        raise InvalidValueError(field, f"{field} = {value!r} is not an integer") from None


def _to_float(field, value):
    if isinstance(value, bool):
        raise InvalidValueError(field, f"{field} = {value!r} is not a number")
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise InvalidValueError(field, f"{field} = {value!r} is not a number") from None
    if result != result or result in (float("inf"), float("-inf")):
        raise InvalidValueError(field, f"{field} = {value!r} is not a finite number")
    return result


def _to_bool(field, value):
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InvalidValueError(field, f"{field} = {value!r} is not a boolean (use 0/1/true/false)")


def coerce(field, spec, value):
    """Convert ``value`` to the declared type of ``spec`` and check its range."""
    kind = spec["type"]
    if spec.get("sysctl_bool"):  # 0/1 as /proc/sys shows it; true/false accepted too
        return int(_to_bool(field, value))
    if kind == "int":
        result = _to_int(field, value)
    elif kind == "float":
        result = _to_float(field, value)
    elif kind == "bool":
        return _to_bool(field, value)
    elif kind.startswith("choice:"):
        choices = kind.split(":", 1)[1].split(",")
        if str(value) not in choices:
            raise InvalidValueError(field, f"{field} = {value!r} is invalid; valid values: "
                                    f"{', '.join(choices)}")
        return str(value)
    else:
        return value if isinstance(value, str) else str(value)
    low, high = spec.get("min"), spec.get("max")
    if low is not None and result < low:
        raise InvalidValueError(field, f"{field} = {result} is below the minimum {low}")
    if high is not None and result > high:
        raise InvalidValueError(field, f"{field} = {result} is above the maximum {high}")
    return result


# Sanity ranges for tunables (the catalog's tunables carry no min/max of their own).
TUNABLE_RANGES = {"HZ": (10, 10_000), "smt_speed": (0.05, 1.0), "noise_pct": (0.0, 50.0),
                  "loop_ns": (0.001, 1e6), "loop_memory_ns": (0.001, 1e6),
                  "busy_factor": (1, 100_000),
                  "vmstat_interval_ms": (0.0, 1e7), "rr_interval": (1, 10_000),
                  "priority_levels": (1, 20), "timeslice_ms": (1, 10_000),
                  "timeslice_ticks": (1, 10_000), "busy_idx": (0, 4), "idle_idx": (0, 4),
                  "newidle_idx": (0, 4), "cache_refill_us": (-1.0, 1e6)}


def _normalise_mapping(field, given, specs, kind, ranges=None, aliases=None):
    aliases = aliases or {}
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise InvalidValueError(field, f"{field} must be an object of name: value")
    out = {name: spec["default"] for name, spec in specs.items()}
    for name, value in given.items():
        if name in aliases:
            if aliases[name] in given:
                raise InvalidValueError(f"{field}.{name}", f"{field}.{name} is another name "
                                        f"for {aliases[name]}; give only one of them")
            name = aliases[name]
        if name not in specs:
            raise UnknownNameError(f"{field}.{name}", kind, name, specs)
        spec = dict(specs[name])
        if ranges and name in ranges:
            spec["min"], spec["max"] = ranges[name]
        elif spec["type"] in ("int", "float") and "min" not in spec:
            spec["min"] = 0
        out[name] = coerce(f"{field}.{name}", spec, value)
    return out


def _topology(spec):
    if spec.get("topology") not in (None, ""):
        topo = parse_topology(spec["topology"])
        if spec.get("cpus") not in (None, "") and _to_int("cpus", spec["cpus"]) != topo.ncpus:
            raise InvalidValueError("cpus", f"cpus {spec['cpus']} disagrees with topology "
                                    f"{spec['topology']} ({topo.ncpus} CPUs)")
        return topo
    return topology_for_cpus(spec.get("cpus") if spec.get("cpus") not in (None, "")
                             else DEFAULT_CPUS)


def _int_field(spec, name, default, low, high):
    value = _to_int(name, spec.get(name, default) if spec.get(name) is not None else default)
    if not low <= value <= high:
        raise InvalidValueError(name, f"{name} = {value} is out of range {low}..{high}")
    return value


def validate(spec):
    """The normalised spec (every default filled in) or a SpecError naming the bad field."""
    if not isinstance(spec, dict):
        raise SpecError("spec", "a run spec must be a JSON object")
    for key in spec:
        if key not in SPEC_FIELDS:
            raise UnknownNameError(key, "spec field", key, SPEC_FIELDS)
    workload = spec.get("workload")
    if workload not in WORKLOADS:
        raise UnknownNameError("workload", "workload", str(workload), WORKLOADS)
    kernel = spec.get("kernel")
    if kernel not in PROFILES:
        raise UnknownNameError("kernel", "kernel", str(kernel), PROFILES)
    topo = _topology(spec)
    machine = _machine(spec.get("machine"))
    norm = {
        "workload": workload,
        "kernel": kernel,
        "params": _normalise_mapping("params", spec.get("params"), WORKLOADS[workload].params,
                                     "param",
                                     aliases=getattr(WORKLOADS[workload], "aliases", None)),
        "tunables": _normalise_mapping("tunables", spec.get("tunables"),
                                       tunable_specs(kernel, machine), "tunable",
                                       TUNABLE_RANGES),
        "cpus": topo.ncpus,
        "topology": topo.label(),
        "seed": _int_field(spec, "seed", 1, 0, 2**63 - 1),
        "repeat": _int_field(spec, "repeat", 1, 1, MAX_REPEAT),
        "max_events": _int_field(spec, "max_events", DEFAULT_MAX_EVENTS, 1, 10**12),
        "max_cpu_seconds": _cpu_seconds_field(spec),
    }
    interval = norm["tunables"].get("vmstat_interval_ms", 0)
    if 0 < interval < MIN_VMSTAT_INTERVAL_MS:
        raise InvalidValueError("tunables.vmstat_interval_ms", f"tunables.vmstat_interval_ms = "
                                f"{interval} is below {MIN_VMSTAT_INTERVAL_MS} (0 turns the "
                                "series off)")
    refill = norm["tunables"].get("cache_refill_us", 0)
    if -1 < refill < 0:
        raise InvalidValueError("tunables.cache_refill_us", f"tunables.cache_refill_us = "
                                f"{refill} is neither -1 (priced from the working set) nor a "
                                "flat price >= 0")
    if machine is not None:  # only when given, so specs without one normalise as before
        _check_loop_figure(machine, norm, spec.get("tunables"))
        norm["machine"] = dataclasses.asdict(machine)
    return norm


def _check_loop_figure(machine, norm, given_tunables):
    """A workload whose counter lives in memory needs the calibration's loop_memory_ns: an
    older calibration without it is refused rather than fed the register loop's figure."""
    counter = norm["params"].get("counter")
    explicit = isinstance(given_tunables, dict) and "loop_memory_ns" in given_tunables
    if counter is not None and machine.loop_figure(counter) is None and not explicit:
        raise InvalidValueError("machine", "the calibration has no loop_memory_ns (the counting "
                                "loop with its counter in memory) and params.counter is "
                                f"{counter!r}: calibrate again, or give params.counter="
                                "register or tunables.loop_memory_ns")


def _cpu_seconds_field(spec):
    value = spec.get("max_cpu_seconds")
    if value is None:
        return DEFAULT_MAX_CPU_SECONDS
    seconds = _to_float("max_cpu_seconds", value)
    if not 0.001 <= seconds <= 10**7:
        raise InvalidValueError("max_cpu_seconds", f"max_cpu_seconds = {value!r} is outside "
                                "0.001 .. 10000000")
    return seconds


def _machine(given):
    """A MachineModel from a calibration object (or a whole calibrate JSON), or None."""
    if given is None:
        return None
    if isinstance(given, MachineModel):
        return given
    if isinstance(given, dict) and isinstance(given.get("calibration"), dict):
        given = given["calibration"]
    return MachineModel.from_calibration(given)


def make_policy(norm, ncpus):
    kernel, tun = norm["kernel"], norm["tunables"]
    family = PROFILES[kernel]["family"]
    workload = WORKLOADS[norm["workload"]]
    if getattr(workload, "wants_deadline", False) and tun.get("sched_deadline"):
        family = "edf"
    return make_family_policy(family, kernel, tun, ncpus)


def run_once(norm, topo, repeat_index, trace, reference=False, ftrace=None, queue=None):
    from .wl_common import Build

    policy = make_policy(norm, topo.ncpus)
    eng = Engine(topo, policy, norm["tunables"], norm["seed"] + repeat_index,
                 norm["max_events"], None if ftrace is not None else trace,
                 reference=reference, ftrace=ftrace, queue=queue,
                 max_cpu_seconds=norm["max_cpu_seconds"])
    workload = WORKLOADS[norm["workload"]]
    build = Build(eng, norm["params"])
    workload.build(build)
    eng.run()
    return eng, workload.collect(build)


TRACE_FORMATS = ("text", "ftrace")


def ftrace_writer(trace, trace_format):
    """The engine's ftrace hook for ``trace_format="ftrace"`` (None for the debug text)."""
    if trace_format not in TRACE_FORMATS:
        raise UnknownNameError("trace_format", "trace format", str(trace_format), TRACE_FORMATS)
    if trace is None or trace_format != "ftrace":
        return None
    from .ftrace import FtraceWriter
    return FtraceWriter(trace)


def run(spec, *, trace=None, progress=None, reference=False, trace_format="text", queue=None):
    """Run ``spec``; ``reference=True`` uses the engine's plain (non-inlined) paths, ``queue``
    ("indexed" or "heapq") picks the event queue (simulator/eventq.py; None: the build's).
    ``trace`` (a text file) gets the engine's debug log, or with ``trace_format="ftrace"``
    the schedule as ftrace text (see simulator/ftrace.py)."""
    norm = validate(spec)
    topo = parse_topology(norm["topology"])
    ftrace = ftrace_writer(trace, trace_format)
    started = time.perf_counter()
    runs = []
    for r in range(norm["repeat"]):
        if trace is not None:
            trace.write(f"# repeat {r} seed {norm['seed'] + r}\n")
        runs.append(run_once(norm, topo, r, trace, reference, ftrace, queue))
        if progress is not None:
            progress(r + 1, norm["repeat"])
    return assemble(norm, runs, time.perf_counter() - started)

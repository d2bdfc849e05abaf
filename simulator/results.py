"""Turning finished engines into the contract's JSON result object."""

from typing import Any

from . import __version__ as VERSION
from .workloads import WORKLOADS

VMSTAT_COLUMNS = ["time_s", "r", "b", "cs", "us", "sy", "id"]


def vmstat_rows(eng):
    """vmstat-like rows between consecutive samples: rates per second and CPU percentages."""
    rows = []
    ncpus = len(eng.cpus)
    for (t0, _r0, cs0, busy0, sys0), (t1, r1, cs1, busy1, sys1) in zip(
            eng.samples, eng.samples[1:], strict=False):
        dt = t1 - t0
        if dt <= 0:
            continue
        us = 100.0 * (busy1 - busy0) / (dt * ncpus)
        sy = 100.0 * (sys1 - sys0) / (dt * ncpus)
        us, sy = min(100.0, us), min(100.0 - min(100.0, us), sy)
        rows.append([round(t1 / 1e9, 6), r1, 0, round((cs1 - cs0) * 1e9 / dt),
                     round(us), round(sy), round(max(0.0, 100.0 - us - sy))])
    return rows


def _groups(runs):
    groups: dict[str, dict[str, float]] = {}
    for eng, _metrics in runs:
        for name, (wait, ran) in eng.group_totals().items():
            g = groups.setdefault(name, {"wait_sum_ms": 0.0, "run_ms": 0.0})
            g["wait_sum_ms"] += wait / 1e6
            g["run_ms"] += ran / 1e6
    n = len(runs)
    return {name: {k: round(v / n, 6) for k, v in g.items()} for name, g in sorted(groups.items())}


def assemble(norm, runs, wall_seconds):
    workload = WORKLOADS[norm["workload"]]
    metrics: dict[str, list[Any]] = {name: [] for name in workload.metrics}
    counters: dict[str, int] = {}
    for eng, values in runs:
        for name in metrics:
            metrics[name].append(values[name])
        for key, value in eng.counters.items():
            counters[key] = counters.get(key, 0) + value
    return {
        "simulator_version": VERSION,
        "workload": norm["workload"],
        "kernel": norm["kernel"],
        "params": norm["params"],
        "tunables": norm["tunables"],
        "topology": norm["topology"],
        "seed": norm["seed"],
        "metrics": metrics,
        "counters": counters,
        "groups": _groups(runs),
        "vmstat": {"columns": VMSTAT_COLUMNS, "rows": vmstat_rows(runs[0][0])},
        "wall_seconds": round(wall_seconds, 6),
        # the calibration it ran with, its `noisy` mark included: a prediction carries it
        **({"machine": norm["machine"]} if "machine" in norm else {}),
    }

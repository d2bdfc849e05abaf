"""Reading a dimension (kernel, policy, machine.cpus, param.loops, ...) off a run, and ordering
its values."""

import math
from datetime import UTC

from benchmarks.identity import versions, vocabulary
from benchmarks.models import Run

UNSET = "(unset)"
# The machine's shape as comparison dimensions: simulated and real machines meet on them.
MACHINE_DIMENSIONS = ("machine.cpus", "machine.topology")
# When a run was measured, by calendar period (UTC): the same kernel on the same box drifting.
MEASURED_DIMENSIONS = ("measured.day", "measured.week", "measured.month")


def measured_period(moment, period: str) -> str:
    """`2024-05-03`, `2024-W18` (ISO week) or `2024-05`: text that sorts in time order."""
    if moment is None:
        return UNSET
    moment = moment.astimezone(UTC)
    if period == "day":
        return moment.strftime("%Y-%m-%d")
    if period == "week":
        year, week, _ = moment.isocalendar()
        return f"{year}-W{week:02d}"
    return moment.strftime("%Y-%m")


def value_of(run: Run, dimension: str):
    """The run's value along `dimension`: a string, or a number for numeric params/tunables."""
    if dimension == "kernel":
        return run.kernel.version
    if dimension == "policy":
        return run.policy or "(default)"
    if dimension == "machine":
        return run.machine.name
    if dimension == "benchmark":
        return run.benchmark.slug
    if dimension == "label":  # an mmtests column's config: 6.1.0 vanilla vs 6.1.0 fix-v2r1
        return run.label or "(none)"
    if dimension == "source":  # measured (upload, api, ...) beside simulated on one machine
        return run.source
    if dimension == "machine.cpus":
        return run.machine.cpus if run.machine.cpus is not None else UNSET
    if dimension == "machine.topology":
        return run.machine.topology or UNSET
    if dimension in MEASURED_DIMENSIONS:
        return measured_period(run.measured_at, dimension.partition(".")[2])
    section, _, name = dimension.partition(".")
    source = run.params if section == "param" else run.tunables
    value = (source or {}).get(name, UNSET)
    if value is None:
        return "none"
    # One category per value however the run spelled it (true/1/"1", 1000000.0/1000000).
    return vocabulary.canonical_value(value)


def label(value) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def sort_key(dimension: str, value):
    """Kernels in version order, numbers numerically, the rest alphabetically; unset last."""
    if value == UNSET:
        return (3, 0, "")
    if dimension == "kernel":
        return (0, 0, versions.sort_key(str(value)))
    if dimension == "machine.topology":  # 1x2x1 < 1x2x2 < 2x4x2: by CPU count, then shape
        parts = [int(p) for p in str(value).split("x") if p.isdigit()]
        return (1, float(math.prod(parts)) if parts else 0.0, str(value))
    if isinstance(value, (int, float)):
        return (1, float(value), "")
    return (2, 0, str(value).lower())


def is_numeric(values) -> bool:
    return bool(values) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
    )


def available(runs: list[Run]) -> list[str]:
    """Dimensions worth offering for these runs: the fixed four plus every param and tunable."""
    params = sorted({name for run in runs for name in (run.params or {})})
    tunables = sorted({name for run in runs for name in (run.tunables or {})})
    machine = [dim for dim in MACHINE_DIMENSIONS
               if any(value_of(run, dim) != UNSET for run in runs)]
    label = ["label"] if any(run.label for run in runs) else []
    measured = list(MEASURED_DIMENSIONS) if any(run.measured_at for run in runs) else []
    return ["kernel", "policy", "machine", "benchmark", "source", *label, *machine, *measured,
            *(f"param.{name}" for name in params), *(f"tunable.{name}" for name in tunables)]


def suggest_layout(varying: list[str], values: dict[str, list]) -> dict:
    """The builder's default x and series: what these runs vary in. A numeric param with
    several values goes on x (the sweep people run: loops, clients), kernels become the series;
    without one, kernels go on x and the next varying dimension is the series."""
    def numbers(dim):  # `values`: each dimension's raw values, as value_of gives them
        return [v for v in values.get(dim, []) if v != UNSET and is_numeric([v])]

    sweeps = [d for d in varying if d.startswith("param.") and len(numbers(d)) >= 2]
    if sweeps:
        # A sweep every run records (a true numeric axis) before one some runs lack.
        x = max(sweeps, key=lambda d: (UNSET not in values.get(d, []), len(numbers(d))))
    else:
        x = "kernel" if "kernel" in varying else varying[0]
    rest = [d for d in varying if d != x and UNSET not in values.get(d, [])]
    series = "kernel" if "kernel" in rest else (rest[0] if rest else None)
    return {"x": x, "series": series}

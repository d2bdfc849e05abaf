"""Reading a dimension (kernel, policy, param.loops, ...) off a run, and ordering its values."""

from benchmarks import versions
from benchmarks.models import Run

UNSET = "(unset)"


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
    if dimension == "source":  # measured (upload, api, ...) beside simulated on one machine
        return run.source
    section, _, name = dimension.partition(".")
    source = run.params if section == "param" else run.tunables
    value = (source or {}).get(name, UNSET)
    if isinstance(value, bool) or value is None:
        return str(value).lower()
    return value


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
    return ["kernel", "policy", "machine", "benchmark", "source",
            *(f"param.{name}" for name in params), *(f"tunable.{name}" for name in tunables)]

"""What differs between the setups of runs, besides the thing being compared."""

import json
from dataclasses import dataclass

from benchmarks.models import Run

MACHINE_FIELDS = ("name", "cpu_model", "arch", "topology", "memory_mb", "virtualization")


@dataclass(frozen=True)
class DiffRow:
    section: str
    key: str
    values: tuple  # one value per run, None where a run does not record it

    @property
    def differs(self) -> bool:
        return len({_comparable(v) for v in self.values}) > 1


def plain(value) -> str:
    """A stored JSON value as a person reads it: lists comma-separated, JSON for anything
    nested, never Python's repr (True, None, quotes)."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)) and all(
            isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        return ", ".join(str(v) for v in value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _comparable(value):
    return repr(value)


def _flatten(prefix: str, mapping: dict) -> dict:
    flat = {}
    for key, value in (mapping or {}).items():
        if isinstance(value, dict):
            flat.update(_flatten(f"{prefix}{key}.", value))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _setup(run: Run) -> dict[tuple[str, str], object]:
    machine = run.machine
    setup = {("kernel", "version"): run.kernel.version, ("kernel", "family"): run.kernel.family}
    setup.update({("machine", field): getattr(machine, field) for field in MACHINE_FIELDS})
    setup.update({("machine", f"cache {k}"): v for k, v in (machine.caches or {}).items()})
    setup[("run", "benchmark")] = run.benchmark.slug
    setup[("run", "policy")] = run.policy
    setup.update({("params", k): v for k, v in (run.params or {}).items()})
    setup.update({("tunables", k): v for k, v in (run.tunables or {}).items()})
    setup.update({("environment", k): v for k, v in _flatten("", run.environment).items()})
    return setup


def environment_diff(runs: list[Run]) -> list[DiffRow]:
    """One row per setting any run records, in a stable order: kernel, machine, run, params..."""
    setups = [_setup(run) for run in runs]
    order = {"kernel": 0, "machine": 1, "run": 2, "params": 3, "tunables": 4, "environment": 5}
    keys = sorted({key for setup in setups for key in setup}, key=lambda k: (order[k[0]], k[1]))
    return [DiffRow(section, key, tuple(s.get((section, key)) for s in setups))
            for section, key in keys]

"""What differs between the setups of runs, besides the thing being compared."""

import json
from dataclasses import dataclass

from benchmarks.models import Machine, Run

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


def _machine_setup(machine: Machine) -> dict[tuple[str, str], object]:
    setup = {("machine", field): getattr(machine, field) for field in MACHINE_FIELDS}
    setup.update({("machine", f"cache {k}"): v for k, v in (machine.caches or {}).items()})
    return setup


def _setup(run: Run, machines: dict) -> dict[tuple[str, str], object]:
    """`machines`: the machine parts made so far, by the machine object's identity (the runs
    of a comparison share their machine objects: a thousand runs, a few machines)."""
    setup = {("kernel", "version"): run.kernel.version, ("kernel", "family"): run.kernel.family}
    machine = run.machine
    if id(machine) not in machines:
        machines[id(machine)] = _machine_setup(machine)
    setup.update(machines[id(machine)])
    setup[("run", "benchmark")] = run.benchmark.slug
    setup[("run", "policy")] = run.policy
    setup.update({("params", k): v for k, v in (run.params or {}).items()})
    setup.update({("tunables", k): v for k, v in (run.tunables or {}).items()})
    setup.update({("environment", k): v for k, v in _flatten("", run.environment).items()})
    return setup


def environment_diff(runs: list[Run]) -> list[DiffRow]:
    """One row per setting any run records, in a stable order: kernel, machine, run, params..."""
    machines: dict = {}
    setups = [_setup(run, machines) for run in runs]
    order = {"kernel": 0, "machine": 1, "run": 2, "params": 3, "tunables": 4, "environment": 5}
    keys = sorted({key for setup in setups for key in setup}, key=lambda k: (order[k[0]], k[1]))
    return [DiffRow(section, key, tuple(s.get((section, key)) for s in setups))
            for section, key in keys]


# --- two machines ---------------------------------------------------------------------------

MACHINE_ROWS = (("cpu_model", "CPU model"), ("arch", "architecture"), ("sockets", "sockets"),
                ("cores_per_socket", "cores per socket"),
                ("threads_per_core", "threads per core"), ("cpus", "CPUs"),
                ("memory_mb", "memory (MB)"), ("virtualization", "virtualization"))


def _seen_values(values: set) -> str | None:
    return ", ".join(sorted(map(str, values))) if values else None


def _kernels_and_tunables(machines: list[Machine]) -> tuple[list, dict]:
    """Per machine: the kernels its visible runs used (natural order, with counts) and every
    value each tunable had in them."""
    from django.db.models import Count

    ids = [m.pk for m in machines]
    runs = Run.objects.visible().filter(machine_id__in=ids)
    kernels = (runs.values_list("machine_id", "kernel__version", "kernel__sort_key")
               .annotate(n=Count("id")).order_by("kernel__sort_key", "kernel__version"))
    tunables: dict[str, list[set]] = {}
    for machine_id, values in runs.values_list("machine_id", "tunables").distinct():
        for key, value in _flatten("", values or {}).items():
            seen = tunables.setdefault(key, [set() for _ in ids])[ids.index(machine_id)]
            seen.add(value if isinstance(value, (str, int, float, bool)) else str(value))
    return list(kernels), tunables


def machine_diff(machines: list[Machine]) -> list[DiffRow]:
    """Topology, caches, calibration, kernels run and tunables set, one row each."""
    from benchmarks.selectors import calibration_latest

    rows = [DiffRow("machine", label, tuple(getattr(m, name) for m in machines))
            for name, label in MACHINE_ROWS]
    caches = [_flatten("", m.caches or {}) for m in machines]
    rows += [DiffRow("caches", key, tuple(c.get(key) for c in caches))
             for key in sorted({key for c in caches for key in c})]
    calibrations = [calibration_latest(m) for m in machines]
    values = [c.values if c else {} for c in calibrations]
    rows += [DiffRow("calibration", key, tuple(v.get(key) for v in values))
             for key in sorted({key for v in values for key in v})]
    kernels, tunables = _kernels_and_tunables(machines)
    counts: dict[str, list] = {}
    for machine_id, version, _, n in kernels:
        slot = counts.setdefault(version, [None] * len(machines))
        slot[[m.pk for m in machines].index(machine_id)] = f"{n} run{'s' if n != 1 else ''}"
    rows += [DiffRow("kernels", version, tuple(slot)) for version, slot in counts.items()]
    rows += [DiffRow("tunables", key, tuple(_seen_values(v) for v in seen))
             for key, seen in sorted(tunables.items())]
    return rows

"""Turning a job spec (the /api/v1/simulations/ body) into validated simulator point specs.

Every point is checked by `simulator.validate` itself, so a bad value is reported with the
simulator's own message; only the field name is translated back to where the user wrote it
(`kernel` -> `kernels`, a swept param -> `sweep.<axis>`).
"""

import hashlib
import itertools
import json
import math
from dataclasses import dataclass, field

from django.utils.text import slugify

import simulator
from benchmarks.errors import InputError
from benchmarks.identity import vocabulary

JOB_FIELDS = ("workload", "params", "kernels", "tunables", "sweep", "repeat", "seed", "cpus",
              "topology", "max_events", "title", "machine", "trace")
TOPOLOGY_AXES = ("cpus", "topology")


class JobSpecError(InputError):
    """A job spec that cannot run; `field` names the offending key of the request body."""

    def __init__(self, field_name: str, message: str, **extra):
        super().__init__(message, field=field_name, **extra)

    def as_body(self) -> dict:
        # The message alone does not always name the key: the answer prefixes it.
        return {**super().as_body(), "error": f"{self.field}: {self.message}",
                "fields": {self.field: [self.message]}}


@dataclass(frozen=True)
class Limits:
    max_points: int
    max_events_per_run: int
    max_events: int


@dataclass(frozen=True)
class MachineTarget:
    """A real machine to simulate on: its topology and its calibration (the service finds
    them; expansion stays free of the database)."""

    id: int
    name: str
    topology: str
    calibration_id: int
    calibration: dict


@dataclass
class PointSpec:
    kernel: str
    values: dict
    seed: int
    spec: dict  # normalised by simulator.validate
    spec_hash: str


@dataclass
class Expansion:
    spec: dict
    spec_hash: str
    points: list[PointSpec] = field(default_factory=list)


def canonical_hash(payload) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def derive_seed(base: int, kernel: str, values: dict) -> int:
    """A seed per point from its coordinates, not its position: adding a kernel or a sweep value
    to a job leaves the other points' seeds (and so their re-usable runs) unchanged."""
    digest = hashlib.sha256(f"{base}|{kernel}|{json.dumps(values, sort_keys=True)}".encode())
    return int.from_bytes(digest.digest()[:8], "big") >> 1


def _mapping(data: dict, name: str) -> dict:
    value = data.get(name)
    if value in (None, ""):
        return {}
    if not isinstance(value, dict):
        raise JobSpecError(name, f"{name} must be an object of name: value")
    return dict(value)


def _kernels(data: dict) -> list[str]:
    kernels = data.get("kernels", data.get("kernel"))
    if isinstance(kernels, str):
        kernels = [k.strip() for k in kernels.split(",") if k.strip()]
    if not isinstance(kernels, list) or not kernels:
        raise JobSpecError("kernels", "kernels must be a non-empty list of kernel profiles, e.g. "
                           f"[\"2.6.22\", \"2.6.24\"]; profiles: {', '.join(_profiles())}")
    if not all(isinstance(k, str) for k in kernels):
        raise JobSpecError("kernels", "every kernel must be a profile name (a string)")
    return list(dict.fromkeys(kernels))


def _profiles() -> list[str]:
    return list(simulator.catalog()["kernels"])


def _axis_values(name: str, raw) -> list:
    if isinstance(raw, str):
        raw = [part.strip() for part in raw.split(",") if part.strip()]
    if not isinstance(raw, list) or not raw:
        raise JobSpecError(f"sweep.{name}", f"sweep.{name} must be a non-empty list of values")
    if any(isinstance(v, (dict, list)) or v is None for v in raw):
        raise JobSpecError(f"sweep.{name}", f"sweep.{name} values must be numbers or strings")
    return list(dict.fromkeys(raw))


def _sweep(data: dict) -> dict[str, list]:
    sweep = _mapping(data, "sweep")
    for name in sweep:
        if name in ("kernel", "kernels"):
            raise JobSpecError("sweep", "list kernel profiles in \"kernels\", not in the sweep")
        if name == "seed":
            raise JobSpecError("sweep", "seeds are derived per point from \"seed\"; use "
                               "\"repeat\" for more samples")
    axes = {name: _axis_values(name, values) for name, values in sweep.items()}
    if sum(1 for name in axes if name in TOPOLOGY_AXES) > 1:
        raise JobSpecError("sweep", "sweep either cpus or topology, not both")
    return axes


def _place(spec: dict, axis: str, value, workload_params) -> None:
    """Put one sweep value where the simulator expects it, as `python -m simulator sweep` does."""
    if axis in TOPOLOGY_AXES:
        spec.pop("cpus", None)
        spec.pop("topology", None)
        spec[axis] = value
    elif axis.startswith("params."):
        spec["params"][axis[7:]] = value
    elif axis.startswith("tunables."):
        spec["tunables"][axis[9:]] = value
    elif vocabulary.canonical_param_name(axis, slugify(spec["workload"])) in workload_params:
        spec["params"][axis] = value  # `tasks` of runqueue-cost: the simulator takes the alias
    else:
        spec["tunables"][axis] = value  # the simulator names the valid tunables if it is not one


def _int(data: dict, name: str, default: int) -> int:
    value = data.get(name)
    if value in (None, ""):
        return default
    if isinstance(value, bool):
        raise JobSpecError(name, f"{name} must be an integer")
    try:
        number = int(str(value).strip())
    except ValueError:
        raise JobSpecError(name, f"{name} = {value!r} is not an integer") from None
    if number < (0 if name == "seed" else 1):
        raise JobSpecError(name, f"{name} = {number} is below the minimum")
    return number


def _on_machine(spec: dict, data: dict, machine: MachineTarget) -> None:
    """A machine fixes the topology: it is the machine's, never given or swept beside it."""
    given = [name for name in TOPOLOGY_AXES if data.get(name) not in (None, "")]
    given += [name for name in spec["sweep"] if name in TOPOLOGY_AXES]
    if given:
        raise JobSpecError("machine", f"machine {machine.name} fixes the topology "
                           f"({machine.topology}); leave {given[0]} out")
    spec["topology"] = machine.topology
    spec["machine"] = {"id": machine.id, "name": machine.name,
                       "calibration_id": machine.calibration_id,
                       "calibration": dict(machine.calibration)}


def clean_job_spec(data, limits: Limits, machine: MachineTarget | None = None) -> dict:
    """The request body checked for shape; values are left for the simulator to judge."""
    if not isinstance(data, dict):
        raise JobSpecError("spec", "a simulation spec must be a JSON object")
    unknown = sorted(set(data) - set(JOB_FIELDS) - {"kernel"})
    if unknown:
        raise JobSpecError(unknown[0], f"unknown field {unknown[0]!r}; valid fields: "
                           f"{', '.join(JOB_FIELDS)}")
    workload = data.get("workload")
    workloads = simulator.catalog()["workloads"]
    if not isinstance(workload, str) or workload not in workloads:
        raise JobSpecError("workload", f"unknown workload {workload!r}; valid workloads: "
                           f"{', '.join(workloads)}")
    spec = {
        "workload": workload, "params": _mapping(data, "params"), "kernels": _kernels(data),
        "tunables": _mapping(data, "tunables"), "sweep": _sweep(data), "axes": [],
        "repeat": _int(data, "repeat", 1), "seed": _int(data, "seed", 1),
        "max_events": min(_int(data, "max_events", limits.max_events_per_run),
                          limits.max_events_per_run),
        "title": str(data.get("title") or "")[:200],
    }
    if data.get("trace") not in (None, False, "", "0", "false"):
        # only when asked, so the spec (and its hash) of an untraced job stays as before
        spec["trace"] = True
    # PostgreSQL's jsonb does not keep key order, and the first axis is the chart's x: keep the
    # order the user gave in a list.
    spec["axes"] = list(spec["sweep"])
    if machine is not None:
        _on_machine(spec, data, machine)
        return spec
    if data.get("machine") not in (None, ""):  # the service resolves it to a MachineTarget
        raise JobSpecError("machine", "the machine was not looked up")
    for name in TOPOLOGY_AXES:
        if data.get(name) not in (None, ""):
            spec[name] = data[name]
    return spec


def sweep_axes(spec: dict) -> list[str]:
    return list(spec.get("axes") or spec.get("sweep") or [])


def check_limits(spec: dict, limits: Limits) -> int:
    """The number of points; a JobSpecError stating the limit when the job is too big."""
    points = len(spec["kernels"]) * math.prod(len(v) for v in spec["sweep"].values())
    if points > limits.max_points:
        raise JobSpecError("sweep", f"this job has {points} points (kernels x sweep values); "
                           f"the limit is {limits.max_points} points per job",
                           limit=limits.max_points, points=points)
    budget = points * spec["repeat"] * spec["max_events"]
    if budget > limits.max_events:
        raise JobSpecError(
            "max_events", f"this job may simulate up to {budget:,} events ({points} points x "
            f"{spec['repeat']} repeats x max_events {spec['max_events']:,}); the limit is "
            f"{limits.max_events:,} events per job: lower max_events, repeat or the sweep",
            limit=limits.max_events, events=budget)
    return points


def _field_for(error: simulator.SpecError, spec: dict, kernel: str) -> tuple[str, str]:
    name, message = error.field, error.message
    if name == "kernel":
        return "kernels", message
    for axis in spec["sweep"]:
        bare = axis.split(".", 1)[1] if axis.startswith(("params.", "tunables.")) else axis
        if name in (f"params.{bare}", f"tunables.{bare}", axis) or (
                axis in TOPOLOGY_AXES and name in TOPOLOGY_AXES):
            return f"sweep.{axis}", message
    if name.startswith("tunables.") and len(spec["kernels"]) > 1:
        return name, f"kernel {kernel}: {message}"
    return name, message


def _point(spec: dict, kernel: str, values: dict, workload_params) -> PointSpec:
    raw = {"workload": spec["workload"], "kernel": kernel, "params": dict(spec["params"]),
           "tunables": dict(spec["tunables"]), "repeat": spec["repeat"],
           "max_events": spec["max_events"]}
    for name in TOPOLOGY_AXES:
        if name in spec:
            raw[name] = spec[name]
    if spec.get("machine"):
        raw["machine"] = spec["machine"]["calibration"]
    for axis, value in values.items():
        _place(raw, axis, value, workload_params)
    raw["seed"] = derive_seed(spec["seed"], kernel, values)
    try:
        norm = simulator.validate(raw)
    except simulator.SpecError as exc:
        name, message = _field_for(exc, spec, kernel)
        raise JobSpecError(name, message) from None
    identity = {"simulator": simulator.__version__, "spec": norm}
    if spec.get("machine"):  # the run is attached to this machine: never re-use another's
        identity["machine"] = spec["machine"]["id"]
    digest = canonical_hash(identity)
    return PointSpec(kernel=kernel, values=values, seed=norm["seed"], spec=norm,
                     spec_hash=digest)


def expand(data, limits: Limits, machine: MachineTarget | None = None) -> Expansion:
    spec = clean_job_spec(data, limits, machine)
    check_limits(spec, limits)
    workload = simulator.catalog()["workloads"][spec["workload"]]
    workload_params = {**workload["params"], **workload.get("aliases", {})}  # old names too
    axes = list(spec["sweep"].items())
    combos = itertools.product(*(values for _, values in axes))
    grid = [dict(zip([name for name, _ in axes], combo, strict=True)) for combo in combos]
    points = [_point(spec, kernel, values, workload_params)
              for kernel in spec["kernels"] for values in grid]
    digest = canonical_hash({"simulator": simulator.__version__, "spec": spec})
    return Expansion(spec=spec, spec_hash=digest, points=points)


def cli_command(norm: dict, defaults: dict) -> str:
    """`python -m simulator run ...` reproducing one point (non-default params/tunables only)."""
    parts = ["python", "-m", "simulator", "run", "--workload", norm["workload"],
             "--kernel", norm["kernel"]]
    for flag, key in (("--param", "params"), ("--set", "tunables")):
        for name, value in norm[key].items():
            if value != defaults[key].get(name):
                parts += [flag, f"{name}={_cli_value(value)}"]
    if norm.get("machine"):  # the calibration, e.g. from GET /api/v1/machines/<id>/calibration/
        parts += ["--machine", "calibration.json"]
    parts += ["--topology", norm["topology"], "--seed", str(norm["seed"]),
              "--repeat", str(norm["repeat"]), "--max-events", str(norm["max_events"]),
              "--format", "json"]
    return " ".join(_quote(p) for p in parts)


def _cli_value(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _quote(part: str) -> str:
    import shlex

    return shlex.quote(part)

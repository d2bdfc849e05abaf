"""The launch form, generated from `simulator.catalog()`, and its translation to a job spec.

No field is hard-coded: workloads, their params (with defaults and types), kernel profiles and
their tunables all come from the simulator, so a new workload or tunable shows up by itself.
"""

from .runs import simulator_catalog

SWEEP_ROWS = 2
TOPOLOGY_AXES = ("topology", "cpus")


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _field(name: str, spec: dict) -> dict:
    kind = spec["type"]
    return {"name": name, "type": kind, "help": spec.get("help", ""),
            "default": _text(spec["default"]),
            "choices": kind.split(":", 1)[1].split(",") if kind.startswith("choice:") else
            (["true", "false"] if kind == "bool" else None),
            "min": spec.get("min"), "max": spec.get("max")}


def form_catalog() -> dict:
    """What the template needs: workloads with param fields, kernels, the union of tunables."""
    catalog = simulator_catalog()
    kernels = list(catalog["kernels"])
    tunables: dict[str, dict] = {}
    for kernel, profile in catalog["kernels"].items():
        for name, spec in profile["tunables"].items():
            entry = tunables.setdefault(name, {**_field(name, spec), "kernels": [],
                                               "defaults": {}})
            entry["kernels"].append(kernel)
            entry["defaults"][kernel] = _text(spec["default"])
    for entry in tunables.values():
        entry["everywhere"] = len(entry["kernels"]) == len(kernels)
        entry["default_text"] = ", ".join(sorted(set(entry["defaults"].values())))
    return {
        "workloads": [{"name": name, "description": w["description"],
                       "params": [_field(p, s) for p, s in w["params"].items()],
                       "metrics": list(w["metrics"])}
                      for name, w in catalog["workloads"].items()],
        "kernels": [{"name": name, "family": p["family"], "description": p["description"]}
                    for name, p in catalog["kernels"].items()],
        "tunables": sorted(tunables.values(), key=lambda t: (not t["everywhere"], t["name"])),
        "sweep_rows": list(range(1, SWEEP_ROWS + 1)),
    }


def _number_or_text(text: str):
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            continue
    return text


def spec_from_form(post) -> dict:
    """The POSTed form as an /api/v1/simulations/ body; the simulator judges the values."""
    catalog = simulator_catalog()
    workload = post.get("workload", "")
    params = {}
    for name, spec in catalog["workloads"].get(workload, {}).get("params", {}).items():
        value = post.get(f"param.{workload}.{name}", "").strip()
        if value and value != _text(spec["default"]):
            params[name] = value if spec["type"] == "str" else _number_or_text(value)
    tunables = {name[len("tunable."):]: _number_or_text(value.strip())
                for name, value in post.items() if name.startswith("tunable.") and value.strip()}
    sweep = {}
    for row in range(1, SWEEP_ROWS + 1):
        axis = post.get(f"sweep_axis_{row}", "").strip()
        values = [v.strip() for v in post.get(f"sweep_values_{row}", "").split(",") if v.strip()]
        if axis and values:
            sweep[axis] = [_number_or_text(v) for v in values]
    spec = {"workload": workload, "kernels": post.getlist("kernels"), "params": params,
            "tunables": tunables, "sweep": sweep, "repeat": post.get("repeat", "").strip(),
            "seed": post.get("seed", "").strip(), "title": post.get("title", "").strip()}
    if post.get("trace"):
        spec["trace"] = True
    on_machine = post.get("on_machine", "").strip()
    machine = post.get("machine", "").strip()
    if on_machine:  # a calibrated real machine brings its own topology
        spec["machine"] = on_machine
    elif machine:
        spec["topology" if "x" in machine.lower() else "cpus"] = machine
    return spec

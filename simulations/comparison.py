"""The comparison a finished job links to: its runs, x = the first sweep axis, one line per
kernel. Built once, inside the finishing transaction, and skipped when it would be expensive."""

import logging

from django.db import transaction
from django.utils.text import slugify

import simulator
from benchmarks.comparisons.spec import SpecError, parse_spec
from benchmarks.identity import vocabulary
from benchmarks.models import Run, RunSource
from benchmarks.services.comparisons import comparison_create

from .expansion import sweep_axes
from .models import SimulationPoint, Status

log = logging.getLogger(__name__)
MAX_COMPARED_RUNS = 500  # a frozen comparison recomputes bootstrap CIs per cell: keep it cheap


def axis_dimension(spec: dict, axis: str) -> str:
    """The comparison dimension of a sweep axis: param.<name>, tunable.<name>, machine.cpus or
    machine.topology."""
    if axis in ("cpus", "topology"):
        return f"machine.{axis}"
    # Runs store params and tunables in the portal's vocabulary (runqueue-cost's `tasks` is
    # `runqueue_length`), so the axis is named as the runs are.
    benchmark = slugify(spec["workload"])
    if axis.startswith(("params.", "tunables.")):
        kind, name = axis.split(".", 1)
    else:
        workload = simulator.catalog()["workloads"][spec["workload"]]
        params = {**workload["params"], **workload.get("aliases", {})}  # old names too
        known = axis in params or vocabulary.canonical_param_name(axis, benchmark) in params
        kind, name = ("params" if known else "tunables"), axis
    if kind == "params":
        return f"param.{vocabulary.canonical_param_name(name, benchmark)}"
    return f"tunable.{vocabulary.canonical_tunable_name(name)}"


def _layout(spec: dict, axes: list[str]) -> tuple[str, str | None, str | None]:
    """(x, series, facet). On a real machine the measured runs must not share a cell with
    simulated ones: one kernel profile -> a line per source; several -> a line per kernel
    (real kernels are named apart from profiles, which the caller checks) and, with room,
    a panel per source."""
    x = axes[0] if axes else "kernel"
    facet = axes[1] if len(axes) > 1 and axes[1] != x else None
    if not spec.get("machine"):
        return x, "kernel" if x != "kernel" else None, facet
    if len(spec["kernels"]) == 1:
        return x, "source", facet
    return x, "kernel" if x != "kernel" else "source", facet or (
        "source" if x != "kernel" else None)


def comparison_spec(job, run_ids: list[int]) -> dict:
    """x = the first sweep axis (or kernel), a line per kernel, a panel per second-axis value."""
    spec = job.spec
    axes = [axis_dimension(spec, axis) for axis in sweep_axes(spec)]
    x, series, facet = _layout(spec, axes)
    metric = next(iter(simulator.catalog()["workloads"][spec["workload"]]["metrics"]))
    title = spec.get("title") or f"simulation #{job.pk}: {spec['workload']} {metric} by {x}"
    if spec.get("machine"):
        title = spec.get("title") or (f"simulation #{job.pk} on {spec['machine']['name']}: "
                                      f"{spec['workload']} {metric} by {x}, simulated vs measured")
    return {"title": title[:200], "runs": run_ids, "metric": metric, "x": x,
            "series": series, "facet": facet, "statistic": "median", "error": "stdev"}


def _agrees(measured: dict, simulated: dict) -> bool:
    """Every param the two runs both name has the same value (1000000 == 1e6)."""
    return all(measured[name] == simulated[name] for name in measured if name in simulated)


def measured_beside(job, simulated_params: list[dict]) -> list[int]:
    """The machine's measured runs of the same benchmark that a simulated run stands for: each
    swept param present, and every param shared with some simulated run's equal to it (both
    as stored, in the portal's vocabulary)."""
    target = job.spec.get("machine")
    if not target:
        return []
    layout = _layout(job.spec, [axis_dimension(job.spec, a) for a in sweep_axes(job.spec)])
    swept = [dim[len("param."):] for dim in (axis_dimension(job.spec, a)
                                             for a in sweep_axes(job.spec))
             if dim.startswith("param.")]
    runs = (Run.objects.visible().filter(machine_id=target["id"], benchmark__slug=slugify(
        job.spec["workload"])).exclude(source=RunSource.SIMULATOR)
        .order_by("id").values_list("id", "params", "kernel__version"))
    kept = []
    for run_id, params, kernel in runs[:MAX_COMPARED_RUNS]:
        params = params or {}
        if "source" not in layout and kernel in job.spec["kernels"]:
            continue  # it would share a cell with the simulated profile of the same name
        if all(name in params for name in swept) and any(
                _agrees(params, sim) for sim in simulated_params):
            kept.append(run_id)
    return kept


def job_comparison(job):
    run_ids = list(dict.fromkeys(
        SimulationPoint.objects.filter(job=job, status=Status.SUCCEEDED, run__isnull=False)
        .order_by("index").values_list("run_id", flat=True)))
    if run_ids and job.spec.get("machine"):
        simulated = Run.objects.filter(pk__in=run_ids).values_list("params", flat=True)
        run_ids += measured_beside(job, list(simulated))
    if not run_ids or len(run_ids) > MAX_COMPARED_RUNS:
        return None
    try:
        with transaction.atomic():
            return comparison_create(spec=parse_spec(comparison_spec(job, run_ids)),
                                     author=job.owner)
    except SpecError as exc:  # e.g. a metric the workload did not produce for every run
        log.warning("simulation %s: no comparison: %s", job.pk, exc)
        return None

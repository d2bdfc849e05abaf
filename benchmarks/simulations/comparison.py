"""The comparison a finished job links to: its runs, x = the first sweep axis, one line per
kernel. Built once, inside the finishing transaction, and skipped when it would be expensive."""

import logging

from django.db import transaction
from django.utils.text import slugify

import simulator
from benchmarks import vocabulary
from benchmarks.comparisons.spec import SpecError, parse_spec
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
        kind, name = ("params" if axis in params else "tunables"), axis
    if kind == "params":
        return f"param.{vocabulary.canonical_param_name(name, benchmark)}"
    return f"tunable.{vocabulary.canonical_tunable_name(name)}"


def comparison_spec(job, run_ids: list[int]) -> dict:
    """x = the first sweep axis (or kernel), a line per kernel, a panel per second-axis value."""
    spec = job.spec
    axes = [axis_dimension(spec, axis) for axis in sweep_axes(spec)]
    x = axes[0] if axes else "kernel"
    facet = axes[1] if len(axes) > 1 and axes[1] != x else None
    metric = next(iter(simulator.catalog()["workloads"][spec["workload"]]["metrics"]))
    title = spec.get("title") or f"simulation #{job.pk}: {spec['workload']} {metric} by {x}"
    return {"title": title[:200], "runs": run_ids, "metric": metric, "x": x,
            "series": "kernel" if x != "kernel" else None, "facet": facet,
            "statistic": "median", "error": "stdev"}


def job_comparison(job):
    run_ids = list(dict.fromkeys(
        SimulationPoint.objects.filter(job=job, status=Status.SUCCEEDED, run__isnull=False)
        .order_by("index").values_list("run_id", flat=True)))
    if not run_ids or len(run_ids) > MAX_COMPARED_RUNS:
        return None
    try:
        with transaction.atomic():
            return comparison_create(spec=parse_spec(comparison_spec(job, run_ids)),
                                     author=job.owner)
    except SpecError as exc:  # e.g. a metric the workload did not produce for every run
        log.warning("simulation %s: no comparison: %s", job.pk, exc)
        return None

"""A finished simulator result stored as a Run through the existing run services."""

from functools import lru_cache

import simulator
from benchmarks.models import RunSource
from benchmarks.services.catalog import (
    benchmark_get_or_create,
    kernel_get_or_create,
    machine_get_or_create,
)
from benchmarks.services.runs import MetricInput, Provenance, run_create

from .expansion import cli_command


@lru_cache(maxsize=1)
def _catalog() -> dict:
    return simulator.catalog()


def defaults_for(workload: str, kernel: str) -> dict:
    catalog = _catalog()
    return {
        "params": {n: s["default"] for n, s in catalog["workloads"][workload]["params"].items()},
        "tunables": {n: s["default"] for n, s in catalog["kernels"][kernel]["tunables"].items()},
    }


def simulated_machine(topology: str):
    sockets, cores, threads = (int(part) for part in topology.split("x"))
    return machine_get_or_create(spec={
        "name": f"sim-{topology}", "cpu_model": "schedbench simulator", "arch": "simulated",
        "sockets": sockets, "cores_per_socket": cores, "threads_per_core": threads,
        "virtualization": "simulated"})


def point_run_create(*, point, result: dict):
    """One run per point: every repeat is a sample, the vmstat series, the reproducing command."""
    norm = point.spec
    units = _catalog()["workloads"][norm["workload"]]["metrics"]
    metrics = {
        name: MetricInput(values=values, unit=units.get(name, {}).get("unit", ""),
                          higher_is_better=bool(units.get(name, {}).get("higher_is_better")))
        for name, values in result["metrics"].items()}
    environment = {"simulator": {
        "version": result["simulator_version"], "spec": norm, "spec_hash": point.spec_hash,
        "seed": norm["seed"], "command": cli_command(norm, defaults_for(norm["workload"],
                                                                        norm["kernel"])),
        "counters": result["counters"], "groups": result["groups"],
        "wall_seconds": result["wall_seconds"], "job": point.job_id, "point": point.pk}}
    return run_create(
        benchmark=benchmark_get_or_create(name=norm["workload"]),
        machine=simulated_machine(norm["topology"]),
        kernel=kernel_get_or_create(version=norm["kernel"]),
        metrics=metrics, params=norm["params"], tunables=norm["tunables"],
        environment=environment, series={"vmstat": result["vmstat"]},
        label=f"simulation {point.job_id}",
        provenance=Provenance(source=RunSource.SIMULATOR, submitter=point.job.owner))

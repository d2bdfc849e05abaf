"""A finished simulator result stored as a Run through the existing run services."""

from functools import lru_cache

from django.utils.text import slugify

import simulator
from benchmarks.models import Benchmark, Kernel, Machine, Metric, RunSource
from benchmarks.services.catalog import (
    benchmark_get_or_create,
    kernel_get_or_create,
    machine_fingerprint,
    machine_get_or_create,
    metric_get_or_create,
)
from benchmarks.services.runs import MetricInput, Provenance, run_create

from .expansion import cli_command


@lru_cache(maxsize=1)
def simulator_catalog() -> dict:
    return simulator.catalog()


def defaults_for(workload: str, kernel: str) -> dict:
    catalog = simulator_catalog()
    return {
        "params": {n: s["default"] for n, s in catalog["workloads"][workload]["params"].items()},
        "tunables": {n: s["default"] for n, s in catalog["kernels"][kernel]["tunables"].items()},
    }


# Every point needs the same benchmark, kernel, machine and metric rows. They exist after the
# first point, so look them up with one plain SELECT each and fall back to the catalog's
# get-or-create (a savepoint and two or three statements) only when missing.

def simulated_machine(topology: str) -> Machine:
    sockets, cores, threads = (int(part) for part in topology.split("x"))
    spec = {"name": f"sim-{topology}", "cpu_model": "schedbench simulator", "arch": "simulated",
            "sockets": sockets, "cores_per_socket": cores, "threads_per_core": threads,
            "virtualization": "simulated"}
    return (Machine.objects.filter(fingerprint=machine_fingerprint(spec)).first()
            or machine_get_or_create(spec=spec))


def run_machine(point) -> Machine:
    """The real machine a job simulated on (its runs sit beside that machine's measured ones,
    told apart by source=simulator), else the simulated machine named from the topology."""
    target = point.job.spec.get("machine")
    found = Machine.objects.filter(pk=target["id"]).first() if target else None
    return found or simulated_machine(point.spec["topology"])


def _benchmark(name: str) -> Benchmark:
    return Benchmark.objects.filter(slug=slugify(name)).first() or benchmark_get_or_create(
        name=name)


def _kernel(version: str) -> Kernel:
    return Kernel.objects.filter(version=version).first() or kernel_get_or_create(
        version=version)


def _metric(*, benchmark, name, unit="", higher_is_better=False) -> Metric:
    return Metric.objects.filter(benchmark=benchmark, name=name).first() or metric_get_or_create(
        benchmark=benchmark, name=name, unit=unit, higher_is_better=higher_is_better)


def point_run_args(*, point, result: dict) -> dict:
    """Everything `run_create` needs, resolved outside the storing transaction."""


    norm = point.spec
    units = simulator_catalog()["workloads"][norm["workload"]]["metrics"]
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
    target = point.job.spec.get("machine")
    if target:
        environment["simulator"]["machine"] = {"id": target["id"],
                                               "calibration_id": target["calibration_id"]}
    return {
        "benchmark": _benchmark(norm["workload"]), "machine": run_machine(point),
        "kernel": _kernel(norm["kernel"]), "metrics": metrics, "params": norm["params"],
        "tunables": norm["tunables"], "environment": environment,
        "series": {"vmstat": result["vmstat"]}, "label": f"simulation {point.job_id}",
        "metric_resolver": _metric,
        "provenance": Provenance(source=RunSource.SIMULATOR, submitter=point.job.owner)}


def point_run_create(*, point, result: dict):
    """One run per point: every repeat is a sample, the vmstat series, the reproducing command."""
    return run_create(**point_run_args(point=point, result=result))

"""Small helpers that create realistic rows through the real services."""

from benchmarks.models import RunSource
from benchmarks.services.catalog import (
    benchmark_get_or_create,
    kernel_get_or_create,
    machine_get_or_create,
)
from benchmarks.services.runs import MetricInput, Provenance, run_create

CORE2 = {
    "name": "core2-laptop",
    "cpu_model": "Intel Core 2 Duo 1.5 GHz",
    "arch": "x86_64",
    "sockets": 1,
    "cores_per_socket": 2,
    "threads_per_core": 1,
    "caches": {"L1d": "32K", "L2": "2M"},
}


def make_run(
    kernel="2.6.24",
    values=(8953.0, 9012.0, 8876.0),
    *,
    benchmark="threadtest",
    metric="time_ms",
    unit="ms",
    machine=None,
    policy="",
    params=None,
    tunables=None,
    series=None,
    source=RunSource.API,
    submitter=None,
):
    return run_create(
        benchmark=benchmark_get_or_create(name=benchmark),
        kernel=kernel_get_or_create(version=kernel),
        machine=machine_get_or_create(spec=machine or CORE2),
        metrics={metric: MetricInput(list(values), unit)},
        provenance=Provenance(source=source, submitter=submitter),
        policy=policy,
        params=params if params is not None else {"loops": 10000, "iterations": 500},
        tunables=tunables or {},
        series=series,
    )

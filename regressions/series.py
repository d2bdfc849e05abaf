"""Reads of series: which series some runs belong to, and one series' samples by kernel.

A series is (benchmark, machine, metric, policy, params, tunables); its kernels are ordered by
Kernel.sort_key (natural version order, see benchmarks/identity/versions.py).
"""

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from django.db import connection
from django.db.models import QuerySet

from benchmarks.models import MetricSummary, Run, Sample


@dataclass(frozen=True)
class SeriesId:
    benchmark_id: int
    machine_id: int
    metric_id: int
    policy: str
    params_json: str  # canonical JSON, so the id is hashable and compares by value
    tunables_json: str

    @classmethod
    def of(cls, *, benchmark_id, machine_id, metric_id, policy, params, tunables):
        return cls(benchmark_id, machine_id, metric_id, policy or "",
                   _canonical(params), _canonical(tunables))

    @property
    def params(self) -> dict:
        return json.loads(self.params_json)

    @property
    def tunables(self) -> dict:
        return json.loads(self.tunables_json)

    @property
    def key(self) -> str:
        text = json.dumps([self.benchmark_id, self.machine_id, self.metric_id, self.policy,
                           self.params_json, self.tunables_json])
        return hashlib.sha256(text.encode()).hexdigest()


def _canonical(value) -> str:
    return json.dumps(value or {}, sort_keys=True, separators=(",", ":"), default=str)


def live_runs(runs: QuerySet) -> QuerySet:
    """Runs that count: a run its owner withdrew is out of every series until restored."""
    return runs.filter(withdrawn__isnull=True)


def series_of_runs(run_ids) -> set[SeriesId]:
    """Every series the runs have a metric in (one query)."""
    rows = MetricSummary.objects.filter(run_id__in=list(run_ids)).values_list(
        "metric_id", "run__benchmark_id", "run__machine_id", "run__policy", "run__params",
        "run__tunables")
    return {SeriesId.of(benchmark_id=b, machine_id=m, metric_id=metric, policy=policy,
                        params=params, tunables=tunables)
            for metric, b, m, policy, params, tunables in rows}


@dataclass
class KernelGroup:
    kernel_id: int
    version: str
    sort_key: str = ""
    values: list = field(default_factory=list)
    run_ids: list = field(default_factory=list)

    def array(self) -> np.ndarray:
        return np.asarray(self.values, dtype=np.float64)


def series_runs(series: SeriesId) -> QuerySet:
    """The series' live runs, narrowed first by the (machine, benchmark) index. PostgreSQL
    compares params and tunables as jsonb values; SQLite compares JSON text, where key order
    matters, so there they are compared here in canonical form."""
    runs = Run.objects.filter(benchmark_id=series.benchmark_id, machine_id=series.machine_id,
                              policy=series.policy)
    if connection.vendor == "postgresql":
        runs = runs.filter(params=series.params, tunables=series.tunables)
    else:
        wanted = (series.params_json, series.tunables_json)
        ids = [pk for pk, params, tunables in runs.values_list("pk", "params", "tunables")
               if (_canonical(params), _canonical(tunables)) == wanted]
        runs = Run.objects.filter(pk__in=ids)
    return live_runs(runs)


def series_groups(series: SeriesId, *, exclude_run: int | None = None) -> list[KernelGroup]:
    """The series' samples grouped by kernel, in natural kernel order (one query)."""
    runs = series_runs(series)
    if exclude_run is not None:
        runs = runs.exclude(pk=exclude_run)
    rows = (Sample.objects.filter(metric_id=series.metric_id, run__in=runs)
            .order_by("run__kernel__sort_key", "run__kernel__version", "run_id", "index")
            .values_list("run__kernel_id", "run__kernel__version", "run__kernel__sort_key",
                         "run_id", "value"))
    groups: dict[int, KernelGroup] = {}
    for kernel_id, version, sort_key, run_id, value in rows:
        group = groups.get(kernel_id)
        if group is None:
            group = groups[kernel_id] = KernelGroup(kernel_id, version, sort_key)
        group.values.append(value)
        if not group.run_ids or group.run_ids[-1] != run_id:
            group.run_ids.append(run_id)
    return list(groups.values())


def group_by_series(rows) -> dict[SeriesId, list[KernelGroup]]:
    """For the full scan: rows of (metric, benchmark, machine, policy, params, tunables,
    kernel_id, version, run_id, value) ordered by series then kernel order."""
    out: dict[SeriesId, dict[int, KernelGroup]] = defaultdict(dict)
    for metric, bench, machine, policy, params, tunables, kernel_id, version, run_id, value in rows:
        sid = SeriesId.of(benchmark_id=bench, machine_id=machine, metric_id=metric,
                          policy=policy, params=params, tunables=tunables)
        groups = out[sid]
        group = groups.get(kernel_id)
        if group is None:
            group = groups[kernel_id] = KernelGroup(kernel_id, version)
        group.values.append(value)
        if not group.run_ids or group.run_ids[-1] != run_id:
            group.run_ids.append(run_id)
    return {sid: list(groups.values()) for sid, groups in out.items()}

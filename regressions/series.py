"""Reads of series: which series some runs belong to, and one series' samples by kernel.

A series is (benchmark, machine, metric, policy, params, tunables); its kernels are ordered by
Kernel.sort_key (natural version order, see benchmarks/identity/versions.py). Only release
kernels are in it: runs of a bisection and kernels that are commits between releases
(`git describe`) are judged inside their bisection, never placed in release order.
"""

import hashlib
import json
import math
from array import array
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from django.apps import apps
from django.db import connection
from django.db.models import QuerySet
from django.db.models.functions import Mod

from benchmarks.identity.commits import kernel_commit
from benchmarks.models import MetricSummary, Run, Sample

from . import detect

RUN_BLOCK = 5000  # run ids per query (SQLite's limit on bound parameters is 32,766)


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
    """One kernel of a series: its runs, its true number of values (`size`) and the values read,
    which are all of them or an evenly spaced subsample when the kernel holds more than a
    search keeps (see detect.per_kernel_limit)."""

    kernel_id: int
    version: str
    sort_key: str = ""
    values: array = field(default_factory=lambda: array("d"))
    run_ids: list = field(default_factory=list)
    size: int = 0

    def array(self) -> np.ndarray:
        return np.frombuffer(self.values, dtype=np.float64).copy() if len(self.values) else \
            np.empty(0)


def release_runs(runs: QuerySet) -> QuerySet:
    """Runs that may enter the release-ordered series: not bisection steps or ends (they are
    judged inside their bisection; their kernels are commits between releases)."""
    if apps.is_installed("bisection"):
        runs = runs.filter(bisect_joins__isnull=True)
    return runs


def is_between_releases(version: str) -> bool:
    """A `git describe` kernel (`6.4.0-rc1-00042-gabcdef123456`): a commit, not a release."""
    return kernel_commit(version) is not None


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
    return release_runs(live_runs(runs))


def kernel_groups(rows) -> list[KernelGroup]:
    """(run_id, n, kernel_id, version, sort_key) rows in kernel order, grouped by kernel: each
    release kernel with its runs and its true number of values (kernels between releases left
    out), in the order the rows came."""
    groups: dict[int, KernelGroup] = {}
    for run_id, n, kernel_id, version, sort_key in rows:
        if is_between_releases(version):
            continue
        group = groups.get(kernel_id)
        if group is None:
            group = groups[kernel_id] = KernelGroup(kernel_id, version, sort_key)
        group.run_ids.append(run_id)
        group.size += n
    return list(groups.values())


def series_groups(series: SeriesId, *, exclude_run: int | None = None) -> list[KernelGroup]:
    """The series' release kernels in natural order, each with its runs, its true number of
    values and at most about detect.per_kernel_limit() of them (plus one per run): memory
    bounded by the number of runs, whatever the runs hold. Only the newest detect.MAX_KERNELS
    kernels get values (older ones are beyond what a search looks at)."""
    runs = series_runs(series)
    if exclude_run is not None:
        runs = runs.exclude(pk=exclude_run)
    rows = (MetricSummary.objects.filter(metric_id=series.metric_id, run__in=runs)
            .order_by("run__kernel__sort_key", "run__kernel__version", "run_id")
            .values_list("run_id", "n", "run__kernel_id", "run__kernel__version",
                         "run__kernel__sort_key"))
    ordered = kernel_groups(rows.iterator(chunk_size=5000))
    _read_values(series.metric_id, ordered[-detect.MAX_KERNELS:])
    return ordered


def _read_values(metric_id: int, groups: list[KernelGroup]) -> None:
    """Fill each group with every `stride`-th value of each of its runs (by sample index),
    the stride chosen so the group gets about detect.per_kernel_limit() values. One streamed
    query per distinct stride and block of runs."""
    limit = detect.per_kernel_limit(len(groups))
    by_stride: dict[int, list[int]] = defaultdict(list)
    owner: dict[int, KernelGroup] = {}
    for group in groups:
        stride = max(1, math.ceil(group.size / limit))
        by_stride[stride] += group.run_ids
        owner.update((run_id, group) for run_id in group.run_ids)
    for stride, run_ids in by_stride.items():
        for start in range(0, len(run_ids), RUN_BLOCK):
            samples = Sample.objects.filter(metric_id=metric_id,
                                            run_id__in=run_ids[start:start + RUN_BLOCK])
            if stride > 1:
                samples = samples.annotate(_pick=Mod("index", stride)).filter(_pick=0)
            rows = samples.order_by("run_id", "index").values_list("run_id", "value")
            for run_id, value in rows.iterator(chunk_size=10_000):
                owner[run_id].values.append(value)


def all_series(*, benchmark=None) -> set[SeriesId]:
    """Every series with a live release run (of one benchmark if given)."""
    runs = release_runs(live_runs(Run.objects.all()))
    if benchmark is not None:
        runs = runs.filter(benchmark=benchmark)
    rows = (MetricSummary.objects.filter(run__in=runs)
            .values_list("metric_id", "run__benchmark_id", "run__machine_id", "run__policy",
                         "run__params", "run__tunables").distinct())
    return {SeriesId.of(benchmark_id=b, machine_id=m, metric_id=metric, policy=policy,
                        params=params, tunables=tunables)
            for metric, b, m, policy, params, tunables in rows.iterator(chunk_size=5000)}

"""Writing runs: one place that turns a description of a measurement into rows."""

from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from django.db import transaction

from benchmarks import stats
from benchmarks.errors import InputError
from benchmarks.models import (
    Artifact,
    Benchmark,
    Kernel,
    Machine,
    Metric,
    MetricSummary,
    MonitorSeries,
    Run,
    RunParam,
    RunSource,
)
from benchmarks.services.catalog import CatalogError, metric_get_or_create
from benchmarks.services.jsonvalues import MAX_SAMPLE_MAGNITUDE, json_value_check, sample_problem
from benchmarks.services.samples import SampleWriter


class RunError(InputError):
    """A run description that cannot be stored; the message names the field."""


@dataclass
class MetricInput:
    values: Sequence[float]
    unit: str = ""
    higher_is_better: bool = False


@dataclass
class Provenance:
    source: str
    artifact: Artifact | None = None
    parser_name: str = ""
    parser_version: int | None = None
    submitter: object | None = None
    idempotency_key: str | None = None


def _check_mapping(name: str, value) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise RunError(f"{name} must be an object")
    json_value_check(value, field=name, error=RunError)
    return dict(value)


def _check_values(metric: str, values) -> Sequence[float]:
    if isinstance(values, array) and values.typecode == "d":
        checked = values  # parser output: already floats
    elif isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise RunError(f"metrics.{metric} must be a list of numbers")
    else:
        checked = array("d")
        for position, value in enumerate(values):
            if value.__class__ not in (int, float):
                raise RunError(f"metrics.{metric}[{position}] is not a number: {value!r}")
            try:
                checked.append(value)
            except OverflowError:
                raise RunError(f"metrics.{metric}[{position}] is an integer too large to use "
                               "as a number", field=f"metrics.{metric}") from None
    if not checked:
        raise RunError(f"metrics.{metric} has no values")
    samples = np.frombuffer(checked, dtype=np.float64)
    out_of_range = ~(np.abs(samples) <= MAX_SAMPLE_MAGNITUDE)  # NaN compares False: caught too
    if out_of_range.any():
        bad = int(np.argmax(out_of_range))
        problem = sample_problem(float(samples[bad]))
        raise RunError(f"metrics.{metric}[{bad}] {problem}", field=f"metrics.{metric}")
    return checked


def _check_series(series) -> dict:
    series = _check_mapping("series", series)  # also refuses NaN, NUL, overflowing integers
    for kind, body in series.items():
        if not isinstance(body, Mapping) or not isinstance(body.get("columns"), list):
            raise RunError(f"series.{kind} needs 'columns' (list) and 'rows' (list of lists)")
        rows = body.get("rows")
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise RunError(f"series.{kind}.rows must be a list of lists")
        width = len(body["columns"])
        for number, row in enumerate(rows):
            if len(row) != width:
                raise RunError(f"series.{kind}.rows[{number}] has {len(row)} values, not {width}")
    return series


def _param_index_value(value) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)[:200]


@dataclass
class PreparedRun:
    """A validated run, not yet saved: what `runs_store` writes in a few bulk statements."""

    run: Run
    metrics: list[tuple[Metric, Sequence[float], stats.Summary]]
    series: dict


MetricResolver = Callable[..., Metric]


def run_prepare(
    *,
    benchmark: Benchmark,
    machine: Machine,
    kernel: Kernel,
    metrics: Mapping[str, MetricInput],
    provenance: Provenance,
    policy: str = "",
    label: str = "",
    params: Mapping | None = None,
    tunables: Mapping | None = None,
    environment: Mapping | None = None,
    series: Mapping | None = None,
    metric_resolver: MetricResolver = metric_get_or_create,
) -> PreparedRun:
    """Validate everything and compute summaries; raises RunError naming the bad field."""
    if provenance.source not in RunSource.values:
        raise RunError(f"unknown source {provenance.source!r}")
    if not metrics:
        raise RunError("a run needs at least one metric with values")
    checked = {name: _check_values(name, m.values) for name, m in metrics.items()}
    run = Run(
        benchmark=benchmark,
        machine=machine,
        kernel=kernel,
        policy=(policy or "")[:100],
        label=(label or "")[:200],
        params=_check_mapping("params", params),
        tunables=_check_mapping("tunables", tunables),
        environment=_check_mapping("environment", environment),
        source=provenance.source,
        artifact=provenance.artifact,
        parser_name=provenance.parser_name,
        parser_version=provenance.parser_version,
        submitter=provenance.submitter,
        idempotency_key=provenance.idempotency_key,
    )
    resolved = []
    for name, metric_input in metrics.items():
        try:
            metric = metric_resolver(
                benchmark=benchmark, name=name, unit=metric_input.unit,
                higher_is_better=metric_input.higher_is_better,
            )
        except CatalogError as exc:
            raise RunError(str(exc)) from None
        resolved.append((metric, checked[name], stats.summarize(checked[name])))
    return PreparedRun(run=run, metrics=resolved, series=_check_series(series))


def runs_store(prepared: list[PreparedRun], *, samples: SampleWriter | None = None) -> list[Run]:
    """Write prepared runs with a handful of statements whatever their number, atomically.

    Pass a shared `samples` writer to batch samples across calls (the caller flushes it in its
    own transaction); without one they are written before this returns.
    """
    with transaction.atomic():
        runs = Run.objects.bulk_create([item.run for item in prepared])
        RunParam.objects.bulk_create(
            RunParam(run=run, name=str(name)[:100], value=_param_index_value(value))
            for run in runs
            for name, value in run.params.items()
        )
        MetricSummary.objects.bulk_create(
            _summary_row(item.run, metric, summary)
            for item in prepared
            for metric, _, summary in item.metrics
        )
        MonitorSeries.objects.bulk_create(
            MonitorSeries(run=item.run, kind=kind[:32], columns=body["columns"],
                          rows=body["rows"])
            for item in prepared
            for kind, body in item.series.items()
        )
        writer = samples or SampleWriter()
        for item in prepared:
            for metric, values, _ in item.metrics:
                writer.add(run_id=item.run.pk, metric_id=metric.pk, values=values)
        if samples is None:
            writer.flush()
    return runs


def run_create(**description) -> Run:
    """Store one run with every sample, its summaries and monitor series, atomically.

    Takes the keyword arguments of `run_prepare`.
    """
    return runs_store([run_prepare(**description)])[0]


def _summary_row(run: Run, metric: Metric, summary: stats.Summary) -> MetricSummary:
    return MetricSummary(
        run=run,
        metric=metric,
        n=summary.n,
        mean=summary.mean,
        median=summary.median,
        stdev=summary.stdev,
        minimum=summary.minimum,
        maximum=summary.maximum,
    )

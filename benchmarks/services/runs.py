"""Writing runs: one place that turns a description of a measurement into rows."""

import math
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from django.db import transaction

from benchmarks import stats
from benchmarks.models import (
    Artifact,
    Benchmark,
    Kernel,
    Machine,
    MetricSummary,
    MonitorSeries,
    Run,
    RunParam,
    RunSource,
)
from benchmarks.services.catalog import CatalogError, metric_get_or_create
from benchmarks.services.samples import SampleWriter


class RunError(ValueError):
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
    extra: dict = field(default_factory=dict)


def _check_mapping(name: str, value) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise RunError(f"{name} must be an object")
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
            checked.append(value)
    if not checked:
        raise RunError(f"metrics.{metric} has no values")
    if not math.isfinite(math.fsum(checked)):
        bad = next(i for i, v in enumerate(checked) if not math.isfinite(v))
        raise RunError(f"metrics.{metric}[{bad}] is not finite")
    return checked


def _check_series(series) -> dict:
    series = _check_mapping("series", series)
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


def run_create(
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
    samples: SampleWriter | None = None,
) -> Run:
    """Store one run with every sample, its summaries and monitor series, atomically.

    Pass a shared `samples` writer to batch the samples of many runs (the caller flushes it
    inside its own transaction); without one they are written before this returns.
    """
    if provenance.source not in RunSource.values:
        raise RunError(f"unknown source {provenance.source!r}")
    if not metrics:
        raise RunError("a run needs at least one metric with values")
    checked = {name: _check_values(name, m.values) for name, m in metrics.items()}
    params, tunables = _check_mapping("params", params), _check_mapping("tunables", tunables)
    environment, series = _check_mapping("environment", environment), _check_series(series)
    with transaction.atomic():
        run = Run.objects.create(
            benchmark=benchmark,
            machine=machine,
            kernel=kernel,
            policy=(policy or "")[:100],
            label=(label or "")[:200],
            params=params,
            tunables=tunables,
            environment=environment,
            source=provenance.source,
            artifact=provenance.artifact,
            parser_name=provenance.parser_name,
            parser_version=provenance.parser_version,
            submitter=provenance.submitter,
            idempotency_key=provenance.idempotency_key,
        )
        RunParam.objects.bulk_create(
            RunParam(run=run, name=str(name)[:100], value=_param_index_value(value))
            for name, value in params.items()
        )
        writer = samples or SampleWriter()
        MetricSummary.objects.bulk_create(
            _store_metric(run, name, metric_input, checked[name], writer)
            for name, metric_input in metrics.items()
        )
        if samples is None:
            writer.flush()
        MonitorSeries.objects.bulk_create(
            MonitorSeries(run=run, kind=kind[:32], columns=body["columns"], rows=body["rows"])
            for kind, body in series.items()
        )
    return run


def _store_metric(
    run: Run, name: str, metric_input: MetricInput, values: Sequence[float], writer: SampleWriter
) -> MetricSummary:
    try:
        metric = metric_get_or_create(
            benchmark=run.benchmark,
            name=name,
            unit=metric_input.unit,
            higher_is_better=metric_input.higher_is_better,
        )
    except CatalogError as exc:
        raise RunError(str(exc)) from None
    writer.add(run_id=run.pk, metric_id=metric.pk, values=values)
    summary = stats.summarize(values)
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

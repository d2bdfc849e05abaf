"""Writing runs: one place that turns a description of a measurement into rows."""

import hashlib
import json
import re
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.db import transaction

from benchmarks.analysis import stats
from benchmarks.errors import InputError
from benchmarks.identity import vocabulary
from benchmarks.models import (
    Artifact,
    Benchmark,
    Kernel,
    Machine,
    Metric,
    MetricSummary,
    MonitorSeries,
    PublishedSummary,
    Run,
    RunParam,
    RunSource,
    RunTombstone,
)
from benchmarks.services.catalog import CatalogError, metric_get_or_create
from benchmarks.services.jsonvalues import MAX_SAMPLE_MAGNITUDE, json_value_check, sample_problem
from benchmarks.services.samples import SampleWriter
from benchmarks.signals import runs_stored

# the ids of the runs stored inside an open runs_stored_together() block, None outside one
_stored_together: ContextVar[list[int] | None] = ContextVar("runs_stored_together", default=None)


@contextmanager
def runs_stored_together() -> Iterator[None]:
    """Runs stored inside the block announce themselves (`runs_stored`) once, when it ends.

    An upload or a mail import of many runs then asks for one regression-detection pass per
    series, where announcing each run alone queued one pass per run over the same series.
    Nested blocks join the outermost.  The runs are announced even when the block raises: a
    run whose transaction rolled back meanwhile has no rows, and detection finds nothing of it."""
    if _stored_together.get() is not None:
        yield
        return
    ids: list[int] = []
    token = _stored_together.set(ids)
    try:
        yield
    finally:
        _stored_together.reset(token)
        if ids:
            runs_stored.send(sender=Run, run_ids=ids)


def _announce_stored(run_ids: list[int]) -> None:
    together = _stored_together.get()
    if together is None:
        runs_stored.send(sender=Run, run_ids=run_ids)
    else:
        together.extend(run_ids)


class RunError(InputError):
    """A run description that cannot be stored; the message names the field."""


@dataclass
class MetricInput:
    values: Sequence[float]
    unit: str = ""
    higher_is_better: bool = False
    # A published statistic without samples (values then empty): see check_summary.
    summary: Mapping | None = None


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
        raise RunError(f"metrics.{metric} has no values (a published statistic without "
                       "samples goes in its \"summary\")")
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
    published: list[tuple[Metric, dict]] = field(default_factory=list)


SUMMARY_STATISTIC = re.compile(r"amean|hmean|gmean|bamean-\d{1,2}|median|mean|min|max")


def check_summary(metric: str, summary) -> dict:
    """A published summary as stored: statistic, value, stddev_pct, n, significant."""
    where = f"metrics.{metric}.summary"
    if not isinstance(summary, Mapping):
        raise RunError(f"{where} must be an object", field=where)
    unknown = set(summary) - {"statistic", "value", "stddev_pct", "n", "significant", "line"}
    if unknown:
        raise RunError(f"{where}: unknown field(s) {sorted(unknown)}", field=where)
    statistic = summary.get("statistic")
    if not isinstance(statistic, str) or not SUMMARY_STATISTIC.fullmatch(statistic):
        raise RunError(f"{where}.statistic must be one of amean, hmean, gmean, bamean-NN, "
                       "median, mean, min, max", field=where)
    checked = {"statistic": statistic}
    for name, required in (("value", True), ("stddev_pct", False)):
        value = summary.get(name)
        if value is None and not required:
            checked[name] = None
            continue
        if value.__class__ not in (int, float) or not abs(value) <= MAX_SAMPLE_MAGNITUDE or \
                (name == "stddev_pct" and value < 0):
            raise RunError(f"{where}.{name} must be a finite number"
                           f"{' >= 0' if name == 'stddev_pct' else ''}", field=where)
        checked[name] = float(value)
    n, significant = summary.get("n"), summary.get("significant")
    if n is not None and (n.__class__ is not int or not 0 < n < 2**31):
        raise RunError(f"{where}.n must be a positive integer or null", field=where)
    if significant is not None and not isinstance(significant, bool):
        raise RunError(f"{where}.significant must be true, false or null", field=where)
    return {**checked, "n": n, "significant": significant}


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
    measured_at: datetime | None = None,
) -> PreparedRun:
    """Validate everything and compute summaries; raises RunError naming the bad field."""
    if provenance.source not in RunSource.values:
        raise RunError(f"unknown source {provenance.source!r}")
    if not metrics:
        raise RunError("a run needs at least one metric with values")
    published = {name: check_summary(name, m.summary) for name, m in metrics.items()
                 if m.summary is not None}
    for name in published:
        if len(metrics[name].values):
            raise RunError(f"metrics.{name}: give its values or a summary, not both",
                           field=f"metrics.{name}")
    checked = {name: _check_values(name, m.values) for name, m in metrics.items()
               if name not in published}
    params = vocabulary.canonical_params(_check_mapping("params", params),
                                         benchmark=benchmark.slug)
    tunables = vocabulary.canonical_tunables(_check_mapping("tunables", tunables))
    run = Run(
        benchmark=benchmark,
        machine=machine,
        kernel=kernel,
        policy=(policy or "")[:100],
        label=(label or "")[:200],
        params=params,
        tunables=tunables,
        environment=_check_mapping("environment", environment),
        source=provenance.source,
        artifact=provenance.artifact,
        parser_name=provenance.parser_name,
        parser_version=provenance.parser_version,
        submitter=provenance.submitter,
        idempotency_key=provenance.idempotency_key,
        measured_at=measured_at,
    )
    resolved, published_rows = [], []
    for name, metric_input in metrics.items():
        try:
            metric = metric_resolver(
                benchmark=benchmark, name=name, unit=metric_input.unit,
                higher_is_better=metric_input.higher_is_better,
            )
        except CatalogError as exc:
            raise RunError(str(exc)) from None
        if name in published:
            published_rows.append((metric, published[name]))
        else:
            resolved.append((metric, checked[name], stats.summarize(checked[name])))
    run.result_key = result_key(run, {name: checked[name] for name in sorted(checked)},
                                published=published)
    return PreparedRun(run=run, metrics=resolved, series=_check_series(series),
                       published=published_rows)


def runs_store(prepared: list[PreparedRun], *, samples: SampleWriter | None = None) -> list[Run]:
    """Write prepared runs with a handful of statements whatever their number, atomically.

    Pass a shared `samples` writer to batch samples across calls (the caller flushes it in its
    own transaction); without one they are written before this returns.
    """
    with transaction.atomic():
        runs = Run.objects.bulk_create([item.run for item in prepared])
        _store_rows(prepared, samples=samples)
    return runs


def _store_rows(prepared: list[PreparedRun], *, samples: SampleWriter | None = None) -> None:
    """Everything hanging off saved runs: param index, summaries, series, samples."""
    with transaction.atomic():
        runs = [item.run for item in prepared]
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
        PublishedSummary.objects.bulk_create(
            PublishedSummary(run=item.run, metric=metric, **summary)
            for item in prepared
            for metric, summary in item.published
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
        _announce_stored([run.pk for run in runs])


def run_create(**description) -> Run:
    """Store one run with every sample, its summaries and monitor series, atomically.

    Takes the keyword arguments of `run_prepare`. A result set already stored (same
    benchmark, kernel, machine, policy, params, tunables and values) from an upload, the API or
    a mail is returned instead of a copy, with `already_stored` set (see `result_key`).
    """
    return runs_store_once([run_prepare(**description)])[0]


# --- identity: one run per result set ------------------------------------------------------

# Sources whose input may repeat a result already stored: a table re-pasted in a later mail,
# the same file uploaded twice, a harness re-sending a spooled submission. Simulations and
# demo data are kept as they come (a simulation job owns the runs it produced).
DEDUPLICATED_SOURCES = {RunSource.UPLOAD, RunSource.API, RunSource.MAIL}


def _values_digest(values) -> str:
    data = np.frombuffer(values, dtype=np.float64) if isinstance(values, array) \
        else np.asarray(values, dtype=np.float64)
    return hashlib.sha256(np.ascontiguousarray(data, dtype="<f8").tobytes()).hexdigest()


def result_key(run: Run, values_by_metric: Mapping[str, Sequence[float]], *,
               published: Mapping[str, dict] | None = None) -> str:
    """What makes two runs the same result: where and how it was measured, and every value in
    repeat order. The label and provenance are not part of it (a re-post may word them anew),
    except for a column of a published table (an mmtests config, a robot report's commit),
    whose label names the kernel build it measured: `6.1.0 vanilla` is not `6.1.0 fix-v2r1`."""
    identity = {
        "benchmark": run.benchmark_id, "kernel": run.kernel_id, "machine": run.machine_id,
        "policy": run.policy, "params": run.params, "tunables": run.tunables,
        "values": {name: _values_digest(values) for name, values in values_by_metric.items()},
    }
    if published:
        identity["published"] = {name: [s["statistic"], s["value"], s["stddev_pct"], s["n"]]
                                 for name, s in sorted(published.items())}
    if published or (run.environment or {}).get("config"):
        identity["label"] = run.label
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def runs_already_stored(results: list[str]) -> dict[str, Run]:
    """Result key -> the first run stored for it, for the keys already stored. Withdrawn runs
    do not count: a result re-sent after its run was withdrawn is stored anew (see
    services.ownership)."""
    found: dict[str, Run] = {}
    for start in range(0, len(results), LOOKUP_BATCH):
        rows = Run.objects.visible().filter(result_key__in=results[start:start + LOOKUP_BATCH])
        for run in rows.order_by("-id"):
            found[run.result_key] = run  # the lowest id wins
    return found


LOOKUP_BATCH = 500


def runs_store_once(prepared: list[PreparedRun], *,
                    samples: SampleWriter | None = None) -> list[Run]:
    """`runs_store`, except that a result set already stored is linked, not written again:
    its place in the returned list holds the stored run, with `already_stored` True. A result
    set repeated within `prepared` is written once and both places hold that run."""
    # result key -> the run that stands for it: a stored one, else the first in `prepared`
    standing = runs_already_stored(list({item.run.result_key for item in prepared
                                         if item.run.source in DEDUPLICATED_SOURCES}))
    for run in standing.values():
        run.already_stored = True
    fresh: list[PreparedRun] = []
    for item in prepared:
        run, key = item.run, item.run.result_key
        if run.source in DEDUPLICATED_SOURCES:
            if key in standing:
                continue
            standing[key] = run
        run.already_stored = False
        fresh.append(item)
    runs_store(fresh, samples=samples)
    return [standing.get(item.run.result_key, item.run)
            if item.run.source in DEDUPLICATED_SOURCES else item.run for item in prepared]


# --- reparse: new parse, same run ids --------------------------------------------------------

def _setup_key(run: Run) -> str:
    return json.dumps([run.benchmark_id, run.kernel_id, run.machine_id, run.policy,
                       run.params, run.tunables], sort_keys=True, default=str)


def _pair_old_with_new(old: list[Run], new: list[PreparedRun]) -> list[tuple[Run | None,
                                                                             PreparedRun]]:
    """Each new run with the old run it continues: same result, else same setup, else same
    benchmark and kernel; in input order. Unpaired new runs get None."""
    unpaired = list(old)
    pairs: list[list] = [[None, item] for item in new]
    for matches in (
        lambda o, n: o.result_key and o.result_key == n.run.result_key,
        lambda o, n: _setup_key(o) == _setup_key(n.run),
        lambda o, n: (o.benchmark_id, o.kernel_id) == (n.run.benchmark_id, n.run.kernel_id),
        # the kernel was corrected (a preview's kernel map, a fixed heading parser)
        lambda o, n: (o.benchmark_id, o.params) == (n.run.benchmark_id, n.run.params),
    ):
        for pair in pairs:
            if pair[0] is None:
                pair[0] = next((o for o in unpaired if matches(o, pair[1])), None)
                if pair[0] is not None:
                    unpaired.remove(pair[0])
    return [(o, n) for o, n in pairs]


def _successor(gone: Run, runs: list[Run]) -> Run | None:
    same_kernel = [r for r in runs if (r.benchmark_id, r.kernel_id)
                   == (gone.benchmark_id, gone.kernel_id)]
    return (same_kernel or runs or [None])[0]


def runs_replace(*, old: list[Run], new: list[PreparedRun]) -> tuple[list[Run], list[int]]:
    """Store `new` in place of `old` (one artifact's runs, re-derived), atomically.

    A new run that continues an old one keeps the old id (and its creation time, submitter and
    links), its rows rewritten; a new result set already stored elsewhere links to that run; an
    old run with no continuation is deleted and its tombstone names a successor, so
    /runs/<old id>/ redirects. Returns (runs, ids removed).
    """
    with transaction.atomic():
        pairs = _pair_old_with_new(old, new)
        kept = {o.pk for o, _ in pairs if o is not None}
        for previous, item in pairs:
            if previous is not None:
                item.run.pk, item.run.created = previous.pk, previous.created
                item.run.submitter_id = previous.submitter_id
                item.run.idempotency_key = previous.idempotency_key
                # What the owner set after upload outlives a reparse.
                item.run.tags, item.run.withdrawn = previous.tags, previous.withdrawn
                item.run.withdrawn_by_id = previous.withdrawn_by_id
                item.run.save(force_update=True)
                for related in (RunParam, MetricSummary, MonitorSeries, PublishedSummary):
                    related.objects.filter(run=previous).delete()
                previous.samples.all().delete()
        _store_rows([item for o, item in pairs if o is not None])
        # A result set no old run continues may be stored already (the upload linked to it):
        # link again rather than store it twice.
        fresh = [item for o, item in pairs if o is None]
        linked = dict(zip(map(id, fresh), runs_store_once(fresh), strict=True))
        runs = [linked.get(id(item), item.run) for _, item in pairs]
        removed = [o for o in old if o.pk not in kept]
        removed_ids = [o.pk for o in removed]
        for gone, gone_id in zip(removed, removed_ids, strict=True):
            successor = _successor(gone, runs)
            gone.delete()
            RunTombstone.objects.filter(run_id=gone_id).update(
                successor_id=successor.pk if successor else None)
    return runs, removed_ids


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

"""Runs submitted as JSON (REST `runs/` and `runs/bulk/`): validated, then written atomically."""

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction

from benchmarks.errors import InputError
from benchmarks.hooks import RunClaims, join_claimed, run_claims
from benchmarks.models import Run, RunSource
from benchmarks.parsers.units import metric_info
from benchmarks.services.catalog import (
    UNKNOWN_MACHINE,
    CatalogError,
    benchmark_get_or_create,
    kernel_get_or_create,
    machine_get_or_create,
    metric_get_or_create,
)
from benchmarks.services.jsonvalues import text_problem
from benchmarks.services.measured import measured_at_parse
from benchmarks.services.runs import (
    MetricInput,
    PreparedRun,
    Provenance,
    RunError,
    run_prepare,
    runs_store_once,
)
from benchmarks.services.samples import SampleWriter

RUN_FIELDS = {
    "benchmark", "kernel", "machine", "policy", "label", "tunables", "params", "environment",
    "metrics", "series", "idempotency_key", "bisect", "commit", "measured",
}


class SubmissionError(InputError):
    """A submitted run that cannot be stored. `where` is "item 3" or "line 3" in bulk input."""

    def __init__(self, message: str, *, where: str | None = None, line: int | None = None,
                 field: str | None = None):
        super().__init__(f"{where}: {message}" if where else message, line=line, field=field)


@dataclass
class CatalogCache:
    """Bulk submissions name the same benchmark, kernel and machine over and over. A run that
    names no machine goes to its submitter's own unnamed machine, never a shared one."""

    owner: object = None
    benchmarks: dict = field(default_factory=dict)
    kernels: dict = field(default_factory=dict)
    machines: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)

    def benchmark(self, name):
        if name not in self.benchmarks:
            self.benchmarks[name] = benchmark_get_or_create(name=name)
        return self.benchmarks[name]

    def kernel(self, version):
        if version not in self.kernels:
            self.kernels[version] = kernel_get_or_create(version=version)
        return self.kernels[version]

    def metric(self, *, benchmark, name, unit, higher_is_better):
        key = (benchmark.pk, name)
        if key not in self.metrics:
            self.metrics[key] = metric_get_or_create(
                benchmark=benchmark, name=name, unit=unit, higher_is_better=higher_is_better
            )
        return self.metrics[key]

    def machine(self, spec):
        key = json.dumps(spec, sort_keys=True)
        if key not in self.machines:
            self.machines[key] = machine_get_or_create(spec=spec, owner=self.owner)
        return self.machines[key]


def _text(payload: Mapping, name: str, *, required: bool = False, limit: int = 200) -> str:
    value = payload.get(name)
    if value is None or value == "":
        if required:
            raise SubmissionError(f"{name} is required")
        return ""
    if not isinstance(value, str):
        raise SubmissionError(f"{name} must be a string")
    if len(value) > limit:
        raise SubmissionError(f"{name} is longer than {limit} characters", field=name)
    problem = text_problem(value)
    if problem:
        raise SubmissionError(f"{name} {problem}", field=name)
    return value


def _scalars(payload: Mapping, name: str) -> dict:
    value = payload.get(name) or {}
    if not isinstance(value, Mapping):
        raise SubmissionError(f"{name} must be an object")
    for key, item in value.items():
        if not isinstance(item, (str, int, float, bool)) and item is not None:
            raise SubmissionError(f"{name}.{key} must be a string, number, boolean or null")
    return dict(value)


def _metrics(payload: Mapping) -> dict[str, MetricInput]:
    metrics = payload.get("metrics")
    if not isinstance(metrics, Mapping) or not metrics:
        raise SubmissionError("metrics must be an object like {\"time_ms\": [3332, 3401]}")
    result = {}
    for name, body in metrics.items():
        unit, higher = metric_info(name)
        summary = None
        if isinstance(body, Mapping):
            given_unit = body.get("unit", unit)
            if not isinstance(given_unit, str):
                raise SubmissionError(f"metrics.{name}.unit must be a string")
            unit, higher = given_unit, bool(body.get("higher_is_better", higher))
            # A published statistic without samples (docs/formats.md, summary results).
            summary = body.get("summary")
            body = body.get("values", [] if summary is not None else None)
        result[name] = MetricInput(body, unit, higher, summary=summary)
    return result


def _machine(payload: Mapping):
    machine = payload.get("machine") or UNKNOWN_MACHINE
    if not isinstance(machine, (str, Mapping)):
        raise SubmissionError("machine must be a name or an object")
    return dict(machine) if isinstance(machine, Mapping) else machine


def _measured(payload: Mapping):
    try:
        return measured_at_parse(payload.get("measured"), field="measured")
    except InputError as exc:
        raise SubmissionError(exc.message, field="measured") from None


def _idempotency_key(payload) -> str:
    key = payload.get("idempotency_key") if isinstance(payload, Mapping) else None
    # A key the database cannot hold is refused later by _prepare, with its message.
    return key if isinstance(key, str) and len(key) <= 100 and not text_problem(key) else ""


def _existing(submitter, key: str) -> Run | None:
    if not key or submitter is None:
        return None
    return Run.objects.filter(submitter=submitter, idempotency_key=key).first()


def _prepare(payload, *, submitter, source, cache: CatalogCache) -> PreparedRun:
    if not isinstance(payload, Mapping):
        raise SubmissionError("a run must be a JSON object")
    unknown = set(payload) - RUN_FIELDS
    if unknown:
        raise SubmissionError(f"unknown field(s) {sorted(unknown)}; known: {sorted(RUN_FIELDS)}")
    try:
        return run_prepare(
            benchmark=cache.benchmark(_text(payload, "benchmark", required=True)),
            kernel=cache.kernel(_text(payload, "kernel", required=True)),
            machine=cache.machine(_machine(payload)),
            metrics=_metrics(payload),
            provenance=Provenance(
                source=source,
                submitter=submitter,
                idempotency_key=_text(payload, "idempotency_key", limit=100) or None,
            ),
            policy=_text(payload, "policy", limit=100),
            label=_text(payload, "label"),
            params=_scalars(payload, "params"),
            tunables=_scalars(payload, "tunables"),
            environment=payload.get("environment") or {},
            series=payload.get("series") or {},
            metric_resolver=cache.metric,
            measured_at=_measured(payload),
        )
    except (CatalogError, RunError) as exc:
        raise SubmissionError(str(exc), field=exc.field) from None


def _claims(payload, submitter, where: str | None = None) -> RunClaims:
    """What the payload's fields join the run to (a feature's, e.g. `"bisect": id`)."""
    try:
        return run_claims(fields=payload, user=submitter)
    except InputError as exc:
        if not where:
            raise
        error = SubmissionError(exc.message, where=where, field=exc.field,
                                line=int(where.split()[-1]) if where.startswith("line") else None)
        error.status = exc.status  # e.g. 403 for someone else's bisection, as for a single run
        raise error from None


def run_submit(*, payload, submitter, source: str = RunSource.API,
               claims: RunClaims | None = None) -> tuple[Run, bool]:
    """One run. Returns (run, created); a repeated idempotency key returns the first run.
    `claims` are the payload's, when the caller checked them already (to answer about them)."""
    claims = claims if claims is not None else _claims(payload, submitter)
    key = _idempotency_key(payload)
    existing = _existing(submitter, key)
    if existing:
        claims.join([existing])
        return existing, False
    try:
        with transaction.atomic():
            prepared = _prepare(payload, submitter=submitter, source=source,
                                cache=CatalogCache(owner=submitter))
            run = runs_store_once([prepared])[0]
            claims.join([run])
            return run, not run.already_stored  # the same result set again: the stored run
    except IntegrityError:
        # Two requests with one idempotency key raced; the other one won.
        existing = _existing(submitter, key)
        if existing is None:
            raise
        return existing, False


# Runs are written in batches so a long NDJSON stream never holds everything in memory.
STORE_BATCH_RUNS = 500


def runs_bulk_submit(
    *, payloads: Iterable[tuple[str, object]], submitter, source: str = RunSource.API
) -> list[int]:
    """Many runs, all or nothing. `payloads` yields (where, payload), where = "item 3"/"line 3".

    A result set already stored (or sent twice) gives the stored run's id, not a new run."""
    cache, samples = CatalogCache(owner=submitter), SampleWriter()
    stored: dict[int, Run] = {}  # id(prepared) -> the run standing for it
    order: list[PreparedRun | Run] = []  # one entry per payload, in input order
    by_key: dict[str, PreparedRun | Run] = {}
    pending: list[PreparedRun] = []
    claimed: list[tuple[int, str, RunClaims]] = []  # (place in order, where, claims)
    with transaction.atomic():
        for where, payload in payloads:
            claims = _claims(payload, submitter, where)
            if claims.claims:
                claimed.append((len(order), where, claims))
            key = _idempotency_key(payload)
            replay = (by_key.get(key) or _existing(submitter, key)) if key else None
            if replay:
                order.append(replay)
                continue
            try:
                prepared = _prepare(payload, submitter=submitter, source=source, cache=cache)
            except SubmissionError as exc:
                line = int(where.split()[-1]) if where.startswith("line") else None
                raise SubmissionError(exc.message, where=where, line=line,
                                      field=exc.field) from None
            if key:
                by_key[key] = prepared
            order.append(prepared)
            pending.append(prepared)
            if len(pending) >= STORE_BATCH_RUNS:
                _store_batch(pending, samples, stored)
                pending = []
        _store_batch(pending, samples, stored)
        samples.flush()
        runs = [stored[id(entry)] if isinstance(entry, PreparedRun) else entry
                for entry in order]
        join_claimed((claims, runs[place], where) for place, where, claims in claimed)
    return [run.pk for run in runs]


def _store_batch(pending: list[PreparedRun], samples: SampleWriter, stored: dict) -> None:
    for item, run in zip(pending, runs_store_once(pending, samples=samples), strict=True):
        stored[id(item)] = run

"""From raw bytes to runs: store the artifact, parse it, create one run per result set.

All or nothing: any error leaves no artifact row, no run and no sample behind.
"""

import io
from dataclasses import asdict, dataclass, field
from typing import BinaryIO

from django.db import IntegrityError, transaction

from benchmarks import parsers
from benchmarks.errors import InputError
from benchmarks.models import Artifact, Run
from benchmarks.parsers.base import HEAD_SIZE
from benchmarks.services.artifacts import artifact_file_discard_if_orphaned, artifact_store
from benchmarks.services.catalog import (
    UNKNOWN_MACHINE,
    CatalogError,
    benchmark_get_or_create,
    kernel_get_or_create,
    machine_get_or_create,
)
from benchmarks.services.runs import (
    MetricInput,
    PreparedRun,
    Provenance,
    RunError,
    run_prepare,
    runs_replace,
    runs_store_once,
)


class IngestError(InputError):
    """Input that cannot become runs. Carries what the API reports: line, formats, guess."""

    def __init__(self, message: str, *, line=None, formats=None, best_guess=None, field=None):
        extra = {} if formats is None else {"formats": formats, "best_guess": best_guess}
        super().__init__(message, line=line, field=field, **extra)
        self.formats = formats
        self.best_guess = best_guess


@dataclass
class UploadMetadata:
    """What the uploader says about the input; fills in what the parser could not find."""

    benchmark: str | None = None
    kernel: str | None = None
    machine: dict | str | None = None
    policy: str | None = None
    label: str = ""
    params: dict = field(default_factory=dict)
    tunables: dict = field(default_factory=dict)
    series: dict = field(default_factory=dict)
    environment: dict = field(default_factory=dict)
    # Corrections from the preview: kernel as found in the input -> kernel to store.
    kernel_map: dict = field(default_factory=dict)


@dataclass
class IngestOutcome:
    format: str
    parser_version: int
    previews: list[dict]
    warnings: list[str]
    artifact: Artifact | None = None
    runs: list[Run] = field(default_factory=list)
    replayed: bool = False


def _read_head(stream: BinaryIO) -> str:
    stream.seek(0)
    raw = stream.read(HEAD_SIZE)
    stream.seek(0)
    if not raw.strip():
        raise IngestError("the input is empty", line=1)
    if b"\x00" in raw:
        raise IngestError("the input looks binary (it contains NUL bytes); send text", line=None)
    return raw.decode("utf-8", errors="replace")


def parse_stream(stream: BinaryIO, *, format: str | None = None) -> parsers.ParseResult:
    head = _read_head(stream)
    # newline="" keeps \r\n so line numbers match what the user sees in an editor.
    text = io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline="")
    try:
        return parsers.parse_lines(text, head=head, format=format)
    except parsers.UnknownFormat as exc:
        raise IngestError(
            exc.message, line=exc.line, formats=exc.formats, best_guess=exc.best_guess
        ) from None
    except parsers.ParseError as exc:
        raise IngestError(exc.message, line=exc.line) from None
    finally:
        text.detach()  # the wrapper would close the caller's stream when collected
        stream.seek(0)


def _resolve(result: parsers.ResultSet, meta: UploadMetadata, single: bool) -> dict:
    """Merge what the parser found with what the uploader said; the data wins on conflicts."""
    benchmark = meta.benchmark or result.benchmark
    if not benchmark:
        raise IngestError(
            "benchmark: the input does not name one; give it with the upload", line=result.line
        )
    kernel = meta.kernel_map.get(result.kernel or "", result.kernel) or meta.kernel
    if not kernel:
        raise IngestError(
            "kernel: the input does not name one; give it with the upload", line=result.line
        )
    labels = dict(result.labels)
    return {
        "benchmark": benchmark,
        "kernel": kernel,
        "machine": meta.machine or result.machine or UNKNOWN_MACHINE,
        "policy": meta.policy or result.policy or "",
        "label": meta.label or ", ".join(f"{k}={v}" for k, v in sorted(labels.items())),
        "params": {**meta.params, **result.params},
        "tunables": {**meta.tunables, **result.tunables},
        "series": {**(meta.series if single else {}), **result.series},
        "environment": {**meta.environment, **({"labels": labels} if labels else {})},
        "metrics": {
            name: {
                "unit": result.units.get(name, ""),
                "higher_is_better": result.higher_is_better.get(name, False),
                "values": values,  # array('d'): compact even for millions of samples
            }
            for name, values in result.metrics.items()
        },
        "line": result.line,
    }


def _prepare_run(preview: dict, provenance: Provenance) -> PreparedRun:
    try:
        return run_prepare(
            benchmark=benchmark_get_or_create(name=preview["benchmark"]),
            kernel=kernel_get_or_create(version=preview["kernel"]),
            machine=machine_get_or_create(spec=preview["machine"]),
            metrics={
                name: MetricInput(m["values"], m["unit"], m["higher_is_better"])
                for name, m in preview["metrics"].items()
            },
            provenance=provenance,
            policy=preview["policy"],
            label=preview["label"],
            params=preview["params"],
            tunables=preview["tunables"],
            environment=preview["environment"],
            series=preview["series"],
        )
    except (CatalogError, RunError) as exc:
        raise IngestError(str(exc), line=preview["line"], field=exc.field) from None


def _create_run(preview: dict, provenance: Provenance) -> Run:
    return runs_store_once([_prepare_run(preview, provenance)])[0]


def _replay(submitter, idempotency_key: str | None) -> IngestOutcome | None:
    if not idempotency_key or submitter is None:
        return None
    artifact = Artifact.objects.filter(uploader=submitter, idempotency_key=idempotency_key).first()
    if artifact is None:
        return None
    runs = list(artifact.runs.order_by("id"))
    return IngestOutcome(
        format=artifact.parser_name, parser_version=artifact.parser_version or 0,
        previews=[], warnings=[], artifact=artifact, runs=runs, replayed=True,
    )


def upload_ingest(
    *,
    stream: BinaryIO,
    filename: str,
    metadata: UploadMetadata,
    source: str,
    submitter=None,
    format: str | None = None,
    dry_run: bool = False,
    idempotency_key: str | None = None,
) -> IngestOutcome:
    """Parse `stream` and, unless `dry_run`, keep it verbatim and create its runs atomically."""
    replay = _replay(submitter, idempotency_key)
    if replay:
        return replay
    parsed = parse_stream(stream, format=format)
    single = len(parsed.results) == 1
    previews = [_resolve(result, metadata, single) for result in parsed.results]
    outcome = IngestOutcome(parsed.format, parsed.version, previews, parsed.warnings)
    if dry_run:
        return outcome
    stored_name = ""
    try:
        with transaction.atomic():
            artifact = artifact_store(stream=stream, filename=filename, uploader=submitter)
            stored_name = artifact.file.name
            artifact.metadata, artifact.forced_format = asdict(metadata), format or ""
            artifact.source = source
            artifact.idempotency_key = idempotency_key if submitter is not None else None
            outcome.runs = _derive_runs(artifact, parsed, previews)
            outcome.artifact = artifact
            outcome.warnings = [*outcome.warnings, *_already_stored_warnings(outcome.runs)]
    except IntegrityError:
        # A concurrent upload with the same idempotency key committed first: answer its replay.
        artifact_file_discard_if_orphaned(stored_name)
        replay = _replay(submitter, idempotency_key)
        if replay is None:
            raise
        return replay
    except Exception:
        artifact_file_discard_if_orphaned(stored_name)
        raise
    return outcome


def _already_stored_warnings(runs: list[Run]) -> list[str]:
    return [f"run #{run.pk}: this result set is already stored (run #{run.pk}, from "
            f"{run.get_source_display()}); linked to it, not stored twice"
            for run in dict.fromkeys(runs) if getattr(run, "already_stored", False)]


def _provenance(artifact: Artifact, parsed) -> Provenance:
    artifact.parser_name, artifact.parser_version = parsed.format, parsed.version
    artifact.save()
    return Provenance(
        source=artifact.source, artifact=artifact, parser_name=parsed.format,
        parser_version=parsed.version, submitter=artifact.uploader,
    )


def _derive_runs(artifact: Artifact, parsed, previews: list[dict]) -> list[Run]:
    provenance = _provenance(artifact, parsed)
    return [_create_run(preview, provenance) for preview in previews]


def artifact_needs_reparse(artifact: Artifact) -> bool:
    parser = parsers.PARSERS.get(artifact.parser_name)
    return parser is None or (artifact.parser_version or 0) < parser.version


def artifact_reparse(*, artifact: Artifact) -> tuple[list[int], list[Run]]:
    """Re-derive an artifact's runs with today's parsers, atomically, keeping run ids.

    A run the new parse continues keeps its id (rewritten in place); one it no longer yields
    is removed and redirects to its successor. Returns (ids removed, runs as they are now).
    A parse error leaves everything as it was.
    """
    metadata = UploadMetadata(**artifact.metadata) if artifact.metadata else UploadMetadata()
    with artifact.file.open("rb") as stream:
        parsed = parse_stream(stream, format=artifact.forced_format or None)
    previews = [_resolve(r, metadata, len(parsed.results) == 1) for r in parsed.results]
    with transaction.atomic():
        old = list(artifact.runs.order_by("id"))
        provenance = _provenance(artifact, parsed)
        prepared = [_prepare_run(preview, provenance) for preview in previews]
        runs, removed = runs_replace(old=old, new=prepared)
        return removed, runs

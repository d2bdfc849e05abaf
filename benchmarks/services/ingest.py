"""From raw bytes to runs: store the artifact, parse it, create one run per result set.

All or nothing: any error leaves no artifact row, no run and no sample behind.

Sure or says so: a result set the parser could not place (an UNASSIGNED block: values after a
line it did not understand, a row above any heading) is previewed with its line range and
source lines, and the commit is refused, naming those lines, until the user assigns it
(`assign`: source key -> {"kernel", "label", "params"}). The same mapping corrects what the
parser did find: an edit keyed by a heading's source key reaches every run from that heading.
"""

import io
import json
from dataclasses import asdict, dataclass, field
from typing import BinaryIO

from django.core.files import File
from django.db import IntegrityError, connection, transaction

from benchmarks import parsers, selectors
from benchmarks.errors import InputError
from benchmarks.models import Artifact, Run
from benchmarks.pages.format_help import layout_hint
from benchmarks.parsers.base import HEAD_SIZE
from benchmarks.services.artifacts import (
    _sha256_and_size as sha256_and_size,  # what artifact_store hashes with
)
from benchmarks.services.artifacts import artifact_file_discard_if_orphaned, artifact_store
from benchmarks.services.catalog import (
    UNKNOWN_MACHINE,
    CatalogError,
    benchmark_get_or_create,
    kernel_get_or_create,
    machine_get_or_create,
    metric_get_or_create,
)
from benchmarks.services.measured import measured_at_parse
from benchmarks.services.runs import (
    MetricInput,
    PreparedRun,
    Provenance,
    RunError,
    run_prepare,
    runs_replace,
    runs_store_once,
    runs_stored_together,
)

SOURCE_LINES_SHOWN = 40
SOURCE_LINES_TOTAL = 5000
SOURCE_LINE_CHARS = 300
ASSIGN_TEXT_LIMIT = 200


class IngestError(InputError):
    """Input that cannot become runs. Carries what the API reports: line, formats, guess, and
    the closest layout (a format name) with the link to its example on the format help page."""

    def __init__(self, message: str, *, line=None, formats=None, best_guess=None, field=None,
                 layout=None):
        extra = {} if formats is None else {"formats": formats, "best_guess": best_guess}
        if layout is not None or formats is not None:
            extra.update(layout_hint(layout or best_guess))
        super().__init__(message, line=line, field=field, **extra)
        self.formats = formats
        self.best_guess = best_guess
        self.layout = layout or best_guess


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
    # Assignments and corrections from the preview, by source key (see `source_key`).
    assign: dict = field(default_factory=dict)
    # When the runs were measured, ISO 8601 as given (kept as text: metadata is stored JSON).
    measured: str | None = None


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
        raise IngestError(exc.message, line=exc.line, layout=_closest_layout(head, format)) \
            from None
    finally:
        text.detach()  # the wrapper would close the caller's stream when collected
        stream.seek(0)


def _closest_layout(head: str, format: str | None) -> str | None:
    if format in parsers.PARSERS:
        return format
    ranked = parsers.detect(head)
    return ranked[0][0] if ranked else None


def source_key(result: parsers.ResultSet) -> str:
    """What one preview edit reaches: an unassigned block, or everything read from one heading
    (a table header names several kernels, so the kernel is part of the key)."""
    if result.missing:
        return f"block:{result.block or result.line}"
    if result.kernel_line:
        return f"heading:{result.kernel_line}:{result.kernel or ''}"
    return f"run:{result.line}:{result.kernel or ''}"


def _assignment(meta: UploadMetadata, key: str) -> dict:
    fix = meta.assign.get(key) or {}
    if not isinstance(fix, dict):
        raise IngestError(f"assign[{key!r}] must be an object with kernel, label or params")
    for name in ("kernel", "label"):
        value = fix.get(name)
        if value is not None and (not isinstance(value, str) or len(value) > ASSIGN_TEXT_LIMIT):
            raise IngestError(f"assign[{key!r}].{name} must be text of at most "
                              f"{ASSIGN_TEXT_LIMIT} characters")
    if not isinstance(fix.get("params", {}), dict):
        raise IngestError(f"assign[{key!r}].params must be an object")
    return fix


def _still_missing(result: parsers.ResultSet, fix: dict, meta_params: dict) -> list[str]:
    """What the parser could not be sure of and nobody has said yet: a param the upload gives
    (the harness records the tool's options) settles it as surely as an assignment."""
    given = {"kernel"} if (fix.get("kernel") or "").strip() else set()
    given |= {f"param.{name}" for name in (*fix.get("params", {}), *meta_params)}
    return [what for what in result.missing if what not in given]


def _label(labels: dict) -> str:
    """A heading's remark reads as itself; other labels as name=value."""
    parts = [labels["remark"]] if labels.get("remark") else []
    parts += [f"{k}={v}" for k, v in sorted(labels.items()) if k != "remark"]
    return ", ".join(parts)


def _found_kernel(result: parsers.ResultSet, meta: UploadMetadata) -> str | None:
    """The kernel the input names (after the preview's corrections). The kernel the uploader or
    the harness gives is never overwritten by text: when the input names another one, the upload
    is refused at that line rather than stored under either name."""
    found = meta.kernel_map.get(result.kernel or "", result.kernel)
    given = (meta.kernel or "").strip()
    if given and found and found != given:
        line = result.kernel_line or result.line
        raise IngestError(
            f"kernel: the upload says {given!r} but line {line} names {found!r}; leave the "
            "kernel field empty to take the kernels from the input, or correct it in the "
            "preview", field="kernel", line=line)
    return found


def _resolve(result: parsers.ResultSet, meta: UploadMetadata, single: bool) -> dict:
    """Merge what the parser found with what the uploader said; the data wins on conflicts,
    except where the user corrected or assigned it in the preview."""
    benchmark = meta.benchmark or result.benchmark
    if not benchmark:
        raise IngestError(
            "benchmark: the input does not name one; give it with the upload",
            field="benchmark", line=result.line,
        )
    key = source_key(result)
    fix = _assignment(meta, key)
    missing = _still_missing(result, fix, meta.params)
    kernel = (fix.get("kernel") or "").strip() or _found_kernel(result, meta)
    if not kernel and "kernel" not in result.missing:
        kernel = meta.kernel  # the form's kernel fills a gap, never a kernel the parser doubts
    if not kernel and not missing:
        raise IngestError(
            "kernel: the input does not name one; give it with the upload",
            field="kernel", line=result.line,
        )
    labels = dict(result.labels)
    label = fix.get("label")
    published = _published(result)
    return {
        "benchmark": benchmark,
        "kernel": kernel or None,
        "machine": meta.machine or result.machine or UNKNOWN_MACHINE,
        "policy": meta.policy or result.policy or "",
        "label": label.strip() if label is not None else
        (published["label"] or meta.label or _label(labels)),
        "params": {**meta.params, **result.params, **fix.get("params", {})},
        "tunables": {**meta.tunables, **result.tunables},
        "series": {**(meta.series if single else {}), **result.series},
        "environment": {**meta.environment, **({"labels": labels} if labels else {}),
                        **published["environment"]},
        "commit": published["commit"],
        "measured": meta.measured,
        "metrics": {
            name: {
                "unit": result.units.get(name, ""),
                "higher_is_better": result.higher_is_better.get(name, False),
                "values": values,  # array('d'): compact even for millions of samples
            }
            for name, values in result.metrics.items()
        } | published["metrics"],
        "line": result.line,
        "lines": [result.line, max(result.last_line, result.line)],
        "kernel_line": result.kernel_line,
        "source_numbers": _shown_lines(result),
        "source_key": key,
        "missing": missing,
        "unassigned": bool(missing),
    }


def _published(result: parsers.ResultSet) -> dict:
    """What a column of a published table adds (parsers.summaries.SummarySet): summaries
    without samples, the mmtests config (the label, part of the run's identity), the robot
    report's commit and links."""
    summaries = getattr(result, "summaries", None) or {}
    commit = getattr(result, "commit", None)
    label = getattr(result, "label", "") or ""
    environment = {}
    if label:
        environment["config"] = label
    if commit:
        environment.update(commit=commit, kernel_commit=commit["id"])
    if summaries:
        environment["baseline"] = bool(getattr(result, "baseline", False))
    if getattr(result, "provenance", None):
        environment["report"] = dict(result.provenance)
    metrics = {
        name: {"unit": result.units.get(name, ""),
               "higher_is_better": result.higher_is_better.get(name, False),
               "values": [], "summary": dict(summary)}
        for name, summary in summaries.items()
    }
    return {"metrics": metrics, "label": label, "commit": commit, "environment": environment}


def previews_build(results, meta: UploadMetadata) -> list[dict]:
    """One preview per result set; an unassigned block split over several runs (two loop
    sizes, two table columns) reports the whole block's line range on each of them."""
    single = len(results) == 1
    previews = [_resolve(result, meta, single) for result in results]
    ranges: dict[str, list[int]] = {}
    for preview in previews:
        if preview["unassigned"]:
            first, last = preview["lines"]
            found = ranges.setdefault(preview["source_key"], [first, last])
            found[0], found[1] = min(found[0], first), max(found[1], last)
    for preview in previews:
        if preview["unassigned"]:
            preview["lines"] = list(ranges[preview["source_key"]])
    return previews


def _shown_lines(result: parsers.ResultSet) -> list[int]:
    numbers = list(result.source_lines[:SOURCE_LINES_SHOWN])
    if result.kernel_line and result.kernel_line not in numbers:
        numbers.insert(0, result.kernel_line)
    return numbers


def _attach_sources(stream: BinaryIO, previews: list[dict]) -> None:
    """Give each preview the text of its source lines, read back from the kept input."""
    wanted = sorted({n for p in previews for n in p["source_numbers"]})[:SOURCE_LINES_TOTAL]
    texts: dict[int, str] = {}
    if wanted:
        stream.seek(0)
        reader = io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline="")
        try:
            targets, last = set(wanted), wanted[-1]
            for number, raw in enumerate(reader, 1):
                if number in targets:
                    texts[number] = raw.rstrip("\r\n")[:SOURCE_LINE_CHARS].lstrip("\ufeff")
                if number >= last:
                    break
        finally:
            reader.detach()
            stream.seek(0)
    for preview in previews:
        preview["source"] = [[n, texts[n]] for n in preview["source_numbers"] if n in texts]


def refuse_unassigned(previews: list[dict]) -> None:
    """Commit only what is sure: the first block still unassigned is refused by its lines."""
    for preview in previews:
        if preview["unassigned"]:
            first, last = preview["lines"]
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            what = " and ".join(m.replace("param.", "parameter ") for m in preview["missing"])
            raise IngestError(
                f"not sure of the {what} for the values of {where}: they follow a line the "
                f"parser did not understand, or come before any heading. Give the {what} in "
                f"the preview's UNASSIGNED row (over the API: "
                f"assign[{preview['source_key']!r}]), or fix the input", line=first)


def _prepare_run(preview: dict, provenance: Provenance) -> PreparedRun:
    try:
        return run_prepare(
            benchmark=benchmark_get_or_create(name=preview["benchmark"]),
            kernel=kernel_get_or_create(version=preview["kernel"]),
            machine=machine_get_or_create(spec=preview["machine"], owner=provenance.submitter),
            metrics={
                name: MetricInput(m["values"], m["unit"], m["higher_is_better"],
                                  m.get("summary"))
                for name, m in preview["metrics"].items()
            },
            provenance=provenance,
            policy=preview["policy"],
            label=preview["label"],
            params=preview["params"],
            tunables=preview["tunables"],
            environment=preview["environment"],
            series=preview["series"],
            measured_at=measured_at_parse(preview.get("measured"), field="measured"),
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
    return IngestOutcome(
        format=artifact.parser_name, parser_version=artifact.parser_version or 0,
        previews=[], warnings=[], artifact=artifact, runs=_answered_runs(artifact), replayed=True,
    )


def _answered_runs(artifact: Artifact) -> list[Run]:
    """The runs the first answer named, linked ones included; a run a reparse replaced since
    is named by its successor. (Artifacts from before answers were kept: the runs they own.)"""
    if not artifact.answered_run_ids:
        return list(artifact.runs.order_by("id"))
    found = Run.objects.in_bulk(artifact.answered_run_ids)
    runs = []
    for run_id in artifact.answered_run_ids:
        run = found.get(run_id)
        if run is None:
            successor = selectors.run_successor(run_id)
            run = Run.objects.filter(pk=successor).first() if successor else None
        if run is not None:
            runs.append(run)
    return runs


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
    after_store=None,
) -> IngestOutcome:
    """Parse `stream` and, unless `dry_run`, keep it verbatim and create its runs atomically.
    `after_store(runs)` runs in the same transaction (a bisection joins the runs there)."""
    replay = _replay(submitter, idempotency_key)
    if replay:
        return replay
    parsed = parse_stream(stream, format=format)
    previews = previews_build(parsed.results, metadata)
    _attach_sources(stream, previews)
    outcome = IngestOutcome(parsed.format, parsed.version, previews, parsed.warnings)
    if dry_run:
        return outcome
    refuse_unassigned(previews)
    stored_name = ""
    try:
        with transaction.atomic():
            artifact = artifact_store(stream=stream, filename=filename, uploader=submitter)
            stored_name = artifact.file.name
            artifact.metadata, artifact.forced_format = asdict(metadata), format or ""
            artifact.source = source
            artifact.idempotency_key = idempotency_key if submitter is not None else None
            with runs_stored_together():  # one detection pass per series, not one per run
                outcome.runs = _derive_runs(artifact, parsed, previews)
            artifact.answered_run_ids = [run.pk for run in outcome.runs]
            artifact.save(update_fields=["answered_run_ids"])
            if after_store is not None:
                after_store(outcome.runs)
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
    previews = previews_build(parsed.results, metadata)
    refuse_unassigned(previews)
    with transaction.atomic():
        old = list(artifact.runs.order_by("id"))
        provenance = _provenance(artifact, parsed)
        prepared = [_prepare_run(preview, provenance) for preview in previews]
        runs, removed = runs_replace(old=old, new=prepared)
        artifact.answered_run_ids = [run.pk for run in runs]
        artifact.save(update_fields=["answered_run_ids"])
        return removed, runs


# --- many small texts at once (the tables of an mbox import) -----------------------------------

@dataclass
class TableInput:
    text: str
    filename: str
    format: str | None = None
    kernel: str | None = None


@dataclass
class TableOutcome:
    runs: list[Run] = field(default_factory=list)
    error: IngestError | None = None


class _CatalogMiss(Exception):
    """A table needs a catalog row the batch's cache does not hold (see _table_prepared)."""


class _CatalogCache:
    """Catalog rows looked up once per batch. A table's new rows join the cache only once its
    savepoint is committed: a rolled-back table must not leave rows the next one points at.
    While `reading_only`, a row the cache lacks raises _CatalogMiss instead of being looked up
    or created: nothing is written, so no savepoint is needed."""

    def __init__(self):
        self.rows: dict[tuple, object] = {}
        self.pending: dict[tuple, object] = {}
        self.reading_only = False

    def get(self, key: tuple, make):
        found = self.rows.get(key) or self.pending.get(key)
        if found is None:
            if self.reading_only:
                raise _CatalogMiss
            found = self.pending[key] = make()
        return found

    def settle(self, committed: bool) -> None:
        if committed:
            self.rows.update(self.pending)
        self.pending.clear()


def _prepare_cached(preview: dict, provenance: Provenance, cache: _CatalogCache) -> PreparedRun:
    machine = preview["machine"]
    machine_key = json.dumps(machine, sort_keys=True, default=str)
    catalog = {
        "benchmark": lambda: cache.get(("benchmark", preview["benchmark"]), lambda: (
            benchmark_get_or_create(name=preview["benchmark"]))),
        "kernel": lambda: cache.get(("kernel", preview["kernel"]), lambda: (
            kernel_get_or_create(version=preview["kernel"]))),
        "machine": lambda: cache.get(("machine", machine_key, provenance.submitter), lambda: (
            machine_get_or_create(spec=machine, owner=provenance.submitter))),
    }

    def metric(*, benchmark, name, unit, higher_is_better):
        # The same arguments give the same row (get_or_create by benchmark and name); a name
        # the catalog refuses raises before anything is kept, every time.
        return cache.get(("metric", benchmark.pk, name, unit, higher_is_better), lambda: (
            metric_get_or_create(benchmark=benchmark, name=name, unit=unit,
                                 higher_is_better=higher_is_better)))

    try:
        return run_prepare(
            benchmark=catalog["benchmark"](), kernel=catalog["kernel"](),
            machine=catalog["machine"](), metric_resolver=metric,
            metrics={name: MetricInput(m["values"], m["unit"], m["higher_is_better"],
                                       m.get("summary"))
                     for name, m in preview["metrics"].items()},
            provenance=provenance, policy=preview["policy"], label=preview["label"],
            params=preview["params"], tunables=preview["tunables"],
            environment=preview["environment"], series=preview["series"])
    except (CatalogError, RunError) as exc:
        raise IngestError(str(exc), line=preview["line"], field=exc.field) from None


def _table_parsed(table: TableInput):
    stream = io.BytesIO(table.text.encode("utf-8"))
    parsed = parse_stream(stream, format=table.format)
    previews = previews_build(parsed.results, UploadMetadata(kernel=table.kernel))
    _attach_sources(stream, previews)
    refuse_unassigned(previews)
    return stream, parsed, previews


def _table_artifact(table: TableInput, stream, parsed, *, source, submitter,
                    cache) -> tuple[Artifact, bool]:
    """The table's artifact as artifact_store keeps an upload (same bytes share the stored
    file: the newest artifact's, which after the first table of a batch with these bytes is
    that table's) with its provenance, not yet written (tables_ingest writes a batch's
    artifacts with one INSERT), and whether its file was stored for it. Which file holds a
    hash is looked up once per batch: mail archives repeat tables, and the lookup sorts every
    artifact with those bytes."""
    sha256, size = sha256_and_size(stream)
    artifact = Artifact(
        filename=(table.filename or "pasted.txt")[:255], sha256=sha256, size=size,
        content_type="", uploader=submitter, metadata=asdict(UploadMetadata(kernel=table.kernel)),
        forced_format=table.format or "", source=source, parser_name=parsed.format,
        parser_version=parsed.version)
    key = ("artifact file", sha256)
    name = cache.get(key, lambda: (
        Artifact.objects.filter(sha256=sha256).exclude(file="").values_list("file", flat=True)
        .first()))
    if name:
        artifact.file.name = name
        return artifact, False
    artifact.file.save(f"{sha256[:2]}/{sha256}", File(stream), save=False)
    cache.pending[key] = artifact.file.name  # kept for the next tables once committed
    return artifact, True


def _runs_prepared(previews: list[dict], provenance: Provenance,
                   cache: _CatalogCache) -> list[PreparedRun]:
    """The table's runs, reading the catalog without writing it (nothing to roll back); a
    table needing a row the cache lacks is prepared again in a savepoint, where its catalog
    rows may be created and its failure takes them back, as a savepoint per table did."""
    cache.reading_only = True
    try:
        return [_prepare_cached(preview, provenance, cache) for preview in previews]
    except _CatalogMiss:
        pass
    finally:
        cache.reading_only = False
    with transaction.atomic():
        return [_prepare_cached(preview, provenance, cache) for preview in previews]


def _table_prepared(table: TableInput, parsed_table, *, source, submitter, cache):
    """The table's artifact (written later, with the batch's) and prepared runs. A failure
    leaves nothing behind: its catalog rows go with _runs_prepared's savepoint, and a file
    stored for it alone is discarded."""
    stream, parsed, previews = parsed_table
    committed, artifact, stored_file = False, None, False
    try:
        artifact, stored_file = _table_artifact(table, stream, parsed, source=source,
                                                submitter=submitter, cache=cache)
        provenance = Provenance(source=source, artifact=artifact,
                                parser_name=parsed.format, parser_version=parsed.version,
                                submitter=submitter)
        prepared = _runs_prepared(previews, provenance, cache)
        committed = True
    except IngestError:
        if stored_file and artifact is not None:
            artifact_file_discard_if_orphaned(artifact.file.name)
        raise
    finally:
        cache.settle(committed)
    return artifact, prepared


def _answered_runs_write(artifacts: list[Artifact], batch: int = 500) -> None:
    """Each artifact's answered_run_ids, as bulk_update writes them (the JSON of the list),
    with one UPDATE ... CASE per batch: bulk_update builds expression objects per value, which
    cost more than the statement for the thousands of tables of a mail archive."""
    table, pk = (connection.ops.quote_name(name) for name in (Artifact._meta.db_table, "id"))
    column = connection.ops.quote_name("answered_run_ids")
    value = "CAST(%s AS jsonb)" if connection.vendor == "postgresql" else "%s"
    with connection.cursor() as cursor:
        for start in range(0, len(artifacts), batch):
            part = artifacts[start:start + batch]
            cases = " ".join([f"WHEN %s THEN {value}"] * len(part))
            ids = ", ".join(["%s"] * len(part))
            cursor.execute(f"UPDATE {table} SET {column} = CASE {pk} {cases} END "
                           f"WHERE {pk} IN ({ids})",
                           [*(item for artifact in part for item in (
                               artifact.pk, json.dumps(artifact.answered_run_ids))),
                            *(artifact.pk for artifact in part)])


def tables_ingest(*, tables: list[TableInput], source: str, submitter=None,
                  after_store=None) -> list[TableOutcome]:
    """Store many small texts as `upload_ingest` would store each (an artifact per text, its
    runs, repeated result sets linked) in one transaction: catalog lookups shared (a savepoint
    only around a text that creates catalog rows), the artifacts written by one INSERT and all
    runs by one `runs_store_once` call. A text that cannot be stored gets its error in its
    outcome; the others are stored. `after_store(outcomes)` runs in the same transaction (the
    mbox import links the runs to their posts there)."""
    outcomes = [TableOutcome() for _ in tables]
    parsed: dict[int, tuple] = {}
    for index, table in enumerate(tables):  # parsing needs no transaction
        try:
            parsed[index] = _table_parsed(table)
        except IngestError as exc:
            outcomes[index].error = exc
    cache = _CatalogCache()
    kept: list[tuple[int, Artifact, list[PreparedRun]]] = []
    try:
        with transaction.atomic():
            for index, parsed_table in parsed.items():
                try:
                    artifact, prepared = _table_prepared(
                        tables[index], parsed_table, source=source, submitter=submitter,
                        cache=cache)
                except IngestError as exc:
                    outcomes[index].error = exc
                    continue
                kept.append((index, artifact, prepared))
            Artifact.objects.bulk_create([artifact for _, artifact, _ in kept], batch_size=500)
            runs = runs_store_once([item for _, _, prepared in kept for item in prepared])
            start = 0
            for index, artifact, prepared in kept:
                outcomes[index].runs = runs[start:start + len(prepared)]
                artifact.answered_run_ids = [run.pk for run in outcomes[index].runs]
                start += len(prepared)
            _answered_runs_write([artifact for _, artifact, _ in kept])
            if after_store is not None:
                after_store(outcomes)
    except Exception:
        for _, artifact, _ in kept:
            artifact_file_discard_if_orphaned(artifact.file.name)
        raise
    return outcomes

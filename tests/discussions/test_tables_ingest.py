"""tables_ingest (the mbox import's batched table store) stores what upload_ingest stores for
each table on its own: the same artifacts (fields, shared files, answered runs), runs, catalog
rows and refusals, and a refused table leaves no catalog row behind."""

import io
import shutil

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmarks.models import Artifact, Benchmark, Kernel, Machine, Metric, Run, RunSource
from benchmarks.services import runs as runs_service
from benchmarks.services.ingest import (
    IngestError,
    TableInput,
    UploadMetadata,
    tables_ingest,
    upload_ingest,
)

pytestmark = pytest.mark.django_db
CATALOG = (Benchmark, Kernel, Machine, Metric)
REFUSED_KERNEL = "2.6.99-refused"


def _tables() -> list[TableInput]:
    timed = "time {a} ms\ntime {b} ms\ntime {c} ms\n"
    sweep = "Loop to 1M:\n2.6.22\t\ttime 4000 ms\n2.6.23\t\ttime 4500 ms\n2.6.24\t\ttime 5000 ms\n"
    return [
        TableInput(timed.format(a=3001, b=3010, c=2999), "a@x.txt", "time-ms",
                   "2.6.24"),
        TableInput(sweep, "b@x.txt"),
        # the same bytes again (shared file, repeated result set), then under another kernel
        TableInput(timed.format(a=3001, b=3010, c=2999), "c@x.txt", "time-ms",
                   "2.6.24"),
        TableInput(timed.format(a=3001, b=3010, c=2999), "d@x.txt", "time-ms",
                   "2.6.25-rc1"),
        TableInput("time 5 ms\ntime 6 ms\n", "e@x.txt", "time-ms"),  # no kernel: refused
        # refused after its new kernel row was made (see the monkeypatch below)
        TableInput(timed.format(a=1, b=2, c=3), "f@x.txt", "time-ms", REFUSED_KERNEL),
        TableInput(sweep, "g@x.txt"),
        TableInput(timed.format(a=10, b=11, c=12), "h@x.txt", "time-ms", "2.6.23"),
    ]


def _refuse_one_kernel(monkeypatch):
    real = runs_service.run_prepare

    def prepare(**kwargs):
        if kwargs["kernel"].version == REFUSED_KERNEL:
            raise runs_service.RunError("refused by the test after its catalog rows")
        return real(**kwargs)

    monkeypatch.setattr("benchmarks.services.ingest.run_prepare", prepare)


def _snapshot(outcomes: list) -> dict:
    """What is stored, with ids, file names and result keys (which hold catalog ids) as the
    order in which they first appear, so two databases compare."""
    files: dict[str, int] = {}
    results: dict[str, int] = {}
    outcomes = [(kind, [results.setdefault(key, len(results)) for key in value])
                if kind == "stored" else (kind, value) for kind, value in outcomes]
    artifacts = []
    for artifact in Artifact.objects.order_by("id"):
        keys = sorted(results[key] for key in Run.objects.filter(
            pk__in=artifact.answered_run_ids).values_list("result_key", flat=True))
        artifacts.append((artifact.filename, artifact.sha256, artifact.size,
                          files.setdefault(artifact.file.name, len(files)), artifact.metadata,
                          artifact.forced_format, artifact.source, artifact.parser_name,
                          artifact.parser_version, artifact.uploader_id, artifact.content_type,
                          keys, artifact.file.read()))
    runs = [(results[run.result_key], run.kernel.version, run.benchmark.slug, run.machine.name,
             run.artifact.filename, run.params, run.label, run.source, run.parser_name,
             sorted(run.samples.values_list("value", flat=True)))
            for run in Run.objects.order_by("id").select_related(
                "kernel", "benchmark", "machine", "artifact")]
    return {"artifacts": artifacts, "runs": runs, "outcomes": outcomes,
            "kernels": sorted(Kernel.objects.values_list("version", flat=True)),
            "metrics": sorted(Metric.objects.values_list("benchmark__slug", "name", "unit"))}


def _one_by_one(tables: list[TableInput], user) -> list:
    outcomes = []
    for table in tables:
        try:
            outcome = upload_ingest(
                stream=io.BytesIO(table.text.encode()), filename=table.filename,
                metadata=UploadMetadata(kernel=table.kernel), source=RunSource.MAIL,
                submitter=user, format=table.format)
        except IngestError as exc:
            outcomes.append(("refused", str(exc)))
            continue
        outcomes.append(("stored", [run.result_key for run in outcome.runs]))
    return outcomes


def _batched(tables: list[TableInput], user) -> list:
    return [("refused", str(outcome.error)) if outcome.error else
            ("stored", [run.result_key for run in outcome.runs])
            for outcome in tables_ingest(tables=tables, source=RunSource.MAIL, submitter=user)]


def _forget(before: dict) -> None:
    """Remove what a phase stored, so the next starts from the same database and files."""
    Run.objects.all().delete()
    Artifact.objects.all().delete()
    for model in reversed(CATALOG):
        model.objects.exclude(pk__in=before[model]).delete()
    shutil.rmtree(settings.MEDIA_ROOT, ignore_errors=True)


def test_a_batch_stores_what_one_upload_per_table_stores(poster, monkeypatch):
    _refuse_one_kernel(monkeypatch)
    before = {model: set(model.objects.values_list("pk", flat=True)) for model in CATALOG}
    plain = _snapshot(_one_by_one(_tables(), poster))
    _forget(before)
    batched = _snapshot(_batched(_tables(), poster))
    assert batched == plain
    assert [kind for kind, _ in plain["outcomes"]] == [
        "stored", "stored", "stored", "stored", "refused", "refused", "stored", "stored"]
    assert REFUSED_KERNEL not in plain["kernels"]  # its savepoint took its kernel row back
    assert len({row[3] for row in plain["artifacts"]}) < len(plain["artifacts"])  # shared
    assert len(plain["artifacts"]) == 6


def test_tables_whose_catalog_rows_are_cached_take_no_savepoint(poster):
    """Only the first table of the batch looks up (and may create) catalog rows."""
    tables_ingest(tables=_tables()[:2], source=RunSource.MAIL, submitter=poster)
    again = [TableInput(f"time {3000 + n} ms\ntime 3001 ms\n", f"{n}.txt",
                        "time-ms", "2.6.24") for n in range(40)]
    with CaptureQueriesContext(connection) as queries:
        outcomes = tables_ingest(tables=again, source=RunSource.MAIL, submitter=poster)
    assert all(outcome.error is None and outcome.runs for outcome in outcomes)
    savepoints = [q for q in queries.captured_queries if q["sql"].startswith("SAVEPOINT")]
    inserts = [q for q in queries.captured_queries
               if q["sql"].startswith('INSERT INTO "benchmarks_artifact"')]
    assert len(inserts) == 1 and len(savepoints) < len(again) // 4  # not one per table

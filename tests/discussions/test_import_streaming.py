"""The streaming mbox import stores exactly what the import that held the whole archive in
memory stored.

`golden/import_snapshot.json` was written by the in-memory import (commit e0fccc1, the last
before the streaming one) from the sample archives below: every stored column of every post,
thread, attachment, run, sample, artifact and run link (a digest per row), and the import
reports, ids as their rank in insertion order and times of insertion as "now". Each case is
imported again here, with the posts sent in line and by the writer thread, and must give the
same rows.

Regenerate (only for an intended change, explained in the commit):
SCHEDBENCH_IMPORT_GOLDEN=write .venv/bin/python -m pytest tests/discussions/test_import_streaming.py
"""

import gzip
import hashlib
import itertools
import json
import os
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from bench.discussions_speed import thread_mbox
from benchmarks.models import Artifact, Run, RunParam, Sample
from discussions import importer
from discussions.importer import mbox_import
from discussions.models import Attachment, Post, PostRun, Thread

from .test_import_layout import messy_archive
from .test_xss import HOSTILE_MBOX

pytestmark = pytest.mark.django_db
GOLDEN = Path(__file__).resolve().parent / "golden" / "import_snapshot.json"
MBOX_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "mbox"
MODELS = (Thread, Post, Attachment, PostRun, Artifact, Run, RunParam, Sample)
# search_vector: PostgreSQL only; file: a name with a random part; result_key: a digest of
# database ids (kernel, machine, benchmark), whose numbers depend on the database's sequences;
# what it digests is compared in the run's other columns and its samples
SKIPPED = {"search_vector", "file", "result_key"}


def _fixture(name: str) -> bytes:
    return (MBOX_DIR / name).read_bytes()


def _mail(mid: str, body: str, extra: str = "") -> str:
    return (f"From x@example.org Mon Feb 11 10:00:00 2008\nFrom: X <x@example.org>\n"
            f"Subject: s\nDate: Mon, 11 Feb 2008 10:00:00 +0000\nMessage-ID: <{mid}>\n{extra}"
            f"\n{body}")


def _cases() -> dict[str, list[bytes]]:
    """Each case: the archives imported one after the other into an empty database."""
    threadtest = _fixture("threadtest.mbox")
    packed = gzip.compress(threadtest)
    tables = "".join(thread_mbox(thread, 20, 3) for thread in range(12)).encode()
    return {
        "threadtest": [threadtest],
        "threadtest twice": [threadtest, threadtest],
        "gzip": [packed],
        "gzip in two members": [gzip.compress(threadtest[:3000])
                                + gzip.compress(threadtest[3000:])],
        "truncated gzip": [packed[:len(packed) * 2 // 3]],
        "gzip with trailing garbage": [packed + b"garbage"],
        "damaged gzip": [packed[:20] + bytes([packed[20] ^ 0xFF]) + packed[21:],
                         gzip.compress(threadtest[:3000]) + packed[:-8] + b"\0" * 8],
        "broken": [_fixture("broken.mbox")],
        "not an mbox": [_fixture("not-an-mbox.txt")],
        "empty": [b"\n\n"],
        "binary": [b"\x00\x01\x02PK\x03\x04"],
        "bare message": [b"From: A <a@x>\nSubject: lone\nMessage-ID: <lone@x>\n\ntime 5 ms"],
        "hostile": [HOSTILE_MBOX],
        "unseparated and duplicates": [(
            _mail("a@x", "first body\n") + _mail("b@x", "second body\n\n")
            + _mail("c@x", "third\r\n\r\n") + _mail("c@x", "again\n\n")
            + _mail("d@x", "no date, subject only\n\n").replace(
                "Date: Mon, 11 Feb 2008 10:00:00 +0000\n", "").replace("Subject: s",
                                                                       "Subject: Re: s")
            + _mail("e@x", "last line cut").replace("\n", "\r\n")).encode()],
        "messy, tables and threadtest": [messy_archive(6, 40).encode() + threadtest + tables],
        "joining stored threads": [
            thread_mbox(0, 10, 3).encode() + messy_archive(2, 12).encode(),
            thread_mbox(0, 16, 3).encode() + messy_archive(3, 12).encode() + tables],
    }


def _plain(value):
    if isinstance(value, memoryview | bytes):
        value = bytes(value)
        return "sha256:" + hashlib.sha256(value).hexdigest()[:24] if len(value) > 64 else \
            value.decode("latin-1")
    if isinstance(value, datetime):
        # times of insertion (and the date of a message without one) are "now"
        return "now" if abs(value - timezone.now()) < timedelta(hours=1) else value.isoformat()
    if isinstance(value, str) and len(value) > 200:
        return "sha256:" + hashlib.sha256(value.encode()).hexdigest()[:24]
    return value


def _natural(model, pk: int) -> str:
    """A row outside the compared tables (kernel, benchmark, user...) by what names it."""
    row = model.objects.get(pk=pk)
    # a machine by its name: the fingerprint of a user's own machine is salted with the user's
    # id, which depends on the database's sequence (PostgreSQL's does not restart per test)
    for name in ("version", "slug", "username", "name", "fingerprint"):
        if hasattr(row, name):
            return f"{model.__name__}:{getattr(row, name)}"
    return f"{model.__name__}:{row}"


def _ranks(model) -> dict[int, int]:
    return {pk: rank for rank, pk in enumerate(model.objects.order_by("pk").values_list(
        "pk", flat=True))}


def _table(model, ranks: dict) -> list:
    """Every row in insertion order: each column's value, keys as the rank of what they name."""
    fields = [f for f in model._meta.concrete_fields if f.name not in SKIPPED]
    rows = []
    for values in model.objects.order_by("pk").values_list(*(f.attname for f in fields)):
        row = {}
        for field, value in zip(fields, values, strict=True):
            target = field.related_model if field.is_relation else (
                model if field.primary_key else None)
            if target is not None and value is not None:
                value = ranks[target][value] if target in ranks else _natural(target, value)
            if (model, field.name) == (Artifact, "answered_run_ids"):  # run keys in JSON
                value = [ranks[Run].get(pk, "gone") for pk in value]
            row[field.name] = _plain(value)
        rows.append(row)
    return rows


def _report(report: dict, ranks: dict) -> dict:
    report = json.loads(json.dumps(report, default=str))
    for thread in report["threads"]:
        thread["id"] = ranks[Thread][thread["id"]]
        thread["url"] = "thread"
    for repeat in report["repeated"]:
        repeat["run"] = ranks[Run][repeat["run"]]
    return report


def _snapshot(archives: list[bytes], poster) -> dict:
    reports = [mbox_import(data=data, user=poster).as_dict() for data in archives]
    ranks = {model: _ranks(model) for model in MODELS}
    return {"reports": [_report(report, ranks) for report in reports],
            **{model.__name__: _table(model, ranks) for model in MODELS}}


def _empty() -> None:
    Thread.objects.all().delete()
    Run.objects.all().delete()
    Artifact.objects.all().delete()


def _digests(snapshot: dict) -> dict:
    """The snapshot as stored in the golden file: reports whole, each row as a digest."""
    return {"reports": snapshot["reports"], **{
        model.__name__: [hashlib.sha256(json.dumps(row, sort_keys=True, default=str).encode())
                         .hexdigest()[:16] for row in snapshot[model.__name__]]
        for model in MODELS}}


def _same(snapshot: dict, expected: dict, name: str) -> None:
    """Equal to `expected` (a snapshot or its digests), else the first differing row shown."""
    assert snapshot["reports"] == expected["reports"], name
    digests = _digests(snapshot)
    for model in MODELS:
        rows, wanted = snapshot[model.__name__], expected[model.__name__]
        assert len(rows) == len(wanted), (name, model.__name__)
        mine = rows if wanted and isinstance(wanted[0], dict) else digests[model.__name__]
        for number, (row, want) in enumerate(zip(mine, wanted, strict=True)):
            assert row == want, (name, model.__name__, number, rows[number])


@pytest.fixture
def reserved_ids(monkeypatch):
    """Post ids reserved before the insert on SQLite too, as the sequence would."""
    if connection.vendor != "postgresql":
        drawn = itertools.count(10**6)
        monkeypatch.setattr(importer, "_reserved_post_ids",
                            lambda count: [next(drawn) for _ in range(count)] if count else None)


def test_the_import_stores_what_the_in_memory_import_stored(poster, reserved_ids, monkeypatch):
    snapshots = {}
    for threaded in (False, True):
        monkeypatch.setattr(importer, "WRITER_THREADED", threaded)
        for name, archives in _cases().items():
            snapshot = _snapshot(archives, poster)
            _empty()
            if threaded:
                _same(snapshot, snapshots[name], name)  # both ways store the same
            snapshots[name] = snapshot
    if os.environ.get("SCHEDBENCH_IMPORT_GOLDEN") == "write":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps({name: _digests(snapshot) for name, snapshot
                                      in snapshots.items()}, indent=0, sort_keys=True) + "\n")
    golden = json.loads(GOLDEN.read_text())
    assert set(golden) == set(snapshots)
    for name, snapshot in snapshots.items():
        _same(snapshot, golden[name], name)
    big = snapshots["messy, tables and threadtest"]
    assert len(big["Post"]) > 500 and big["PostRun"] and big["Attachment"] and big["Sample"]
    assert any(row["parent"] is not None for row in big["Post"])
    assert any(problem["reason"].startswith("line ") for report in snapshots[
        "unseparated and duplicates"]["reports"] for problem in report["problems"])

"""The mbox import's writer thread (dbwriter.StatementWriter) stores exactly what sending the
same statements from the importing thread stores, and all or nothing: a failed statement, or
a failure of the importing thread while statements wait, leaves nothing behind.

On SQLite the post ids are reserved here as PostgreSQL's sequence would reserve them, so the
path that sends the posts through the writer runs on both databases."""

import gc
import threading

import pytest
from django.db import connection, transaction
from django.utils import timezone

from bench.discussions_speed import thread_mbox
from discussions import importer
from discussions.dbwriter import StatementWriter
from discussions.importer import mbox_import
from discussions.models import Post, PostRun, Thread

from .test_import_layout import (
    _as_laid_out_from_rows,
    _figures,
    _places,
    _stored_posts,
    messy_archive,
)

pytestmark = pytest.mark.django_db
POST_INSERT = f'INSERT INTO "{Post._meta.db_table}"'


@pytest.fixture
def reserved_ids(monkeypatch):
    """Post ids reserved before the insert on every database (see the module's docstring)."""
    reserve = importer._reserved_post_ids
    if connection.vendor != "postgresql":
        monkeypatch.setattr(importer, "_reserved_post_ids",
                            lambda count: list(range(10**6, 10**6 + count)) if count else None)
    return reserve


class _PostInserts:
    """A real execute wrapper: the thread each post INSERT ran on, optionally failing one."""

    def __init__(self, fail_at: int | None = None):
        self.threads: list[int] = []
        self.fail_at = fail_at

    def __call__(self, execute, sql, params, many, context):
        if sql.startswith(POST_INSERT):
            self.threads.append(threading.get_ident())
            if len(self.threads) == self.fail_at:
                raise RuntimeError(f"post batch {self.fail_at} refused by the test")
        return execute(sql, params, many, context)


def _archive(mbox_bytes) -> bytes:
    """Threads of several shapes, and replies pasting tables (the extraction runs too)."""
    tables = "".join(thread_mbox(thread, 20, 3) for thread in range(40))
    return (messy_archive(6, 40).encode() + mbox_bytes("threadtest.mbox") + tables.encode())


def _import(data: bytes, poster, threaded: bool, monkeypatch):
    monkeypatch.setattr(importer, "WRITER_THREADED", threaded)
    inserts = _PostInserts()
    with connection.execute_wrapper(inserts):
        report = mbox_import(data=data, user=poster).as_dict()
    # runs by what they hold: their ids differ between the two imports
    links = sorted((link.post.message_id, link.reported_in, link.run.kernel.version,
                    link.run.benchmark.name, str(link.run.params), link.run.label)
                   for link in PostRun.objects.select_related("post", "run__kernel",
                                                              "run__benchmark"))
    repeated = [(item["message"], item["reported_in"]) for item in report["repeated"]]
    outcome = (report["imported"], report["runs_extracted"], repeated,
               report["problems"], [thread["subject"] for thread in report["threads"]],
               _stored_posts(), links)
    assert (_places(), _figures()) == _as_laid_out_from_rows()
    return outcome, inserts.threads


def test_posts_sent_by_the_writer_thread_are_the_posts_sent_in_line(
        poster, mbox_bytes, reserved_ids, monkeypatch):
    data = _archive(mbox_bytes)
    in_line, in_line_threads = _import(data, poster, False, monkeypatch)
    from benchmarks.models import Artifact, Run

    Thread.objects.all().delete()
    Run.objects.all().delete()
    Artifact.objects.all().delete()
    threaded, writer_threads = _import(data, poster, True, monkeypatch)
    assert threaded == in_line
    imported, runs, repeated, _, _, posts, links = in_line
    assert imported > 1000 and len(posts) == imported
    assert runs > 0 and repeated and links  # tables were found while the posts were written
    assert len(in_line_threads) == len(writer_threads) > 2  # several batches each way
    assert set(in_line_threads) == {threading.get_ident()}
    assert threading.get_ident() not in writer_threads  # sent from the writer thread


def test_a_failed_batch_leaves_nothing_and_names_where_it_failed(
        poster, mbox_bytes, reserved_ids, monkeypatch):
    monkeypatch.setattr(importer, "WRITER_THREADED", True)
    inserts = _PostInserts(fail_at=2)
    with connection.execute_wrapper(inserts), pytest.raises(RuntimeError) as raised:
        mbox_import(data=_archive(mbox_bytes), user=poster)
    assert "post batch 2 refused" in str(raised.value)
    assert len(inserts.threads) == 2  # the batches after the failed one were never sent
    assert raised.traceback[-1].name == "__call__"  # the wrapper's own line, on the writer
    assert Post.objects.count() == Thread.objects.count() == 0
    assert gc.isenabled()


def test_statements_queued_when_the_caller_fails_never_run(poster):
    """The caller's error stops the writer: what waits in its queue is dropped, and the
    transaction the caller leaves by that error is rolled back whole."""
    started, release = threading.Event(), threading.Event()
    sent = []

    def slow_first(execute, sql, params, many, context):
        if not sql.startswith("INSERT"):
            return execute(sql, params, many, context)
        sent.append(params[0])
        if params[0] == "first":
            started.set()
            release.wait(10)
        return execute(sql, params, many, context)

    table = connection.ops.quote_name(Thread._meta.db_table)
    insert = (f"INSERT INTO {table} (subject, target_type, target_id, created, "
              "last_activity, post_count) VALUES (%s, '', '', %s, %s, 0)")
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    writer = StatementWriter(threaded=True)

    def release_once_cancelled():  # the first statement ends only once the caller failed
        writer._cancelled.wait(10)
        release.set()

    threading.Thread(target=release_once_cancelled).start()
    with (connection.execute_wrapper(slow_first), pytest.raises(ValueError),
          transaction.atomic(), writer):
        writer.send(insert, ["first", now, now])
        assert started.wait(10)
        writer.send(insert, ["second", now, now])
        writer.send(insert, ["third", now, now])
        raise ValueError("the caller failed")
    assert release.is_set() and sent == ["first"]
    assert not Thread.objects.exists()


def test_the_writer_runs_its_statements_in_order_on_one_connection(poster):
    table = connection.ops.quote_name(Thread._meta.db_table)
    insert = (f"INSERT INTO {table} (subject, target_type, target_id, created, "
              "last_activity, post_count) VALUES (%s, '', '', %s, %s, %s)")
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with transaction.atomic(), StatementWriter(threaded=True) as writer:
        for number in range(20):
            writer.send(insert, [f"t{number}", now, now, number])
    assert writer.statements == 20
    assert list(Thread.objects.order_by("pk").values_list("post_count", flat=True)) == list(
        range(20))


def test_the_collector_is_off_during_an_import_and_on_after(poster, mbox_bytes):
    seen = []
    mbox_import(data=mbox_bytes("threadtest.mbox"), user=poster,
                progress=lambda stage, done, total: seen.append(gc.isenabled()))
    assert seen and not any(seen)
    assert gc.isenabled()
    with importer._collector_paused():
        with importer._collector_paused():  # imports side by side in one process
            assert not gc.isenabled()
        assert not gc.isenabled()  # the other one still runs
    assert gc.isenabled()


def test_the_importing_thread_cannot_use_the_connection_it_lent(poster):
    with (transaction.atomic(), StatementWriter(threaded=True),
          pytest.raises(RuntimeError, match="lent to the import's writer")):
        Thread.objects.count()
    assert Thread.objects.count() == 0  # its own again once the writer is done

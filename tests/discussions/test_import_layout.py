"""mbox import lays new threads out before storing them (one insert per batch): the stored
parents, orders, depths and thread figures must be what laying each stored thread out from its
rows gives (services.thread_relayout, the way every thread was laid out before)."""

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from django.db import connection

from discussions import importer
from discussions.importer import mbox_import
from discussions.models import Post, Thread
from discussions.services import thread_relayout

pytestmark = pytest.mark.django_db


def _message(*, mid, when, subject, in_reply_to="", references=(), body="text"):
    headers = [f"From dev@example.org {when:%a %b %d %H:%M:%S %Y}",
               "From: Dev <dev@example.org>", f"Subject: {subject}",
               f"Date: {format_datetime(when)}", f"Message-ID: <{mid}>"]
    if in_reply_to:
        headers.append(f"In-Reply-To: <{in_reply_to}>")
    if references:
        headers.append("References: " + " ".join(f"<{r}>" for r in references))
    return "\n".join(headers) + "\n\n" + body + "\n\n"


def messy_archive(seed: int, threads: int, prefix: str = "") -> str:
    """Threads as lists really look: replies with the same Date (ties), out of file order,
    parents that never arrived, replies with only a subject, reference loops, deep chains."""
    rng = random.Random(seed)
    out = []
    for thread in range(threads):
        start = datetime(2009, 1, 1, tzinfo=UTC) + timedelta(hours=thread)
        ids = []
        for number in range(rng.randint(1, 30)):
            mid = f"{prefix}t{thread}.m{number}@lists.example.org"
            when = start + timedelta(minutes=rng.choice([0, 0, 1, 2, number, -number]))
            parent = rng.choice(ids) if ids and rng.random() < 0.85 else ""
            kind = rng.random()
            if kind < 0.1 and parent:  # a parent that never arrived
                missing = f"{prefix}lost{thread}.{number}@lists.example.org"
                out.append(_message(mid=mid, when=when, subject=f"Re: topic {thread}",
                                    in_reply_to=missing, references=[parent, missing]))
            elif kind < 0.15 and number:  # an old mailer: subject only
                out.append(_message(mid=mid, when=when, subject=f"Re: topic {thread}"))
            elif kind < 0.18 and parent:  # a loop: the parent names this one as its own
                out.append(_message(mid=mid, when=when, subject=f"Re: topic {thread}",
                                    in_reply_to=parent, references=[mid, parent]))
            else:
                out.append(_message(mid=mid, when=when,
                                    subject=f"{'Re: ' if parent else ''}topic {thread}",
                                    in_reply_to=parent, references=[parent] if parent else []))
            ids.append(mid)
    rng.shuffle(out)
    return "".join(out)


def _places():
    return sorted(Post.objects.values_list("id", "thread_id", "parent_id", "thread_order",
                                           "depth"))


def _figures():
    return sorted(Thread.objects.values_list("id", "post_count", "last_activity"))


def _as_laid_out_from_rows():
    """Every thread laid out again from its stored rows: what must not change anything."""
    for thread in Thread.objects.all():
        thread_relayout(thread=thread)
    return _places(), _figures()


def test_new_threads_are_laid_out_as_from_their_stored_rows(poster, mbox_bytes):
    data = messy_archive(1, 60).encode() + mbox_bytes("threadtest.mbox")
    report = mbox_import(data=data, user=poster)
    assert report.imported > 300 and len(report.threads) > 40
    stored, figures = _places(), _figures()
    assert any(depth >= 3 for *_, depth in stored)  # deep enough to mean something
    assert sum(parent is not None for _, _, parent, _, _ in stored) > 200
    assert (stored, figures) == _as_laid_out_from_rows()


def test_posts_joining_stored_threads_are_laid_out_with_them(poster):
    first = messy_archive(2, 30)
    mbox_import(data=first.encode(), user=poster)
    threads = Thread.objects.count()
    # the same conversations continued: replies to stored messages, plus new threads
    more = "".join(_message(mid=f"late{n}@lists.example.org",
                            when=datetime(2009, 1, 1, tzinfo=UTC) + timedelta(minutes=n),
                            subject="Re: topic", in_reply_to=f"t{n % 30}.m0@lists.example.org")
                   for n in range(40)) + messy_archive(3, 10, prefix="new")
    report = mbox_import(data=more.encode(), user=poster)
    assert report.imported > 40
    assert Thread.objects.count() > threads
    stored, figures = _places(), _figures()
    assert Post.objects.filter(message_id__startswith="late", parent__isnull=False).count() \
        == Post.objects.filter(message_id__startswith="late").count() > 0
    assert (stored, figures) == _as_laid_out_from_rows()


def _layout_by_message():
    return sorted(Post.objects.values_list("message_id", "parent__message_id", "thread_order",
                                           "depth", "thread__subject", "thread__post_count"))


def test_parents_written_with_reserved_ids_are_the_parents_set_after_the_insert(
        poster, mbox_bytes, monkeypatch):
    """PostgreSQL reserves the new posts' ids and writes parents with them; elsewhere parents
    are set after the insert. Both give the same threads (SQLite reserves ids here the way
    the sequence would, from above every id used)."""
    data = messy_archive(4, 60).encode() + mbox_bytes("threadtest.mbox")
    reserve = importer._reserved_post_ids
    monkeypatch.setattr(importer, "_reserved_post_ids", lambda count: None)
    mbox_import(data=data, user=poster)
    after_insert = _layout_by_message()
    Thread.objects.all().delete()
    reserved = []

    def reserving(count):
        ids = reserve(count) if connection.vendor == "postgresql" else list(
            range(10**6, 10**6 + count))
        reserved.extend(ids)
        return ids

    monkeypatch.setattr(importer, "_reserved_post_ids", reserving)
    mbox_import(data=data, user=poster)
    assert sorted(Post.objects.values_list("id", flat=True)) == sorted(reserved)
    assert _layout_by_message() == after_insert
    assert sum(parent is not None for _, parent, *_ in after_insert) > 200
    stored, figures = _places(), _figures()
    assert (stored, figures) == _as_laid_out_from_rows()


def _stored_posts():
    """Every column of every post, ids and times of insertion as what they point at."""
    skip = {"id", "created", "thread", "parent", "search_vector"}
    names = [f.attname for f in Post._meta.concrete_fields if f.name not in skip]
    return sorted(
        (post.message_id, post.thread.subject, post.parent.message_id if post.parent else None,
         *(bytes(value) if isinstance(value, memoryview) else value
           for value in (getattr(post, name) for name in names)))
        for post in Post.objects.select_related("thread", "parent"))


def test_posts_inserted_by_the_import_are_the_rows_bulk_create_writes(
        poster, mbox_bytes, monkeypatch):
    data = messy_archive(5, 40).encode() + mbox_bytes("threadtest.mbox")

    def plain_insert(batches, after_each):
        for batch in batches:
            importer._render_rows(batch.posts)
            Post.objects.bulk_create(batch.posts, batch_size=importer.BATCH)
            after_each(batch)

    monkeypatch.setattr(importer, "_posts_insert", plain_insert)
    mbox_import(data=data, user=poster)
    plain = _stored_posts()
    Thread.objects.all().delete()
    monkeypatch.undo()
    mbox_import(data=data, user=poster)
    assert _stored_posts() == plain
    assert len(plain) > 200 and any(row[2] for row in plain)  # parents point at posts
    stored, figures = _places(), _figures()
    assert (stored, figures) == _as_laid_out_from_rows()


def test_a_thread_longer_than_a_batch_is_written_in_parts_and_laid_out_whole(
        poster, monkeypatch):
    """A thread of more than BATCH posts goes in BATCH posts at a time (so a long thread is not
    held whole): its layout, parents and figures are still those of the whole thread, with
    ids reserved first and with parents set after the insert."""
    from bench.discussions_speed import thread_mbox

    data = (thread_mbox(0, 3, 2) + thread_mbox(1, 2 * importer.BATCH + 77, 3)
            + messy_archive(10, 5)).encode()
    monkeypatch.setattr(importer, "_reserved_post_ids", lambda count: None)
    report = mbox_import(data=data, user=poster)
    assert max(thread.post_count for thread in report.threads) == 2 * importer.BATCH + 77
    after_insert = _layout_by_message()
    assert (_places(), _figures()) == _as_laid_out_from_rows()
    Thread.objects.all().delete()
    monkeypatch.setattr(importer, "_reserved_post_ids",
                        lambda count: list(range(10**6, 10**6 + count)) if count else None)
    mbox_import(data=data, user=poster)
    assert _layout_by_message() == after_insert
    assert (_places(), _figures()) == _as_laid_out_from_rows()
    assert sum(parent is not None for _, parent, *_ in after_insert) > 2 * importer.BATCH

"""An import lets go of each post's raw message and rendering once the post is written (the
largest values it holds, a third of its memory), and what it let go of is still what was
stored: a later read of the post loads it from the database."""

import pytest
from django.db import connection

from bench.discussions_speed import thread_mbox
from discussions import importer
from discussions.importer import mbox_import
from discussions.models import Post

from .test_import_layout import messy_archive

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored_pairs(monkeypatch):
    """Every (post, message) pair the import handed to its table extraction."""
    seen = []
    extract = importer._extract

    def keep(stored, *args, **kwargs):
        seen.extend(stored)
        return extract(stored, *args, **kwargs)

    monkeypatch.setattr(importer, "_extract", keep)
    return seen


def _released(pairs) -> None:
    assert pairs
    for post, message in pairs:
        assert "raw" not in post.__dict__ and "body_html" not in post.__dict__
        assert message.raw == b""  # the message kept no copy either


@pytest.mark.parametrize("threaded", [False, True])
def test_written_posts_hold_no_raw_message_or_rendering(poster, stored_pairs, monkeypatch,
                                                         threaded):
    if threaded and connection.vendor != "postgresql":
        monkeypatch.setattr(importer, "_reserved_post_ids",
                            lambda count: list(range(10**6, 10**6 + count)) if count else None)
    monkeypatch.setattr(importer, "WRITER_THREADED", threaded)
    archive = messy_archive(3, 60) + "".join(thread_mbox(thread, 12, 3) for thread in range(5))
    report = mbox_import(data=archive.encode(), user=poster)
    assert report.imported == len(stored_pairs) > importer.BATCH  # several batches
    _released(stored_pairs)
    post, _ = stored_pairs[len(stored_pairs) // 2]
    stored = Post.objects.get(pk=post.pk)
    assert stored.raw and stored.body_html
    with connection.cursor():  # the deferred fields load from the row that was written
        assert bytes(post.raw) == bytes(stored.raw)
        assert post.body_html == stored.body_html


def test_posts_joining_a_stored_thread_are_released_too(poster, stored_pairs):
    first = thread_mbox(0, 10, 3)
    mbox_import(data=first.encode(), user=poster)
    stored_pairs.clear()
    more = thread_mbox(0, 16, 3)  # the same thread, six replies more
    report = mbox_import(data=more.encode(), user=poster)
    assert report.imported == 6 == len(stored_pairs)
    assert report.created_thread_ids == set()  # they joined the stored thread
    _released(stored_pairs)
    for post, _ in stored_pairs:
        assert post.body_html == Post.objects.get(pk=post.pk).body_html != ""

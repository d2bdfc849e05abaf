"""The "threads about this" panel reads its threads with the SQL their queryset compiles to
(threads_about): the same threads, fields, order and first messages as the queryset, and the
same panel, in one query."""

import datetime

import pytest
from django.template.loader import render_to_string
from django.utils import timezone

from discussions.models import Post, Thread
from discussions.templatetags.discussions import (
    THREADS_SHOWN,
    threads_about,
    threads_about_queryset,
)

pytestmark = pytest.mark.django_db

FIELDS = ("pk", "subject", "target_type", "target_id", "started_by_id", "created",
          "last_activity", "post_count", "root_message_id")


def _thread(subject, target_type, target_id, *, at, posts=(), user=None):
    thread = Thread.objects.create(subject=subject, target_type=target_type,
                                   target_id=target_id, started_by=user, created=at,
                                   last_activity=at, post_count=len(posts))
    for order, message_id in posts:  # stored out of thread order: the order decides the root
        Post.objects.create(thread=thread, message_id=message_id, author="a", date=at,
                            subject=subject, thread_order=order)
    return thread


@pytest.fixture
def threads(poster):
    start = timezone.now().replace(microsecond=0) - datetime.timedelta(days=30)
    made = []
    for i in range(THREADS_SHOWN + 3):  # more than the panel shows
        at = start + datetime.timedelta(hours=i // 2)  # pairs share last_activity: id decides
        posts = [(2, f"r{i}.2@x"), (0, f"r{i}.0@x"), (1, f"r{i}.1@x")] if i % 3 else []
        made.append(_thread(f"about run 7 <{i}>", "run", "7", at=at, posts=posts,
                            user=poster if i % 2 else None))
    _thread("another run", "run", "70", at=start, posts=[(0, "other@x")])
    _thread("a comparison", "comparison", "7", at=start, posts=[(0, "cmp@x")])
    _thread("a comparison's other", "comparison", "cmp-Ab_9", at=start,
            posts=[(1, "b@x"), (0, "a@x")])
    return made


def _rows(threads):
    return [tuple(getattr(thread, name) for name in FIELDS) for thread in threads]


@pytest.mark.parametrize("target", [("run", "7"), ("run", 7), ("run", "70"), ("run", "8"),
                                    ("comparison", "7"), ("comparison", "cmp-Ab_9"),
                                    ("regression", "7")])
def test_the_sql_reads_what_the_queryset_reads(threads, target,
                                               django_assert_num_queries):
    expected = _rows(threads_about_queryset(*target)[:THREADS_SHOWN])
    with django_assert_num_queries(1):
        found = threads_about(*target)
    assert _rows(found) == expected
    assert all(isinstance(value, datetime.datetime) and value.tzinfo is not None
               for row in _rows(found) for value in row[5:7])
    if target == ("run", "7"):
        assert len(expected) == THREADS_SHOWN
        assert expected[0][-1] == f"r{THREADS_SHOWN + 2}.0@x"  # newest first, its root
        assert any(row[-1] is None for row in expected)  # a thread without posts


@pytest.mark.parametrize("target_type, target_id", [("run", "7"), ("comparison", "cmp-Ab_9"),
                                                    ("run", "8")])
def test_the_panel_is_the_same_either_way(threads, target_type, target_id, monkeypatch):
    from discussions.templatetags import discussions as tags

    context = {"target_type": target_type, "target_id": target_id}
    fast = render_to_string("discussions/_attached.html", context)
    monkeypatch.setattr(tags, "threads_about_read",
                        lambda *target: threads_about_queryset(*target)[:THREADS_SHOWN])
    plain = render_to_string("discussions/_attached.html", context)
    assert fast == plain
    assert ("No discussion about this" in fast) == (target_id == "8")
    assert fast.count("<li>") == {"7": THREADS_SHOWN, "cmp-Ab_9": 1, "8": 0}[target_id]

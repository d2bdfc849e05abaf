"""Threading by Message-ID, In-Reply-To and References: out of order, missing parents,
duplicates."""

from datetime import UTC, datetime, timedelta

import pytest

from discussions.importer import mbox_import
from discussions.models import Post, Thread
from discussions.ordering import Node, thread_layout

T0 = datetime(2008, 2, 11, 10, tzinfo=UTC)


def node(key, mid, reply_to="", refs=(), minutes=0):
    return Node(key, mid, reply_to, list(refs), T0 + timedelta(minutes=minutes))


def test_layout_is_depth_first_with_siblings_by_date():
    nodes = [
        node(4, "d", "b", ["a", "b"], minutes=30),
        node(1, "a", minutes=0),
        node(3, "c", "a", ["a"], minutes=20),
        node(2, "b", "a", ["a"], minutes=10),
    ]
    places = thread_layout(nodes)
    assert [k for k, _ in sorted(places.items(), key=lambda kv: kv[1].order)] == [1, 2, 4, 3]
    assert {k: p.depth for k, p in places.items()} == {1: 0, 2: 1, 4: 2, 3: 1}
    assert places[4].parent == 2


def test_missing_parent_falls_back_to_the_nearest_known_reference():
    places = thread_layout([
        node(1, "root"),
        node(2, "orphan", "gone", ["root", "gone"], minutes=5),
        node(3, "stray", "elsewhere", ["elsewhere"], minutes=1),
    ])
    assert places[2].parent == 1 and places[2].depth == 1
    assert places[3].parent is None and places[3].depth == 0  # tolerated: another top post


def test_looping_headers_do_not_lose_posts():
    places = thread_layout([node(1, "a", "b", ["b"]), node(2, "b", "a", ["a"], minutes=1)])
    assert sorted(places) == [1, 2]
    assert {p.order for p in places.values()} == {0, 1}



@pytest.mark.django_db
def test_realistic_mbox_threads_out_of_order_with_duplicates(imported):
    report = imported.as_dict()
    assert report["imported"] == 6 and report["skipped"] == 1
    assert [t["posts"] for t in report["threads"]] == [6]
    assert any("duplicate Message-ID" in p["reason"] for p in report["problems"])
    posts = list(Post.objects.in_thread_order())
    layout = [(p.author, p.depth) for p in posts]
    assert layout == [
        ("Olof Example", 0),
        ("Jan Example", 1),
        ("Ingo Example", 2),  # came before its parent in the file
        ("Jörg Beispiel", 3),
        ("Ingo Example", 4),
        ("Peter Example", 1),  # In-Reply-To is not in the archive: hangs off the root instead
    ]
    assert posts[5].in_reply_to == "not-in-archive-1@example.org"
    assert posts[2].parent_id == posts[1].pk


@pytest.mark.django_db
def test_reimport_adds_nothing_and_reports_skips(imported, mbox_bytes, poster):
    posts, threads = Post.objects.count(), Thread.objects.count()
    again = mbox_import(data=mbox_bytes("threadtest.mbox"), user=poster)
    assert again.imported == 0 and again.skipped == 7
    assert again.runs_extracted == 0
    assert (Post.objects.count(), Thread.objects.count()) == (posts, threads)


@pytest.mark.django_db
def test_a_later_mbox_joins_the_stored_thread_and_a_late_parent_adopts_its_child(poster):
    child = (b"From x Tue Feb 12 10:00:00 2008\nFrom: C <c@example.org>\nSubject: Re: late\n"
             b"Date: Tue, 12 Feb 2008 10:00:00 +0000\nMessage-ID: <child@x>\n"
             b"In-Reply-To: <middle@x>\nReferences: <top@x> <middle@x>\n\nchild\n")
    first = mbox_import(data=child, user=poster)
    assert first.imported == 1
    parents = (b"From x Mon Feb 11 10:00:00 2008\nFrom: A <a@example.org>\nSubject: late\n"
               b"Date: Mon, 11 Feb 2008 10:00:00 +0000\nMessage-ID: <top@x>\n\ntop\n\n"
               b"From x Mon Feb 11 11:00:00 2008\nFrom: B <b@example.org>\nSubject: Re: late\n"
               b"Date: Mon, 11 Feb 2008 11:00:00 +0000\nMessage-ID: <middle@x>\n"
               b"In-Reply-To: <top@x>\n\nmiddle\n")
    second = mbox_import(data=parents, user=poster)
    assert Thread.objects.count() == 1 and second.threads[0].pk == first.threads[0].pk
    ordered = [(p.message_id, p.depth) for p in Post.objects.in_thread_order()]
    assert ordered == [("top@x", 0), ("middle@x", 1), ("child@x", 2)]
    assert Thread.objects.get().post_count == 3


@pytest.mark.django_db
def test_replies_without_threading_headers_join_by_subject(poster):
    def message(mid, subject, minutes):
        return (f"From x Mon Feb 11 10:{minutes:02d}:00 2008\nFrom: P <p@x>\nSubject: {subject}\n"
                f"Date: Mon, 11 Feb 2008 10:{minutes:02d}:00 +0000\nMessage-ID: <{mid}>\n\n"
                f"text\n\n")
    data = (message("r@x", "Re: yield semantics", 5) + message("s@x", "yield semantics", 1)
            + message("o@x", "Re: something else", 7)).encode()
    report = mbox_import(data=data, user=poster)
    assert sorted(t.post_count for t in report.threads) == [1, 2]
    reply = Post.objects.get(message_id="r@x")
    assert reply.parent.message_id == "s@x" and reply.depth == 1
    assert "threaded by subject" in " ".join(reply.notes)

"""Mail import: a result set re-pasted without quote marks, later in the thread or in a later
import, links to the run of the message that first reported it; n is not inflated."""

import pytest

from benchmarks.models import Run
from discussions.importer import mbox_import
from discussions.models import Post, PostRun

pytestmark = pytest.mark.django_db


def message(mid: str, minute: int, body: str, reply: str = "") -> str:
    header = f"In-Reply-To: <{reply}>\nReferences: <{reply}>\n" if reply else ""
    return (f"From x Mon Feb 11 10:{minute:02d}:00 2008\nFrom: P{minute} <p{minute}@x>\n"
            f"Subject: {'Re: ' if reply else ''}threadtest numbers\n"
            f"Date: Mon, 11 Feb 2008 10:{minute:02d}:00 +0000\nMessage-ID: <{mid}>\n{header}\n"
            f"{body}\n")


TABLE = "On 2.6.24:\n\ntime 900 ms\ntime 910 ms\ntime 905 ms\n"


def test_a_table_repasted_in_a_later_import_links_to_the_first_report(poster):
    first = mbox_import(data=message("a@x", 1, TABLE).encode(), user=poster)
    assert first.runs_extracted == 1
    # A later import, another thread: the same numbers pasted without quote marks.
    later = mbox_import(data=message("z@x", 30, "As I said:\n\n" + TABLE).encode(), user=poster)
    assert later.runs_extracted == 0
    [run] = Run.objects.all()
    assert run.summaries.get().n == 3  # not 6
    assert later.repeated == [{"message": "<z@x>", "run": run.pk, "reported_in": "a@x"}]
    link = PostRun.objects.get(post__message_id="z@x")
    assert (link.run_id, link.reported_in) == (run.pk, "a@x")


def test_a_real_rerun_posted_later_is_a_new_run(poster):
    mbox_import(data=message("a@x", 1, TABLE).encode(), user=poster)
    rerun = TABLE.replace("905", "931")
    report = mbox_import(data=message("b@x", 9, rerun, reply="a@x").encode(), user=poster)
    assert report.runs_extracted == 1 and report.repeated == []
    assert Run.objects.count() == 2


def test_the_thread_page_says_where_a_repeated_result_was_first_reported(client, poster):
    mbox_import(data=(message("a@x", 1, TABLE) + message("b@x", 5, TABLE, reply="a@x"))
                .encode(), user=poster)
    thread = Post.objects.get(message_id="b@x").thread
    page = client.get(thread.get_absolute_url()).content.decode()
    run = Run.objects.get()
    assert page.count(f'href="/runs/{run.pk}/"') == 2
    assert 'already reported in <a href="/m/a@x/">&lt;a@x&gt;</a>' in page

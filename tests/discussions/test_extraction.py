"""Runs from each message's own text only: a quoted table yields its runs once, first poster."""

import pytest

from benchmarks.models import Run
from discussions.extraction import find_tables
from discussions.importer import mbox_import
from discussions.models import Post, PostRun

pytestmark = pytest.mark.django_db


def runs_by_author():
    found = {}
    for link in PostRun.objects.select_related("post", "run__kernel"):
        found.setdefault(link.post.author, []).append(
            (link.run.kernel.version, link.run.params.get("loops")))
    return {author: sorted(runs, key=str) for author, runs in found.items()}


def test_quoted_tables_yield_their_runs_once_attributed_to_the_first_poster(imported):
    assert imported.runs_extracted == 9 == Run.objects.count()
    by_author = runs_by_author()
    # The sweep is quoted by Jan and again (nested) by Ingo: its six runs are Olof's alone.
    assert by_author["Olof Example"] == sorted(
        [(k, loops) for k in ("2.6.22", "2.6.23", "2.6.24") for loops in (1000000, 2000000)],
        key=str)
    assert "Ingo Example" not in by_author
    assert set(Run.objects.values_list("source", flat=True)) == {"mail"}


def test_kernel_named_in_the_prose_labels_a_table_that_names_none(imported):
    jan = Post.objects.get(author="Jan Example")
    [run] = [link.run for link in jan.run_links.select_related("run__kernel")]
    assert run.kernel.version == "2.6.24-rc7"
    assert sorted(run.samples.values_list("value", flat=True)) == [254.0, 254.0, 293.0]


def test_results_file_keeps_its_own_kernel_and_tunables(imported):
    peter = Post.objects.get(author="Peter Example")
    [run] = [link.run for link in peter.run_links.select_related("run__kernel")]
    assert run.kernel.version == "2.6.24.1-smp"
    assert run.tunables == {"sched_child_runs_first": 0}
    assert run.artifact is not None and run.artifact.source == "mail"


def test_two_kernels_in_prose_give_two_runs():
    text = ("On 2.6.24 I get:\ntime 100 ms\ntime 110 ms\n\n"
            "and on 2.6.25-rc1:\ntime 50 ms\ntime 52 ms\n")
    tables = find_tables(text)
    assert [(t.kernel_hint, t.format) for t in tables] == [
        ("2.6.24", "time-ms"), ("2.6.25-rc1", "time-ms")]


def test_kernel_from_the_subject_when_the_text_names_none():
    [table] = find_tables("my numbers:\n\ntime 5 ms\ntime 6 ms\n", "threadtest on 2.6.23.9")
    assert table.kernel_hint == "2.6.23.9"


def test_quoted_lines_are_never_parsed():
    assert find_tables("> time 5 ms\n> time 6 ms\n\nThanks for the numbers.\n", "2.6.24") == []


def test_a_table_pasted_again_without_quote_marks_is_not_stored_twice(poster):
    def message(mid, minutes, reply=""):
        header = f"In-Reply-To: <{reply}>\n" if reply else ""
        return (f"From x Mon Feb 11 10:{minutes:02d}:00 2008\nFrom: P{minutes} <p@x>\n"
                f"Subject: numbers on 2.6.24\nDate: Mon, 11 Feb 2008 10:{minutes:02d}:00 +0000\n"
                f"Message-ID: <{mid}>\n{header}\nOn 2.6.24:\n\ntime 900 ms\ntime 910 ms\n\n")
    data = (message("b@x", 5, "a@x") + message("a@x", 1)).encode()
    report = mbox_import(data=data, user=poster)
    assert report.runs_extracted == 1 and Run.objects.count() == 1
    links = {link.post.message_id: link.reported_in
             for link in PostRun.objects.select_related("post")}
    # The earlier message (not file order) owns the run; the re-paste links to it.
    assert links == {"a@x": "", "b@x": "a@x"}
    assert report.repeated == [{"message": "<b@x>", "run": Run.objects.get().pk,
                                "reported_in": "a@x"}]


def test_reimport_extracts_no_new_runs(imported, mbox_bytes, poster):
    assert mbox_import(data=mbox_bytes("threadtest.mbox"), user=poster).runs_extracted == 0
    assert Run.objects.count() == 9

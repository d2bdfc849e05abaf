"""mbox imports of published tables (written fixtures, tests/fixtures/written/README.md): a
latin-1 robot report, a forward that kept quoted-printable, mmtests tables in prose and
forwarded under `> `. A reply quoting part of a report extracts nothing; a forward of a stored
report links to its runs instead of storing them twice."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.models import PublishedSummary, Run
from discussions.extraction import find_tables
from discussions.models import Post, PostRun

MBOX = Path(__file__).resolve().parent.parent / "fixtures" / "written" / "mbox"


def import_mbox(client, name: str) -> dict:
    response = client.post("/api/v1/threads/import/",
                           {"file": SimpleUploadedFile(name, (MBOX / name).read_bytes())})
    assert response.status_code == 201, response.content
    return response.json()


def links_of(message_id: str) -> list[PostRun]:
    return list(PostRun.objects.filter(post__message_id=message_id).select_related("run"))


@pytest.mark.django_db(transaction=True)
def test_robot_report_mail_reply_and_qp_forward(api_client):
    body = import_mbox(api_client, "robot.mbox")
    assert body["runs_extracted"] == 4
    assert Run.objects.count() == 4
    report = links_of("202403011234.abcdef12@intel.com")
    assert sorted(link.run.kernel.version for link in report) == [
        "5a1b2c3d4e", "5a1b2c3d4e", "9f8e7d6c5b", "9f8e7d6c5b"]
    tested = next(link.run for link in report if link.run.kernel.version == "9f8e7d6c5b"
                  and link.run.benchmark.slug == "hackbench")
    throughput = PublishedSummary.objects.get(run=tested, metric__name="hackbench.throughput")
    assert (throughput.value, throughput.n, throughput.stddev_pct) == (117154.0, 6, None)
    base = PublishedSummary.objects.get(run__kernel__version="5a1b2c3d4e",
                                        metric__name="hackbench.throughput")
    assert base.stddev_pct == 2.0  # the latin-1 ± read right
    assert tested.environment["commit"]["subject"] == "sched/fair: Rework wakeup preemption"
    assert links_of("reply-1@example.org") == []  # its partial quote is the report's
    forwarded = links_of("forward-1@example.org")
    assert {link.run_id for link in forwarded} == {link.run_id for link in report}
    assert all(link.reported_in == "202403011234.abcdef12@intel.com" for link in forwarded)
    assert Post.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_mmtests_mail_and_quoted_forward(api_client):
    body = import_mbox(api_client, "mmtests.mbox")
    assert body["runs_extracted"] == 12
    original = links_of("mmtests-1@example.org")
    labels = sorted({(link.run.benchmark.slug, link.run.label) for link in original})
    assert labels == [("hackbench-process-pipes", "fix-v2r1"), ("hackbench-process-pipes",
                                                                "vanilla"),
                      ("tbench4", "fix-v2r1"), ("tbench4", "vanilla")]
    fix = next(link.run for link in original if link.run.label == "fix-v2r1"
               and link.run.params == {"clients": 4})
    hmean = PublishedSummary.objects.get(run=fix)
    assert (hmean.statistic, hmean.value, hmean.significant) == ("hmean", 1712.8, True)
    forwarded = links_of("mmtests-fwd@example.org")
    assert len(forwarded) == 12 and all(link.reported_in == "mmtests-1@example.org"
                                        for link in forwarded)


def test_a_reply_quoting_a_table_yields_no_table():
    text = ("On Mon, 4 Mar 2024, Mel Example wrote:\n"
            + "".join("> " + line + "\n" for line in
                      (MBOX.parent / "mmtests" / "two_blocks.txt").read_text().splitlines())
            + "\nNice, thanks.\n")
    assert find_tables(text, "Re: [PATCH v2 0/3] sched/fair") == []
    assert [t.format for t in find_tables(text, "Fwd: [PATCH v2 0/3]")] == []  # attributed

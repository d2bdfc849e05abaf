"""mbox in and out: gzip, truncation, not-an-mbox, and an export Python's mailbox reads back."""

import gzip
import mailbox

import pytest
from django.urls import reverse

from discussions import services
from discussions.importer import mbox_import
from discussions.mbox import split_mbox
from discussions.models import Post

pytestmark = pytest.mark.django_db


def read_back(data: bytes, tmp_path) -> list:
    path = tmp_path / "export.mbox"
    path.write_bytes(data)
    box = mailbox.mbox(str(path), create=False)
    try:
        return list(box)
    finally:
        box.close()


def test_export_round_trip_through_pythons_mailbox(imported, client, poster, tmp_path):
    thread = imported.threads[0]
    services.post_reply(user=poster, thread=thread, body="From the top: <ok> & ünïcode\n",
                        parent=Post.objects.get(author="Peter Example"))
    response = client.get(reverse("thread-mbox", args=[thread.pk]))
    assert response.status_code == 200 and response["Content-Type"] == "application/mbox"
    messages = read_back(response.content, tmp_path)
    stored = list(Post.objects.filter(thread=thread).in_thread_order())
    assert [m["Message-ID"].strip("<>") for m in messages] == [p.message_id for p in stored]
    assert messages[0].get_payload().startswith("Hi,\n\nthreadtest (500 iterations")
    web = messages[-1]
    assert web["In-Reply-To"] == "<1202803200.6262.1.camel@example.org>"
    assert web.get_payload(decode=True).decode("utf-8").startswith(
        "From the top: <ok> & ünïcode")
    # And the export imports again as the very same thread: nothing new.
    again = mbox_import(data=response.content, user=poster)
    assert again.imported == 0 and again.skipped == len(stored)


def test_imported_messages_are_exported_byte_for_byte(imported, client, mbox_bytes):
    response = client.get(reverse("thread-mbox", args=[imported.threads[0].pk]))
    original = {c.raw for c in split_mbox(mbox_bytes("threadtest.mbox")).chunks}
    exported = {c.raw for c in split_mbox(response.content).chunks}
    assert exported <= original and len(exported) == 6


def test_gzipped_mbox_imports_like_the_plain_one(mbox_bytes, poster):
    report = mbox_import(data=gzip.compress(mbox_bytes("threadtest.mbox")), user=poster)
    assert report.imported == 6 and report.runs_extracted == 9


def test_truncated_gzip_keeps_the_messages_it_could_read(mbox_bytes, poster):
    packed = gzip.compress(mbox_bytes("threadtest.mbox") * 1)
    report = mbox_import(data=packed[: len(packed) * 2 // 3], user=poster).as_dict()
    assert 1 <= report["imported"] < 6
    assert any("truncated" in p["reason"] for p in report["problems"])


def test_not_an_mbox_and_binary_and_empty_input_are_reported(mbox_bytes, poster):
    for data, reason in [
        (mbox_bytes("not-an-mbox.txt"), "not an mbox"),
        (b"\x00\x01\x02PK\x03\x04", "binary"),
        (b"", "empty"),
        (b"\x1f\x8bnot really gzip", "gzip"),
    ]:
        report = mbox_import(data=data, user=poster)
        assert report.imported == 0 and reason in report.problems[0]["reason"], data
    assert Post.objects.count() == 0


def test_a_single_saved_message_without_from_line_is_accepted(poster):
    data = b"From: A <a@x>\nSubject: lone\nMessage-ID: <lone@x>\n\ntime 5 ms\n"
    assert mbox_import(data=data, user=poster).imported == 1


def test_random_and_mangled_input_never_raises(poster, mbox_bytes):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    good = mbox_bytes("threadtest.mbox")

    @settings(max_examples=20, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.binary(max_size=300), st.integers(0, len(good)), st.integers(0, len(good)))
    def check(noise, cut, splice):
        for data in (noise, b"From x Mon Feb 11 10:00:00 2008\n" + noise,
                     good[:cut] + noise + good[splice:]):
            report = mbox_import(data=data, user=poster)
            assert report.imported >= 0 and isinstance(report.as_dict()["problems"], list)

    check()


def _mail(mid: str, body: str) -> str:
    return (f"From x@example.org Mon Feb 11 10:00:00 2008\nFrom: X <x@example.org>\n"
            f"Subject: s\nDate: Mon, 11 Feb 2008 10:00:00 +0000\nMessage-ID: <{mid}>\n\n{body}")


def test_a_message_without_the_blank_line_before_the_next_is_reported_by_line(poster):
    # The second message follows the first's last line directly: mboxo/mboxrd start a
    # message only after a blank line, so it stays in the first one, and the report says so.
    data = (_mail("a@x", "first body\n") + _mail("b@x", "second body\n\n")
            + _mail("c@x", "third body\n\n")).encode()
    report = mbox_import(data=data, user=poster)
    assert report.imported == 2
    [warning] = [p for p in report.problems if "envelope line" in p["reason"]]
    assert warning["message"] == "#1 <a@x>"
    assert warning["reason"].startswith("line 8: a 'From ' envelope line followed by headers")
    first = Post.objects.get(message_id="a@x")
    assert "second body" in first.body and first.notes == []  # merged as before, not noted
    assert Post.objects.get(message_id="c@x").body == "third body\n"


def test_from_lines_that_are_text_are_not_reported(poster):
    body = ("From the top:\nFrom me Mon Feb 11 10:00:00 2008 was the date\nnot a header\n"
            ">From x@example.org Mon Feb 11 10:00:00 2008\nSubject: escaped\n\n")
    report = mbox_import(data=(_mail("a@x", body) + _mail("b@x", "b\n\n")).encode(),
                         user=poster)
    assert report.imported == 2 and report.problems == []
    chunks = split_mbox((_mail("a@x", body) + _mail("b@x", "b\n")).encode()).chunks
    assert [chunk.warnings for chunk in chunks] == [[], []]

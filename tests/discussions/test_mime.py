"""MIME decoding: multipart, quoted-printable, base64, charsets, inline attachments, bad input."""

import pytest

from discussions.importer import mbox_import
from discussions.mail import parse_message, split_inline_attachments
from discussions.mbox import split_mbox
from discussions.models import Attachment, Post


def chunks_of(data: bytes):
    return {c.raw.split(b"Message-ID: <", 1)[1].split(b">", 1)[0].decode(): c
            for c in split_mbox(data).chunks if b"Message-ID: <" in c.raw}


def test_quoted_printable_latin1_body_encoded_words_and_base64_attachment(mbox_bytes):
    chunk = chunks_of(mbox_bytes("threadtest.mbox"))["200802121000.joerg@example.de"]
    message = parse_message(chunk.raw, envelope=chunk.envelope)
    assert message.author == "Jörg Beispiel" and message.author_email == "joerg@example.de"
    assert message.body.startswith("Grüße. With sched_child_runs_first=0 on 2.6.24.2")
    assert message.body.rstrip().endswith("Jörg")
    [source] = message.attachments
    assert source.filename == "threadtest.c" and source.content_type == "text/x-csrc"
    assert "__sync_fetch_and_add(&done, 1);" in source.text
    assert message.references[-1] == "20080211130000.GB2@example.net"  # folded header
    assert message.notes == []


def test_inline_attachment_markers_become_attachments():
    body = ("Good.\n\n\tIngo\n\n[-- Attachment #2: fix.patch --]\n"
            "[-- Type: text/x-patch, Encoding: 7bit, Size: 0.4K --]\n\n"
            "diff --git a/x b/x\n+new\n\n[-- Attachment #3: Type: application/pgp-signature --]\n"
            "sig\n")
    text, attachments = split_inline_attachments(body)
    assert text == "Good.\n\n\tIngo"
    assert [(a.filename, a.content_type) for a in attachments] == [
        ("fix.patch", "text/x-patch"), ("", "application/pgp-signature")]
    assert attachments[0].text == "diff --git a/x b/x\n+new"


def test_mboxrd_from_escape_is_undone_in_the_body(mbox_bytes):
    chunk = chunks_of(mbox_bytes("threadtest.mbox"))["1202803200.6262.1.camel@example.org"]
    body = parse_message(chunk.raw).body
    assert "\nFrom what I can see" in body and ">From" not in body


def test_unknown_charset_bad_bytes_and_missing_message_id_are_noted_not_fatal():
    raw = (b"From: =?x-unknown?q?Zo=EB?= <z@example.org>\nSubject: s\n"
           b"Content-Type: text/plain; charset=utf-8\n\nbad \xff bytes\n")
    message = parse_message(raw)
    assert "bad \ufffd bytes" in message.body
    assert message.message_id.startswith("generated-") and message.generated_id
    assert parse_message(raw).message_id == message.message_id  # stable: re-import skips it
    joined = " ".join(message.notes)
    assert "unknown charset 'x-unknown'" in joined and "not valid in utf-8" in joined
    assert "no usable Date header" in joined


def test_html_only_message_becomes_plain_text():
    raw = (b"From: a@example.org\nMessage-ID: <h@x>\nContent-Type: text/html\n\n"
           b"<p>time 5 ms<br>time 6 ms</p><script>alert(1)</script>")
    body = parse_message(raw).body
    assert "time 5 ms\ntime 6 ms" in body and "<p>" not in body


@pytest.mark.django_db
def test_broken_mbox_imports_what_it_can_and_says_why_not_the_rest(mbox_bytes, poster):
    report = mbox_import(data=mbox_bytes("broken.mbox"), user=poster).as_dict()
    assert report["imported"] == 3
    reasons = {p["message"]: p["reason"] for p in report["problems"]}
    assert "unknown charset 'x-klingon-8'" in reasons["#1 <klingon@example.org>"]
    assert "not valid in utf-8" in reasons["#2 <badutf8@example.org>"]
    assert "no mail headers" in reasons["#3"]
    truncated = [p["reason"] for p in report["problems"]
                 if p["message"] == "#4 <truncated@example.org>"]
    assert any("truncated" in reason for reason in truncated)
    post = Post.objects.get(message_id="truncated@example.org")
    assert post.body.startswith("The download stopped half way")
    assert Post.objects.get(message_id="klingon@example.org").notes


@pytest.mark.django_db
def test_attachments_are_stored_with_their_post(imported):
    names = set(Attachment.objects.values_list("filename", "content_type"))
    assert names == {("threadtest.c", "text/x-csrc"),
                     ("sched-child-runs-first.patch", "text/x-patch")}

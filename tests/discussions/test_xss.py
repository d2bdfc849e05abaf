"""Hostile text in body, subject, author, attachment names and headers is rendered inert."""

import json

import pytest
from django.urls import reverse

from discussions.importer import mbox_import
from discussions.models import Post

pytestmark = pytest.mark.django_db

PAYLOAD = "<script>alert('x')</script>"
HOSTILE_MBOX = (
    "From evil@example.org Mon Feb 11 10:00:00 2008\n"
    f"From: \"{PAYLOAD}\" <evil@example.org>\n"
    f"Subject: =?utf-8?q?=3Cscript=3Ealert(1)=3C/script=3E?= {PAYLOAD}\n"
    "Date: Mon, 11 Feb 2008 10:00:00 +0000\n"
    "Message-ID: <x\"onmouseover=alert(1)&y@evil.example.org>\n"
    "In-Reply-To: <\"><img src=x onerror=alert(2)>@evil>\n"
    "References: <a'onfocus=alert(3)@evil>\n"
    "MIME-Version: 1.0\n"
    "Content-Type: multipart/mixed; boundary=\"B\"\n"
    "\n"
    "--B\n"
    "Content-Type: text/plain; charset=utf-8\n"
    "\n"
    f"{PAYLOAD}\n"
    "> <img src=x onerror=alert(4)>\n"
    "javascript:alert(5) http://example.org/\"><svg/onload=alert(6)>\n"
    "--B\n"
    "Content-Type: text/x-csrc\n"
    f"Content-Disposition: attachment; filename=\"{PAYLOAD}.c\"\n"
    "\n"
    "int main() { return 1 < 2 && \"</pre><script>alert(7)</script>\"; }\n"
    "--B--\n"
).encode()


def assert_inert(html: str):
    assert "<script>alert" not in html and "<img src=x" not in html and "<svg" not in html
    assert 'href="javascript' not in html
    assert "onmouseover=alert(1)&y" not in html  # an id inside an attribute stays encoded


@pytest.fixture
def hostile(poster):
    report = mbox_import(data=HOSTILE_MBOX, user=poster)
    assert report.imported == 1
    return Post.objects.get()


def test_thread_message_and_list_pages_render_hostile_mail_inert(client, hostile):
    pages = [
        client.get(hostile.thread.get_absolute_url()),
        client.get(hostile.thread.get_absolute_url(), {"view": "flat"}),
        client.get(hostile.get_absolute_url()),
        client.get(reverse("thread-list")),
    ]
    for response in pages:
        assert response.status_code == 200
        assert_inert(response.content.decode())
    html = pages[2].content.decode()
    assert "&lt;svg/onload=alert(6)&gt;" in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html  # body, author, subject
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;.c" in html  # attachment name
    assert "&lt;/pre&gt;&lt;script&gt;alert(7)" in html  # attachment content


def test_raw_source_and_attachment_download_are_never_html(client, hostile):
    raw = client.get(f"{hostile.get_absolute_url()}raw/")
    assert raw["Content-Type"] == "text/plain; charset=utf-8"
    assert raw["X-Content-Type-Options"] == "nosniff"
    download = client.get(f"{hostile.get_absolute_url()}attachments/1/")
    assert download["Content-Type"] == "application/octet-stream"
    assert "<" not in download["Content-Disposition"] and "script" in download[
        "Content-Disposition"]


def test_hostile_subject_and_body_posted_through_the_api(api_client, client):
    created = api_client.post("/api/v1/threads/", json.dumps(
        {"subject": f"{PAYLOAD}\r\nBcc: victim@example.org", "body": PAYLOAD}),
        content_type="application/json").json()
    assert "\n" not in created["subject"]  # no header injection into exports or mails
    html = client.get(created["url"]).content.decode()
    assert_inert(html)
    mbox = client.get(f"/threads/{created['id']}.mbox").content
    assert b"\nBcc:" not in mbox


def test_import_report_page_escapes_what_it_reports(signed_in):
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = signed_in.post(reverse("thread-import"), {
        "file": SimpleUploadedFile("evil.mbox", HOSTILE_MBOX)})
    assert_inert(response.content.decode())

"""mbox imports run as jobs in a worker: the request stores the file and returns (201 with the
contract's body when the worker finishes within SCHEDBENCH_IMPORT_WAIT, else 202 with a status
URL); the status and the page show progress; follower mail goes through a task."""

import gzip

import pytest
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from discussions import services
from discussions.models import ImportJob, Post, Thread
from tests.conftest import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def many_messages(count: int) -> bytes:
    """`count` short messages in threads of ten."""
    out = []
    for n in range(count):
        root = n - n % 10
        headers = [f"From user{n % 7}@example.org Mon Feb 11 10:{n % 60:02d}:00 2008",
                   f"From: User {n % 7} <user{n % 7}@example.org>",
                   f"Subject: {'Re: ' if n != root else ''}thread {root}",
                   "Date: Mon, 11 Feb 2008 10:00:00 +0000", f"Message-ID: <m{n}@bulk.example>"]
        if n != root:
            headers.append(f"In-Reply-To: <m{n - 1}@bulk.example>")
        out.append("\n".join(headers) + f"\n\nmessage {n}\n\n")
    return "".join(out).encode()


def upload(client, data: bytes, name="list.mbox"):
    return client.post("/api/v1/threads/import/", {"file": SimpleUploadedFile(name, data)})


@pytest.fixture
def no_eager(_tasks_in_process):
    _tasks_in_process.conf.task_always_eager = False


def test_an_unfinished_import_answers_202_and_its_status_url(api_client, settings, no_eager,
                                                             mbox_bytes, other_user):
    settings.IMPORT_WAIT_SECONDS = 0  # no worker here: the job stays queued
    response = upload(api_client, mbox_bytes("threadtest.mbox"))
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "queued" and set(body) >= {"id", "url", "status", "progress"}
    job = ImportJob.objects.get(pk=body["id"])
    assert job.file.read() == mbox_bytes("threadtest.mbox")  # the file is stored first
    status = api_client.get(body["url"])
    assert status.status_code == 200 and status.json()["result"] is None
    assert not Post.objects.exists()
    stranger = Client()
    stranger.force_login(other_user)
    assert stranger.get(body["url"]).status_code == 404  # only the owner sees it
    assert stranger.get(reverse("thread-import-detail", args=[job.pk])).status_code == 404


def test_a_finished_import_answers_the_contract_plus_the_job(api_client, mbox_bytes):
    response = upload(api_client, mbox_bytes("threadtest.mbox"))
    assert response.status_code == 201
    body = response.json()
    assert body["runs_extracted"] == 9 and body["threads"][0]["posts"] == 6
    assert body["job"]["status"] == "succeeded"
    status = api_client.get(body["job"]["url"]).json()
    assert status["status"] == "succeeded" and status["result"]["imported"] == 6


def test_an_import_over_the_size_limit_is_a_413(api_client, settings):
    settings.MAX_UPLOAD_MB = 1
    response = upload(api_client, b"x" * (1024 * 1024 + 1))
    assert response.status_code == 413 and "limit" in response.json()["error"]
    assert not ImportJob.objects.exists()


def test_progress_is_reported_stage_by_stage(api_client, monkeypatch):
    from discussions import importjobs

    stages = []
    real = importjobs._progress

    def recording(job_id):
        report = real(job_id)

        def both(stage, done, total):
            stages.append((stage, done, total))
            report(stage, done, total)
        return both

    monkeypatch.setattr(importjobs, "_progress", recording)
    data = gzip.compress(many_messages(120))
    assert upload(api_client, data, "bulk.mbox.gz").status_code == 201
    assert [s for s, _, _ in stages][:2] == ["reading", "storing messages"]
    assert ("storing messages", 0, 120) in stages


def test_an_import_that_crashes_fails_its_job_and_stores_nothing(api_client, monkeypatch,
                                                                  caplog):
    """A bug deep in the import (here: writing the posts raises, after their threads were
    made) must not leave the job running forever: the job fails with the exception's name,
    and the one transaction leaves no post and no thread behind."""
    from discussions import importer

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(importer, "_posts_insert", broken)
    response = upload(api_client, many_messages(30))
    job = ImportJob.objects.get()
    assert job.status == "failed", (response.status_code, job.status)
    assert "RuntimeError" in job.error and "nothing was stored" in job.error
    assert Post.objects.count() == 0 and Thread.objects.count() == 0
    assert "mbox import job" in caplog.text


def test_follower_mail_is_sent_by_a_task(other_user, poster, monkeypatch):
    from discussions import notifications

    other_user.email = "jan@example.com"
    other_user.save()
    thread = services.thread_create(user=poster, subject="yield", body="first")
    services.thread_follow(user=other_user, thread=thread, follow=True)
    sent_by_task = []
    real = notifications.post_mail_send
    monkeypatch.setattr(notifications, "post_mail_send",
                        lambda **kw: sent_by_task.append(kw) or real(**kw))
    services.post_reply(user=poster, thread=thread, body="numbers")
    assert [m.to for m in mail.outbox] == [["jan@example.com"]]
    assert sent_by_task and sent_by_task[0]["post_id"] == Post.objects.latest("id").pk


@pytest.mark.worker
@pytest.mark.slow
def test_ten_thousand_messages_leave_the_request_and_a_worker_imports_them(
        api_client, settings, no_eager, celery_worker_factory):
    settings.IMPORT_WAIT_SECONDS = 1
    response = upload(api_client, many_messages(10_000), "big.mbox")
    assert response.status_code == 202, response.content  # answered long before any timeout
    url = response.json()["url"]
    celery_worker_factory()
    seen = set()

    def finished():
        job = api_client.get(url).json()
        seen.add((job["progress"]["stage"], job["status"]))
        return job["status"] not in ("queued", "running") and job

    job = wait_until(finished, timeout=300, interval=0.5, what="the import to finish")
    assert job["status"] == "succeeded", job["error"]
    assert job["result"]["imported"] == 10_000 and Post.objects.count() == 10_000
    assert Thread.objects.count() == 1000
    assert any(status == "running" for _, status in seen)  # progress was visible meanwhile


def test_mbox_imports_have_their_own_hourly_limit(api_client, client, api_user, settings,
                                                  mbox_bytes):
    """An import brings a whole archive: it is not counted as posts written, but one user may
    start only DISCUSSIONS_IMPORTS_PER_HOUR of them an hour, by the API or the page."""
    settings.DISCUSSIONS_IMPORTS_PER_HOUR = 2
    assert upload(api_client, many_messages(3)).status_code == 201
    assert upload(api_client, mbox_bytes("threadtest.mbox")).status_code == 201
    refused = upload(api_client, many_messages(5))
    assert refused.status_code == 429 and "2 mbox imports an hour" in refused.json()["error"]
    assert ImportJob.objects.count() == 2
    client.force_login(api_user)
    page = client.post("/threads/import/",
                       {"file": SimpleUploadedFile("list.mbox", many_messages(5))})
    assert page.status_code == 429 and b"mbox imports an hour" in page.content
    assert ImportJob.objects.count() == 2

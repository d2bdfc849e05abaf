"""Trace uploads above TRACE_INLINE_KB are ingested by a real Celery worker: the request stores
the file and answers 201 with the contract's body when the worker finishes within
SCHEDBENCH_IMPORT_WAIT, else 202 with a job whose status shows progress and, at the end, that
same body as `result`. A refused trace is recorded on its job; the worker carries on."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bench.trace_ingest import write_trace
from tests.conftest import wait_until
from traces import jobs
from traces.models import Trace, TraceJob

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker, pytest.mark.slow]
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"
BURN = (FIXTURES / "ftrace_burn.trace").read_bytes()


@pytest.fixture(autouse=True)
def _to_the_worker(settings):
    settings.TRACE_INLINE_KB = 0


def post(client, content: bytes, name="trace.txt"):
    return client.post("/api/v1/traces/", {"file": SimpleUploadedFile(name, content)})


def test_a_trace_ingested_within_the_wait_answers_201_from_the_worker(
        api_client, settings, celery_worker_factory):
    settings.IMPORT_WAIT_SECONDS = 60
    celery_worker_factory()
    response = post(api_client, BURN, "burn.trace")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["events"], body["cpus"], body["format"]) == (1342, 2, "ftrace")
    assert body["url"].endswith(f"/traces/{body['id']}/") and body["api_url"].startswith("http")
    job = TraceJob.objects.get()
    assert job.trace_id == body["id"] and job.status == "succeeded"
    assert not job.file  # the artifact keeps the bytes; the job's copy is gone
    assert Trace.objects.get().artifact.file.read() == BURN
    assert api_client.get(f"/api/v1/traces/jobs/{job.pk}/").json()["result"] == body


def test_a_big_trace_answers_202_and_its_job_shows_progress_then_the_201_body(
        api_client, client, api_user, settings, celery_worker_factory, tmp_path):
    settings.IMPORT_WAIT_SECONDS = 0
    path = tmp_path / "big.trace"
    events = write_trace(path, 600_000)  # parsing takes a few progress ticks, compiled or not
    response = post(api_client, path.read_bytes(), "big.trace")
    assert response.status_code == 202, response.content
    queued = response.json()
    assert set(queued) == {"id", "url", "page", "status", "progress"}
    assert queued["status"] == "queued" and queued["progress"]["total"] == path.stat().st_size
    client.force_login(api_user)
    page = client.get(queued["page"])
    assert page.status_code == 200 and b'id="trace-job-progress"' in page.content
    celery_worker_factory()
    seen = []

    def finished():
        job = api_client.get(queued["url"]).json()
        seen.append((job["status"], job["progress"]["stage"], job["progress"]["done"]))
        return job["status"] not in ("queued", "running") and job

    job = wait_until(finished, timeout=600, interval=0.2, what="the trace to be ingested")
    assert job["status"] == "succeeded", job["error"]
    assert job["result"]["events"] == events
    parsing = [done for status, stage, done in seen if (status, stage) == ("running", "parsing")]
    assert any(0 < done < path.stat().st_size for done in parsing), seen  # the bar moved
    detail = api_client.get(job["result"]["api_url"]).json()
    assert detail["events"] == events
    done_page = client.get(queued["page"]).content.decode()
    assert f'href="/traces/{job["result"]["id"]}/"' in done_page


def test_a_refused_trace_fails_its_job_with_the_line_and_the_worker_carries_on(
        api_client, settings, celery_worker_factory):
    settings.IMPORT_WAIT_SECONDS = 60
    celery_worker_factory()
    bad = BURN.splitlines(keepends=True)
    bad[40] = b"  x-1 [000] d..2. 1.000000: sched_switch: prev_comm=x prev_pid=nope\n"
    refused = post(api_client, b"".join(bad))
    assert refused.status_code == 400, refused.content
    assert refused.json()["line"] == 41 and refused.json()["field"] == "file"
    failed = TraceJob.objects.get()
    assert (failed.status, failed.error_line, bool(failed.file)) == ("failed", 41, False)
    assert not Trace.objects.exists()
    assert post(api_client, BURN).status_code == 201  # the same worker took the next one


def test_a_job_runs_once_and_a_deleted_job_is_skipped(api_client, settings, celery_queue):
    """Re-delivery after success stores no second trace; a job deleted before its worker
    gets to it is skipped without an error (no worker: the queued messages stay in this
    test's own queue)."""
    settings.IMPORT_WAIT_SECONDS = 0
    job_id = post(api_client, BURN).json()["id"]
    assert jobs.trace_job_run(job_id=job_id) == "succeeded"
    assert jobs.trace_job_run(job_id=job_id) == "skipped"
    assert Trace.objects.count() == 1
    other = post(api_client, BURN).json()["id"]
    TraceJob.objects.filter(pk=other).delete()
    assert jobs.trace_job_run(job_id=other) == "skipped"
    assert Trace.objects.count() == 1

"""One identity per result set: the same numbers posted again link to the stored run; a real
re-run (other values) is a new run. Uploads, the runs API, bulk and mail import alike."""

import io

import pytest

from benchmarks.models import MetricSummary, Run
from benchmarks.services.ingest import UploadMetadata, upload_ingest

pytestmark = pytest.mark.django_db

PASTE = "2.6.22.17: 5210 ms\n2.6.22.17: 5230 ms\n2.6.24: 10765 ms\n2.6.24: 10801 ms\n"


def upload(text: str, **metadata):
    return upload_ingest(stream=io.BytesIO(text.encode()), filename="paste.txt",
                         metadata=UploadMetadata(**{"benchmark": "threadtest", "machine": "box",
                                                    **metadata}),
                         source="upload")


def test_the_same_paste_uploaded_twice_links_to_the_stored_runs_and_n_stays():
    first = upload(PASTE)
    again = upload(PASTE)
    assert [r.pk for r in again.runs] == [r.pk for r in first.runs]
    assert Run.objects.count() == 2
    assert sorted(MetricSummary.objects.values_list("n", flat=True)) == [2, 2]
    assert all(r.already_stored for r in again.runs)
    assert any("already stored" in w for w in again.warnings)


def test_a_rerun_with_other_values_is_a_new_run():
    first = upload(PASTE)
    rerun = upload(PASTE.replace("10801", "10799"))
    assert rerun.runs[0].pk == first.runs[0].pk  # 2.6.22.17 block unchanged
    assert rerun.runs[1].pk != first.runs[1].pk
    assert Run.objects.count() == 3


def test_other_params_or_machine_are_other_results():
    first = upload(PASTE)
    assert upload(PASTE, params={"loops": 1000000}).runs[0].pk != first.runs[0].pk
    assert upload(PASTE, machine="other-box").runs[0].pk != first.runs[0].pk
    assert Run.objects.count() == 6


RUN = {"benchmark": "threadtest", "kernel": "2.6.24", "machine": "box",
       "params": {"loops": 1000000}, "metrics": {"time_ms": [8286, 8300]}}


def test_runs_api_returns_the_stored_run_for_the_same_result(api_client):
    first = api_client.post("/api/v1/runs/", RUN, content_type="application/json")
    again = api_client.post("/api/v1/runs/", RUN, content_type="application/json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]
    other = api_client.post("/api/v1/runs/", {**RUN, "metrics": {"time_ms": [8286, 8301]}},
                            content_type="application/json")
    assert other.status_code == 201 and other.json()["id"] != first.json()["id"]


def test_bulk_links_repeats_within_and_across_submissions(api_client):
    body = [RUN, {**RUN, "kernel": "2.6.25"}, RUN]
    first = api_client.post("/api/v1/runs/bulk/", body, content_type="application/json")
    assert first.status_code == 201, first.content
    ids = first.json()["ids"]
    assert ids[0] == ids[2] != ids[1]
    again = api_client.post("/api/v1/runs/bulk/", body[:2], content_type="application/json")
    assert again.json()["ids"] == ids[:2]
    assert Run.objects.count() == 2


def test_upload_of_a_result_the_api_stored_links_to_it(api_client):
    stored = api_client.post("/api/v1/runs/", {**RUN, "params": {}},
                             content_type="application/json")
    outcome = upload("time 8286 ms\ntime 8300 ms\n", kernel="2.6.24")
    assert outcome.runs[0].pk == stored.json()["id"]

"""REST ingestion: uploads, single runs and bulk runs; all or nothing; clear 4xx errors."""

import gzip
import hashlib
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.models import Artifact, Machine, Run, Sample

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "uploads"
MACHINE = {"name": "p4-ht", "sockets": 1, "cores_per_socket": 1, "threads_per_core": 2}


def counts():
    return Artifact.objects.count(), Run.objects.count(), Sample.objects.count()


def upload(client, content: bytes, name="out.txt", **fields):
    data = {"file": SimpleUploadedFile(name, content), **fields}
    return client.post("/api/v1/uploads/", data)


def test_upload_keeps_the_raw_bytes_and_creates_runs(api_client, settings):
    raw = (FIXTURES / "threadtest-repeats.txt").read_bytes()
    response = upload(
        api_client, raw, benchmark="threadtest", kernel="2.6.24",
        machine=json.dumps(MACHINE), params=json.dumps({"loops": 10000}),
        tunables=json.dumps({"sched_compat_yield": 0}),
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["format"] == "time-ms"
    assert body["warnings"] == ["line 3: skipped quoted line"]
    [run_body] = body["runs"]
    assert run_body["metrics"]["time_ms"]["values"] == [5210, 5300, 5190]
    run = Run.objects.get(pk=run_body["id"])
    assert run.params == {"loops": 10000} and run.tunables == {"sched_compat_yield": 0}
    assert run.machine.topology == "1x1x2" and run.parser_name == "time-ms"
    artifact = Artifact.objects.get(pk=body["artifact"])
    assert artifact.sha256 == hashlib.sha256(raw).hexdigest() and artifact.size == len(raw)
    with artifact.file.open("rb") as stored:
        assert stored.read() == raw  # verbatim, CRLF and quoted line included


def test_pasted_text_and_json_body(api_client):
    response = api_client.post(
        "/api/v1/uploads/",
        {"text": "2.6.30: 1234 ms\n2.6.30: 1250 ms\n2.6.31: 1100 ms\n", "benchmark": "threadtest",
         "machine": "p4-ht"},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    kernels = sorted(r["kernel"] for r in response.json()["runs"])
    assert kernels == ["2.6.30", "2.6.31"]


def test_dry_run_previews_and_writes_nothing(api_client):
    before = counts()
    response = upload(api_client, b"time 10 ms\ntime 11 ms\n", benchmark="t", kernel="6.6",
                      dry_run="1")
    assert response.status_code == 200
    assert response.json()["runs"][0]["id"] is None
    assert response.json()["runs"][0]["metrics"]["time_ms"]["values"] == [10, 11]
    assert counts() == before


def test_unknown_format_lists_formats_and_best_guess(api_client):
    response = upload(api_client, b"hello there\nnothing to see\n", benchmark="x", kernel="1.2.3")
    assert response.status_code == 400
    body = response.json()
    assert "format" in body["error"] and "time-ms" in body["formats"] and "best_guess" in body


def test_malformed_line_is_reported_with_its_number_and_nothing_is_written(api_client):
    before = counts()
    response = upload(api_client, b"kernel,time_ms\n2.6.24,100\n2.6.25,abc\n", name="r.csv",
                      benchmark="threadtest")
    assert response.status_code == 400
    assert response.json()["line"] == 3 and "abc" in response.json()["error"]
    assert counts() == before


def test_a_failure_after_parsing_rolls_everything_back(api_client, settings):
    before = counts()
    # Parses fine, but the second result set has no kernel and none is given: refused whole.
    response = upload(api_client, b"kernel,time_ms\n2.6.24,100\n,200\n", name="r.csv",
                      benchmark="threadtest")
    assert response.status_code == 400, response.content
    assert counts() == before
    media = Path(settings.MEDIA_ROOT)
    assert not media.exists() or not any(p.is_file() for p in media.rglob("*"))


@pytest.mark.parametrize(
    "content, message",
    [(b"", "empty"), (b"\x00\x01\x02\xff" * 100, "binary"), (b"   \n\n", "empty")],
)
def test_empty_and_binary_uploads_are_refused(api_client, content, message):
    response = upload(api_client, content, benchmark="x", kernel="1.0")
    assert response.status_code == 400 and message in response.json()["error"]


def test_too_large_is_413(api_client, settings):
    settings.MAX_UPLOAD_MB = 1
    response = upload(api_client, b"time 1 ms\n" * 120_000, benchmark="x", kernel="1.0")
    assert response.status_code == 413 and "1 MB" in response.json()["error"]


def test_gzip_is_expanded_but_a_bomb_is_refused(api_client, settings):
    settings.MAX_UPLOAD_MB = 1
    small = gzip.compress(b"time 5 ms\ntime 6 ms\n")
    response = upload(api_client, small, name="out.txt.gz", benchmark="x", kernel="1.0")
    assert response.status_code == 201, response.content
    bomb = gzip.compress(b"time 5 ms\n" * 300_000)  # 3 MB of text in a few KB
    assert len(bomb) < 100_000
    before = counts()
    response = upload(api_client, bomb, name="bomb.gz", benchmark="x", kernel="1.0")
    assert response.status_code == 413 and "decompressed" in response.json()["error"]
    assert counts() == before


def test_bad_metadata_json_is_a_400_naming_the_field(api_client):
    response = upload(api_client, b"time 5 ms\n", benchmark="x", kernel="1.0", params="{loops:1")
    assert response.status_code == 400 and response.json()["error"].startswith("params")


def test_upload_idempotency_key_returns_the_first_runs(api_client):
    first = upload(api_client, b"time 5 ms\n", benchmark="x", kernel="1.0", idempotency_key="abc")
    again = upload(api_client, b"time 5 ms\n", benchmark="x", kernel="1.0", idempotency_key="abc")
    assert first.status_code == 201 and again.status_code == 200
    assert [r["id"] for r in again.json()["runs"]] == [r["id"] for r in first.json()["runs"]]
    assert Artifact.objects.count() == 1


def test_a_replay_names_the_runs_an_upload_linked_to(api_client):
    """An upload whose result sets were all stored before owns no run; its retry must still
    answer with the runs the first answer named, not an empty list."""
    text = b"2.6.24:\ntime 5 ms\ntime 6 ms\n2.6.25:\ntime 7 ms\ntime 8 ms\n"
    stored = upload(api_client, text, benchmark="x", machine="box")
    assert stored.status_code == 201
    stored_ids = [r["id"] for r in stored.json()["runs"]]
    first = upload(api_client, text, benchmark="x", machine="box", idempotency_key="retry-me")
    again = upload(api_client, text, benchmark="x", machine="box", idempotency_key="retry-me")
    assert first.status_code == 201 and again.status_code == 200 and again.json()["replayed"]
    assert len(first.json()["warnings"]) == 2  # both linked, none stored twice
    assert [r["id"] for r in first.json()["runs"]] == stored_ids
    assert [r["id"] for r in again.json()["runs"]] == stored_ids
    assert Run.objects.count() == 2 and Artifact.objects.count() == 2


def test_writes_need_a_token_or_session(client):
    response = client.post("/api/v1/uploads/", {"text": "time 5 ms"})
    assert response.status_code == 401 and "error" in response.json()
    response = client.post("/api/v1/runs/", {}, content_type="application/json",
                           HTTP_AUTHORIZATION="Token nope")
    assert response.status_code == 401


def test_session_writes_need_csrf(api_user):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(api_user)
    form = {"text": "time 5 ms", "kernel": "1", "benchmark": "x"}
    response = browser.post("/api/v1/uploads/", form)
    assert response.status_code == 403 and "CSRF" in response.json()["error"]


RUN = {
    "benchmark": "threadtest",
    "kernel": "2.6.24-git19",
    "machine": MACHINE,
    "policy": "SCHED_OTHER",
    "params": {"loops": 1000000, "iterations": 500},
    "tunables": {"sched_child_runs_first": 1},
    "metrics": {"time_ms": [8286, 8300], "idx": {"unit": "", "values": [1.2, 1.3],
                                              "higher_is_better": True}},
    "series": {"vmstat": {"columns": ["r", "cs"], "rows": [[2, 1200], [1, 900]]}},
}


def test_create_run_and_replay_its_idempotency_key(api_client):
    payload = {**RUN, "idempotency_key": "run-1"}
    first = api_client.post("/api/v1/runs/", payload, content_type="application/json")
    assert first.status_code == 201, first.content
    again = api_client.post("/api/v1/runs/", payload, content_type="application/json")
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    detail = api_client.get(f"/api/v1/runs/{first.json()['id']}/").json()
    assert detail["metrics"]["idx"] == {"unit": "", "higher_is_better": True, "values": [1.2, 1.3]}
    assert detail["metrics"]["time_ms"]["unit"] == "ms"
    assert detail["series"]["vmstat"]["rows"] == [[2, 1200], [1, 900]]
    assert detail["machine"]["topology"] == "1x1x2"


@pytest.mark.parametrize(
    "change, message",
    [
        ({"metrics": {"time_ms": ["fast"]}}, "metrics.time_ms[0] is not a number"),
        ({"metrics": {}}, "metrics must be an object"),
        ({"params": [1, 2]}, "params must be an object"),
        ({"kernel": 2.6}, "kernel must be a string"),
        ({"benchmark": None}, "benchmark is required"),
        ({"machine": {"name": "x", "sockets": "2"}}, "machine.sockets must be an integer"),
        ({"colour": "blue"}, "unknown field(s) ['colour']"),
        ({"series": {"vmstat": {"columns": ["r"], "rows": [[1, 2]]}}}, "series.vmstat.rows[0]"),
    ],
)
def test_bad_runs_name_the_problem(api_client, change, message):
    response = api_client.post("/api/v1/runs/", {**RUN, **change}, content_type="application/json")
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert Run.objects.count() == 0


def test_non_object_body_is_a_400(api_client):
    response = api_client.post("/api/v1/runs/", [1, 2], content_type="application/json")
    assert response.status_code == 400
    response = api_client.post("/api/v1/runs/", "{nope", content_type="application/json")
    assert response.status_code == 400


def test_bulk_json_list(api_client):
    runs = [{**RUN, "kernel": k} for k in ("2.6.22", "2.6.23", "2.6.24")]
    response = api_client.post("/api/v1/runs/bulk/", runs, content_type="application/json")
    assert response.status_code == 201, response.content
    ids = response.json()["ids"]
    assert len(ids) == 3
    assert list(Run.objects.filter(pk__in=ids).values_list("kernel__version", flat=True).order_by(
        "id")) == ["2.6.22", "2.6.23", "2.6.24"]
    assert Sample.objects.filter(run_id__in=ids).count() == 12
    assert Machine.objects.count() == 1


def test_bulk_ndjson_is_all_or_nothing_and_names_the_line(api_client):
    good = json.dumps(RUN)
    bad = json.dumps({**RUN, "metrics": {"time_ms": [1, "x"]}})
    body = "\n".join([good, good, "", bad, good]) + "\n"
    response = api_client.post("/api/v1/runs/bulk/", body, content_type="application/x-ndjson")
    assert response.status_code == 400
    assert response.json()["line"] == 4 and "line 4" in response.json()["error"]
    assert Run.objects.count() == 0 and Sample.objects.count() == 0
    body = "\n".join([good, good]) + "\n"
    response = api_client.post("/api/v1/runs/bulk/", body, content_type="application/x-ndjson")
    assert response.status_code == 201 and len(response.json()["ids"]) == 2


def test_bulk_with_repeated_idempotency_keys_does_not_duplicate(api_client):
    runs = [{**RUN, "idempotency_key": "same"}, {**RUN, "idempotency_key": "same"}]
    first = api_client.post("/api/v1/runs/bulk/", runs, content_type="application/json").json()
    assert first["ids"][0] == first["ids"][1]
    again = api_client.post("/api/v1/runs/bulk/", runs, content_type="application/json").json()
    assert again["ids"] == first["ids"] and Run.objects.count() == 1


@pytest.mark.parametrize("body", ["{}", "not json", "[1]"])
def test_bulk_bad_bodies(api_client, body):
    response = api_client.post("/api/v1/runs/bulk/", body, content_type="application/json")
    assert response.status_code == 400 and response.json()["error"]


def test_ndjson_body_is_read_as_a_stream(api_client):
    lines = "".join(json.dumps({**RUN, "kernel": f"2.6.{i}"}) + "\n" for i in range(50))
    response = api_client.post("/api/v1/runs/bulk/", lines,
                               content_type="application/x-ndjson")
    assert response.status_code == 201 and len(response.json()["ids"]) == 50


def test_kernel_corrections_from_the_preview_are_applied(api_client):
    text = "2.6.24\ntime 10 ms\n\n2.6.25\ntime 9 ms\n"
    response = upload(api_client, text.encode(), benchmark="threadtest",
                      kernel_map=json.dumps({"2.6.25": "2.6.25-rc1"}))
    assert response.status_code == 201, response.content
    assert sorted(r["kernel"] for r in response.json()["runs"]) == ["2.6.24", "2.6.25-rc1"]

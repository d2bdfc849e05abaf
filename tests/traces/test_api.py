"""POST/GET /api/v1/traces/: 201 with the contract's keys, 400 with the line, all or nothing."""

import gzip
import io
import lzma
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.models import Artifact
from tests.factories import make_run
from traces.models import Trace, TraceTask

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"
BURN = (FIXTURES / "ftrace_burn.trace").read_bytes()


def post(client, content: bytes, name="trace.txt", **fields):
    return client.post("/api/v1/traces/", {"file": SimpleUploadedFile(name, content), **fields})


def test_upload_answers_the_contract_and_keeps_the_raw_file(api_client, settings):
    response = post(api_client, BURN, name="burn.trace")
    assert response.status_code == 201, response.content
    body = response.json()
    assert {"id", "url", "events", "cpus", "tasks", "duration_ms", "warnings"} <= set(body)
    assert (body["events"], body["cpus"]) == (1342, 2)
    # Line 672: postgres switches out on CPU 1 with no switch to it after tokio-rt-worker's.
    assert [w.split(" were ")[0] for w in body["warnings"]] == ["1 switch-ins", "1 switch-outs"]
    assert body["url"].endswith(f"/traces/{body['id']}/")
    assert body["duration_ms"] == pytest.approx(174.43)
    trace = Trace.objects.get(pk=body["id"])
    assert trace.artifact.file.read() == BURN
    assert TraceTask.objects.filter(trace=trace).count() == body["tasks"] == trace.tasks_count
    assert (Path(settings.MEDIA_ROOT) / "traces" / trace.data_dir / "index.json").exists()


@pytest.mark.parametrize("compress", [gzip.compress, lzma.compress])
def test_gzip_and_xz_uploads(api_client, compress):
    response = post(api_client, compress(BURN), name="burn.trace.gz")
    assert response.status_code == 201, response.content
    assert response.json()["events"] == 1342


def test_perf_and_trace_cmd_uploads_are_detected(api_client):
    for name, fmt in (("perf_burn_ns.txt", "perf"), ("tracecmd_threadtest.txt.gz", "trace-cmd")):
        response = post(api_client, (FIXTURES / name).read_bytes(), name=name)
        assert response.status_code == 201, response.content
        assert response.json()["format"] == fmt


def test_truncated_trace_is_accepted_with_a_warning(api_client):
    response = post(api_client, (FIXTURES / "truncated.trace").read_bytes())
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["events"] == 8
    assert body["warnings"] == [
        "the trace ends in the middle of line 21; read up to the last whole event (line 20)"]


def test_a_bad_line_is_a_400_with_its_line_and_nothing_is_stored(api_client, settings):
    lines = BURN.splitlines(keepends=True)
    lines[499] = b"garbage in the middle\n"
    before = Artifact.objects.count()
    response = post(api_client, b"".join(lines))
    assert response.status_code == 400
    body = response.json()
    assert (body["line"], body["field"]) == (500, "file")
    assert "garbage" in body["error"]
    assert Trace.objects.count() == 0 and Artifact.objects.count() == before
    assert not any((Path(settings.MEDIA_ROOT) / "traces").glob("*/index.json"))


def test_not_a_trace_is_a_400(api_client):
    response = post(api_client, b"time 5210 ms\ntime 5300 ms\n")
    assert response.status_code == 400
    assert response.json()["line"] == 1


def test_forced_format_and_unknown_format(api_client):
    assert post(api_client, BURN, format="perf").status_code == 400
    response = post(api_client, BURN, format="nonsense")
    assert response.status_code == 400 and response.json()["field"] == "format"
    assert post(api_client, BURN, format="ftrace").status_code == 201


def test_run_must_be_yours(api_client, api_user, django_user_model):
    mine = make_run(submitter=api_user)
    theirs = make_run(values=(1.0, 2.0), submitter=django_user_model.objects.create_user("x"))
    ok = post(api_client, BURN, run=str(mine.pk))
    assert ok.status_code == 201, ok.content
    assert Trace.objects.get(pk=ok.json()["id"]).run == mine
    refused = post(api_client, BURN, run=str(theirs.pk))
    assert refused.status_code == 403 and refused.json()["field"] == "run"
    missing = post(api_client, BURN, run="999999")
    assert missing.status_code == 400 and missing.json()["field"] == "run"
    assert Trace.objects.count() == 1


def test_upload_needs_a_login(client):
    assert post(client, BURN).status_code in (401, 403)
    assert Trace.objects.count() == 0


def test_size_limit_is_413(api_client, settings):
    settings.TRACE_MAX_UPLOAD_MB = 1
    big = BURN * 6  # 1.2 MB
    response = post(api_client, big)
    assert response.status_code == 413
    assert Trace.objects.count() == 0


def test_detail_has_the_contract_tasks(api_client, client):
    trace_id = post(api_client, (FIXTURES / "edge_cases.trace").read_bytes()).json()["id"]
    body = client.get(f"/api/v1/traces/{trace_id}/").json()
    assert {"id", "run", "events", "cpus", "duration_ms", "tasks"} <= set(body)
    tasks = {(t["pid"], t["comm"]): t for t in body["tasks"]}
    assert set(tasks) == {(500, "Web Content"), (501, "[kworker 0:1]"), (600, "Web Content"),
                          (600, "a b [c]-d")}
    web = tasks[(500, "Web Content")]
    assert web == {**web, "runtime_ms": 3.5, "switches": 2, "wakeups": 1, "migrations": 0,
                   "wait_sum_ms": 0.5, "wait_max_ms": 0.5, "wait_avg_ms": 0.5}
    assert body["lost_events"] == 17
    assert sum(body["latency_hist"]["counts"]) == 3
    busiest = client.get(f"/api/v1/traces/{trace_id}/?limit=1").json()["tasks"]
    assert [(t["pid"], t["comm"]) for t in busiest] == [(501, "[kworker 0:1]")]
    assert client.get(f"/api/v1/traces/{trace_id}/?limit=-1").json()["field"] == "limit"


def test_missing_trace_is_404(client):
    assert client.get("/api/v1/traces/424242/").status_code == 404
    assert client.get("/api/v1/traces/424242/timeline/").status_code == 404


def test_list(api_client, client):
    post(api_client, BURN, title="burn on 6.18")
    body = client.get("/api/v1/traces/").json()
    assert [t["title"] for t in body["results"]] == ["burn on 6.18"]


def test_timeline_window_and_wakeups(api_client, client):
    trace_id = post(api_client, (FIXTURES / "edge_cases.trace").read_bytes()).json()["id"]
    body = client.get(f"/api/v1/traces/{trace_id}/timeline/?start_ms=2.5&end_ms=8.5"
                      "&wakeups=1").json()
    assert body["decimated"] is False
    got = [(s["cpu"], s["pid"], s["comm"], s["start_ms"], s["end_ms"], s["state"])
           for s in body["segments"]]
    # 501's lost switch-in on CPU 0 is placed at its wakeup there (4.2 ms), not at its own
    # first line (6.0 ms)
    assert got == [(0, 501, "[kworker 0:1]", 4.2, 9.0, "D"),
                   (1, 501, "[kworker 0:1]", 0.01, 3.0, "R"),
                   (1, 600, "Web Content", 3.0, 5.0, "X"),
                   (1, 500, "Web Content", 8.0, 9.5, "S")]
    assert body["segments"][0]["reason"] == "blocked on I/O (D)"
    assert [(w["from_cpu"], w["to_cpu"], w["pid"], w["at_ms"]) for w in body["wakeups"]] == \
        [(0, 1, 500, 6.0), (1, 0, 600, 8.1)]


@pytest.mark.parametrize("query", ["start_ms=abc", "start_ms=5&end_ms=1", "end_ms=nan",
                                   "start_ms=1e300"])
def test_timeline_bad_window_is_400(api_client, client, query):
    trace_id = post(api_client, BURN).json()["id"]
    response = client.get(f"/api/v1/traces/{trace_id}/timeline/?{query}")
    assert response.status_code == 400
    assert response.json()["field"] in ("start_ms", "end_ms")


def test_upload_streams_a_file_object(api_client):
    """A large-ish upload goes to a temporary file on disk (Django's handler) and works."""
    payload = io.BytesIO(gzip.compress(BURN * 3))
    response = api_client.post("/api/v1/traces/", {"file": SimpleUploadedFile(
        "x.gz", payload.getvalue())})
    assert response.status_code == 201

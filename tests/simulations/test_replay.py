"""Replaying a stored trace on simulated kernels, and traces of simulated runs (issue 13)."""

import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from simulations.models import SimulationJob, Status
from simulations.replay_points import replay_rows
from simulations.run_traces import point_trace_attach
from simulations.services import simulation_create
from tests.conftest import wait_until
from tests.simulations.conftest import tiny_spec
from traces.models import Trace

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"
THREADTEST = FIXTURES / "ftrace_threadtest.trace.gz"
BURN = FIXTURES / "ftrace_burn.trace"


def upload(client, path: Path) -> int:
    response = client.post("/api/v1/traces/", {
        "file": SimpleUploadedFile(path.name, path.read_bytes())})
    assert response.status_code == 201, response.content
    return response.json()["id"]


def replay(client, trace_id, body):
    return client.post(f"/api/v1/traces/{trace_id}/replay/", body,
                       content_type="application/json")


def finished(job):
    job.refresh_from_db()
    return job.status not in (Status.QUEUED, Status.RUNNING) and job


@pytest.mark.django_db
def test_replay_needs_login_and_known_kernels(api_client, client):
    trace_id = upload(api_client, BURN)
    assert replay(client, trace_id, {"kernels": ["2.6.22"]}).status_code in (401, 403)
    bad = replay(api_client, trace_id, {"kernels": ["2.6.22", "linux-9"]})
    assert bad.status_code == 400
    assert bad.json()["field"] == "kernels" and "linux-9" in bad.json()["error"]
    assert replay(api_client, trace_id, {"kernels": []}).json()["field"] == "kernels"
    no_machine = replay(api_client, trace_id, {"kernels": ["2.6.22"], "machine": 999999})
    assert (no_machine.status_code, no_machine.json()["field"]) == (400, "machine")
    assert replay(api_client, 999999, {"kernels": ["2.6.22"]}).status_code == 404
    assert not SimulationJob.objects.exists()
    # The page's form: anonymous users are sent to log in, and never see the form.
    page = client.get(f"/traces/{trace_id}/").content.decode()
    assert 'id="replay-form"' not in page and "to replay this trace" in page
    response = client.post(f"/traces/{trace_id}/replay/", {"kernels": ["2.6.22"]})
    assert response.status_code == 302 and "/login/" in response["Location"]


@pytest.mark.django_db
def test_trace_page_offers_the_replay_form(client, django_user_model):
    user = django_user_model.objects.create_user("replayer", password="a-long-password-1")
    client.force_login(user)
    trace_id = upload(client, BURN)
    page = client.get(f"/traces/{trace_id}/").content.decode()
    assert 'id="replay-form"' in page and 'value="6.6-eevdf"' in page
    assert "csrfmiddlewaretoken" in page
    response = client.post(f"/traces/{trace_id}/replay/", {"kernels": ["2.6.22"]})
    job = SimulationJob.objects.get()
    assert response.status_code == 302 and response["Location"] == job.get_absolute_url()
    assert job.spec["trace"]["id"] == trace_id and job.spec["cpus"] == 2 and job.total == 1


@pytest.mark.django_db
def test_replay_page_carries_the_trace_warnings(api_client, client):
    """The recorded row comes from the trace: a trace that lost events says so on the job."""
    pages = {}
    for path in (BURN, FIXTURES / "edge_cases.trace"):
        trace_id = upload(api_client, path)
        job_id = replay(api_client, trace_id, {"kernels": ["2.6.22"]}).json()["id"]
        pages[path.name] = client.get(f"/simulations/{job_id}/").content.decode()
    # The burn recording lost one switch (line 672): its page says what was inferred, and
    # nothing about lost events.
    burn = re.findall(r'class="notice warn replay-warning">([^<]*)<', pages[BURN.name])
    assert burn and all("inferred" in warning and "lost" not in warning for warning in burn)
    lossy = pages["edge_cases.trace"]
    assert lossy.count('class="notice warn replay-warning"') >= 1 and "lost" in lossy
    Trace.objects.all().delete()  # a job outlives its trace: no warning, no error
    assert client.get(f"/simulations/{job_id}/").status_code == 200


@pytest.mark.worker
@pytest.mark.slow
def test_replay_job_shows_real_and_simulated_makespans(celery_worker_factory, api_client):
    trace_id = upload(api_client, THREADTEST)
    response = replay(api_client, trace_id, {"kernels": ["2.6.22", "6.6-eevdf"]})
    assert response.status_code == 201, response.content
    job = SimulationJob.objects.get(pk=response.json()["id"])
    assert response.json()["page"].endswith(job.get_absolute_url())
    celery_worker_factory()
    wait_until(lambda: finished(job), timeout=60, what="the replay job to finish")
    assert job.status == Status.SUCCEEDED, job.error
    rows = replay_rows(job)
    assert [row["label"] for row in rows] == ["real (recorded)", "2.6.22", "6.6-eevdf"]
    real, *simulated = rows
    assert real["makespan_ms"] == pytest.approx(224.65, abs=0.01)  # the recorded one
    for row in simulated:
        assert 0 < row["makespan_ms"] != real["makespan_ms"]
        assert row["tasks"] == real["tasks"] > 100 and row["wait_max_ms"] >= row["wait_avg_ms"]
    points = api_client.get(f"/api/v1/simulations/{job.pk}/?points=1&figure=1").json()
    assert points["figure"]["data"][0]["x"] == [row["label"] for row in rows]
    assert points["figure"]["data"][0]["y"] == [row["makespan_ms"] for row in rows]
    assert {p["result"]["kernel"] for p in points["points"]} == {"2.6.22", "6.6-eevdf"}
    page = api_client.get(job.get_absolute_url()).content.decode()
    assert 'id="replay-table"' in page and "real (recorded)" in page


@pytest.mark.worker
@pytest.mark.slow
def test_traced_simulation_gives_each_run_one_trace(celery_worker_factory, owner, client):
    job = simulation_create(spec=tiny_spec(kernels=["2.6.24"], sweep={"loops": [100000]},
                                           trace=True), owner=owner)
    assert job.spec["trace"] is True
    celery_worker_factory()
    wait_until(lambda: finished(job), timeout=60, what="the traced job to finish")
    assert job.status == Status.SUCCEEDED, job.error
    point = job.points.get()
    trace = Trace.objects.get(run_id=point.run_id)
    assert trace.format == "ftrace" and trace.events > 0 and trace.owner == owner
    assert client.get(f"/traces/{trace.pk}/").status_code == 200
    assert f"/traces/{trace.pk}/" in client.get(f"/runs/{point.run_id}/").content.decode()
    # A second delivery of the same point never adds a second trace.
    assert point_trace_attach(point_id=point.pk, result={
        "metrics": {"x": [1]}, "counters": {"events": 1}}) is None
    assert Trace.objects.filter(run_id=point.run_id).count() == 1


@pytest.mark.django_db
def test_untraced_specs_keep_their_hash(owner):
    plain = simulation_create(spec=tiny_spec(), owner=owner)
    assert "trace" not in plain.spec
    assert simulation_create(spec=tiny_spec(trace=False), owner=owner).spec_hash == \
        plain.spec_hash


@pytest.mark.django_db
def test_the_launch_form_asks_for_a_trace(client, owner):
    client.force_login(owner)
    assert 'name="trace"' in client.get("/simulations/new/").content.decode()
    response = client.post("/simulations/new/", {
        "workload": "threadtest", "kernels": ["2.6.24"], "repeat": "1", "machine": "2",
        "trace": "1"})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert SimulationJob.objects.get().spec["trace"] is True


@pytest.mark.django_db
def test_replay_on_a_calibrated_machine_uses_its_topology_and_costs(owner):
    from simulations.replays import replay_job_create
    from simulations.tasks import run_point
    from tests.simulations.test_on_machine import CALIBRATION, calibrated
    from traces.services import trace_ingest

    machine = calibrated(owner)
    with BURN.open("rb") as stream:
        trace = trace_ingest(stream=stream, filename=BURN.name, owner=owner)
    job = replay_job_create(trace=trace, kernels=["6.6-eevdf"], machine=str(machine.pk),
                            user=owner)
    point = job.points.get()
    assert point.spec["topology"] == "1x2x1" and point.spec["machine"] == CALIBRATION
    assert job.spec["machine"]["id"] == machine.pk
    run_point.apply(args=[point.pk])
    point.refresh_from_db()
    assert point.status == Status.SUCCEEDED, point.error
    assert point.result["topology"] == "1x2x1" and point.result["makespan_ms"] > 0
    assert point.run_id is None  # a replay stores its numbers on the point, not as a run

"""Prediction beside measurement: "predict this run" queues the run's twin on its machine, and
the machine page lists its measured runs that have a twin, predicted against measured."""

import re

import pytest

from benchmarks.models import RunSource
from benchmarks.services.calibrations import calibration_create
from benchmarks.services.catalog import machine_get_or_create
from simulations.models import SimulationJob, Status
from simulations.twins import nearest_profile, twin_spec, within
from tests.conftest import wait_until
from tests.factories import make_run

BOX = {"name": "twinbox", "cpu_model": "AMD EPYC", "arch": "x86_64", "sockets": 1,
       "cores_per_socket": 2, "threads_per_core": 1, "virtualization": "kvm"}
CALIBRATION = {"loop_ns": 0.5, "loop_memory_ns": 1.5, "thread_create_join_us": 30.0,
               "wakeup_remote_us": 40.0, "wakeup_local_us": 3.0, "context_switch_us": 1.5,
               "virtualised": True, "idle_exit_us": 0.0, "ipi_us": 20.0, "vcpu_wake_us": 5.0,
               "contention": None}
PARAMS = {"loops": 1000000, "iterations": 5, "counter": "register"}


def calibrated(owner, **values):
    machine = machine_get_or_create(spec=BOX)
    calibration_create(machine=machine, submitter=owner, kernel="6.8.0",
                       measured_at="2026-11-30T18:00:00Z", values={**CALIBRATION, **values},
                       details={"quality": {"reasons": ["2.7 other tasks runnable"]}}
                       if values.get("noisy") else {})
    return machine


@pytest.mark.parametrize("version,profile", [
    ("2.6.22.17-cfs-v24.1-smp", "2.6.22"), ("2.6.23", "2.6.23"), ("2.6.24.1-smp", "2.6.24"),
    ("2.6.25-rc1", "2.6.25"), ("2.4.31", "2.4"), ("3.2.0", "3.3"), ("5.15.0-91-generic", "3.3"),
    ("6.8.0-45-generic", "6.6-eevdf"), ("6.18.44-fc", "6.6-eevdf")])
def test_nearest_profile(version, profile):
    assert nearest_profile(version) == profile


def test_the_band():
    assert within("time_ms", 129, 100) and not within("time_ms", 131, 100)
    assert within("time_us", 71, 100) and not within("time_us", 69, 100)
    assert within("idx", 1.05, 1.2) and not within("idx", 0.9, 1.2)
    assert within("wait_us", 500, 100) is None  # no band for waits


@pytest.mark.django_db
def test_a_run_without_params_or_with_unknown_ones_has_no_twin(owner):
    machine = calibrated(owner)
    bare = make_run("6.8.0", machine=BOX, submitter=owner, params={})
    with pytest.raises(Exception, match="records no params"):
        twin_spec(bare)
    odd = make_run("6.8.0", machine=BOX, submitter=owner, params={"threads": 4})
    with pytest.raises(Exception, match="'threads' is not one"):
        twin_spec(odd)
    run = make_run("6.8.0-45-generic", machine=BOX, submitter=owner, params=PARAMS)
    assert twin_spec(run) == {"workload": "threadtest", "params": PARAMS, "kernels": ["6.6-eevdf"],
                              "machine": machine.pk, "repeat": 3,
                              "title": f"prediction of run #{run.pk}"}


@pytest.mark.django_db
def test_the_machine_page_lists_twins_with_the_band(owner, client):
    machine = calibrated(owner)
    close = make_run("6.8.0", (100.0, 102.0, 98.0), machine=BOX, submitter=owner, params=PARAMS)
    far = make_run("6.8.0", (100.0, 100.0), machine=BOX, submitter=owner,
                   params={**PARAMS, "loops": 2000000})
    lone = make_run("6.8.0", machine=BOX, submitter=owner, params={**PARAMS, "loops": 7})
    full = {"yield_in_spin": False, "head_start_us": 0, "pin": False}
    make_run("6.6-eevdf", (120.0, 125.0), machine=BOX, params={**PARAMS, **full},
             source=RunSource.SIMULATOR)
    make_run("6.6-eevdf", (250.0,), machine=BOX, params={**PARAMS, **full, "loops": 2000000},
             source=RunSource.SIMULATOR)
    page = client.get(f"/machines/{machine.pk}/").content.decode()
    table = page[page.index('id="twins-table"'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r'<tr class="twin[^"]*">(.*?)</tr>', table, re.S)
    assert len(rows) == 2  # the lone run has no twin
    by_run = {int(re.search(r">#(\d+)</a>", row)[1]): row for row in rows}
    assert set(by_run) == {close.pk, far.pk} and lone.pk not in by_run
    assert ">1.23<" in by_run[close.pk] and re.search(r"<td>yes</td>", by_run[close.pk])
    assert ">2.50<" in by_run[far.pk] and re.search(r"<td>no</td>", by_run[far.pk])
    assert "1 of 2 within" in page


@pytest.mark.worker
@pytest.mark.slow
def test_predict_this_run_queues_the_twin_and_it_lands_on_the_machine_page(
        celery_worker_factory, owner, client):
    machine = calibrated(owner, noisy=True)
    run = make_run("6.8.0-45-generic", (40.0, 41.0), machine=BOX, submitter=owner,
                   params=PARAMS)
    client.force_login(owner)
    run_page = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="predict-run-button"' in run_page and 'value="6.6-eevdf" selected' in run_page
    response = client.post(f"/runs/{run.pk}/predict/", {"kernel": "2.6.24"})
    job = SimulationJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/simulations/{job.pk}/"
    assert job.spec["machine"]["id"] == machine.pk and job.spec["kernels"] == ["2.6.24"]
    celery_worker_factory()
    wait_until(lambda: (job.refresh_from_db() or job.status not in (
        Status.QUEUED, Status.RUNNING)), timeout=90, what="the prediction to finish")
    assert job.status == Status.SUCCEEDED, job.error
    twin = job.points.get().run
    assert twin.machine_id == machine.pk and twin.params["loops"] == PARAMS["loops"]
    # the calibration's mark travels with the prediction
    assert twin.environment["simulator"]["spec"]["machine"]["noisy"] is True
    page = client.get(f"/machines/{machine.pk}/").content.decode()
    assert 'id="calibration-noisy"' in page and "2.7 other tasks runnable" in page
    assert 'id="twins-table"' in page and f'href="/runs/{twin.pk}/"' in page
    assert "noisy calibration" in page


@pytest.mark.django_db
def test_predicting_a_run_without_params_says_why(owner, client):
    calibrated(owner)
    run = make_run("6.8.0", machine=BOX, submitter=owner, params={})
    client.force_login(owner)
    response = client.post(f"/runs/{run.pk}/predict/", follow=True)
    assert "Prediction not started" in response.content.decode()
    assert not SimulationJob.objects.exists()

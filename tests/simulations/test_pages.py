"""The launch form (generated from the simulator's catalog), the job page and the jobs list."""

import pytest

import simulator
from discussions.targets import target_resolve
from simulations.models import SimulationJob

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, owner):
    client.force_login(owner)
    return client


def test_the_form_needs_a_sign_in(client):
    response = client.get("/simulations/new/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_form_offers_every_workload_param_profile_and_tunable(signed_in):
    page = signed_in.get("/simulations/new/").content.decode()
    catalog = simulator.catalog()
    for name, workload in catalog["workloads"].items():
        assert f'<option value="{name}"' in page
        for param in workload["params"]:
            assert f'name="param.{name}.{param}"' in page
    for kernel, profile in catalog["kernels"].items():
        assert f'name="kernels" value="{kernel}"' in page
        for tunable in profile["tunables"]:
            assert f'name="tunable.{tunable}"' in page
    assert 'name="param.threadtest.loops" value="1000000"' in page  # defaults pre-filled


def test_a_bad_form_is_shown_again_with_the_simulators_message(signed_in):
    response = signed_in.post("/simulations/new/", {
        "workload": "threadtest", "kernels": ["2.6.24"], "param.threadtest.iterations": "0",
        "repeat": "1", "seed": "1", "machine": "1x2x1"})
    assert response.status_code == 400
    assert b"params.iterations" in response.content and b"below the minimum 1" in response.content
    assert not SimulationJob.objects.exists()


def test_a_good_form_launches_and_lists_the_job(signed_in, owner):
    response = signed_in.post("/simulations/new/", {
        "workload": "threadtest", "kernels": ["2.6.22", "2.6.24"],
        "param.threadtest.iterations": "5", "param.threadtest.loops": "1000000",
        "sweep_axis_1": "loops", "sweep_values_1": "100000, 2000000", "sweep_axis_2": "",
        "tunable.HZ": "1000", "repeat": "3", "seed": "4", "machine": "2x2x1"})
    job = SimulationJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/simulations/{job.pk}/"
    assert job.owner == owner and job.total == 4
    assert job.spec["sweep"] == {"loops": [100000, 2000000]}
    assert job.spec["params"] == {"iterations": 5}  # the default loops is not repeated
    point = job.points.first()
    assert point.spec["tunables"]["HZ"] == 1000 and point.spec["topology"] == "2x2x1"
    page = signed_in.get(f"/simulations/{job.pk}/").content.decode()
    assert 'id="progress"' in page and 'id="cancel-button"' in page
    assert page.count('class="point-status') == 4
    listing = signed_in.get("/simulations/").content.decode()
    assert f'href="/simulations/{job.pk}/"' in listing
    assert target_resolve("simulation", str(job.pk)).obj == job  # threads can attach to it


def test_a_stranger_sees_no_cancel_button(client, owner):
    from simulations.services import simulation_create
    from tests.simulations.conftest import tiny_spec

    job = simulation_create(spec=tiny_spec(), owner=owner)
    page = client.get(f"/simulations/{job.pk}/").content.decode()
    assert 'id="progress"' in page and 'id="cancel-button"' not in page
    assert client.post(f"/simulations/{job.pk}/cancel/").status_code == 302  # to sign in
    job.refresh_from_db()
    assert job.status == "queued"

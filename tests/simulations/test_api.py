"""The /api/v1/simulations/ contract: launch, read, cancel, validation and permissions."""

import pytest
from django.test import Client

from simulations.models import SimulationJob, SimulationPoint, Status
from tests.simulations.conftest import tiny_spec

pytestmark = pytest.mark.django_db
URL = "/api/v1/simulations/"


def post(client, body):
    return client.post(URL, body, content_type="application/json")


def test_launch_answers_202_with_id_url_status(api_client, api_user):
    response = post(api_client, tiny_spec())
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "queued" and body["url"].endswith(f"{URL}{body['id']}/")
    job = SimulationJob.objects.get(pk=body["id"])
    assert job.owner == api_user and job.total == 4
    assert job.points.filter(status=Status.QUEUED).count() == 4
    read = Client().get(f"{URL}{job.pk}/").json()  # public read, no credentials
    assert read["progress"] == {"done": 0, "total": 4}
    assert read["runs"] == [] and read["comparison"] is None and read["error"] is None
    # Polling and listing give the same absolute links the launch answer gave.
    assert (read["url"], read["page"]) == (body["url"], body["page"])
    listed = Client().get(URL).json()["results"]
    assert [(j["url"], j["page"]) for j in listed] == [(body["url"], body["page"])]


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"workload": "nope"}, "workload", "valid workloads"),
    ({"kernels": ["2.6.24", "9.9"]}, "kernels", "unknown kernel '9.9'"),
    ({"params": {"iterations": 0}}, "params.iterations", "below the minimum 1"),
    ({"sweep": {"loops": [1000, -5]}}, "sweep.loops", "below the minimum 0"),
    ({"sweep": {"bogus": [1, 2]}}, "sweep.bogus", "unknown tunable 'bogus'"),
    ({"tunables": {"rr_interval": 5}}, "tunables.rr_interval", "kernel 2.6.22"),
    ({"topology": "2xx"}, "topology", "does not parse"),
    ({"repeat": "many"}, "repeat", "not an integer"),
    ({"colour": "red"}, "colour", "unknown field"),
])
def test_invalid_specs_get_400_with_the_simulators_field_errors(api_client, change, field,
                                                                 words):
    response = post(api_client, tiny_spec(**change))
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["field"] == field and field in body["fields"]
    assert words in body["error"]
    assert not SimulationJob.objects.exists()


def test_point_limit_is_stated(api_client, settings):
    settings.SIMULATION_MAX_POINTS = 3
    response = post(api_client, tiny_spec())
    assert response.status_code == 400
    body = response.json()
    assert body["limit"] == 3 and "4 points" in body["error"] and "limit is 3" in body["error"]


def test_event_limit_is_stated(api_client, settings):
    settings.SIMULATION_MAX_EVENTS = 1_000_000
    response = post(api_client, tiny_spec(max_events=200_000))
    assert response.status_code == 400
    body = response.json()
    assert body["field"] == "max_events" and body["limit"] == 1_000_000
    assert "1,600,000 events" in body["error"]  # 4 points x 2 repeats x 200,000


def test_launch_needs_a_user_or_token():
    response = post(Client(), tiny_spec())
    assert response.status_code in (401, 403)
    assert "error" in response.json()
    assert not SimulationJob.objects.exists()


def test_only_owner_or_staff_cancel(api_client, django_user_model):
    job_id = post(api_client, tiny_spec()).json()["id"]
    stranger = django_user_model.objects.create_user("stranger", password="x-long-password-9")
    other = Client()
    other.force_login(stranger)
    denied = other.post(f"{URL}{job_id}/cancel/")
    assert denied.status_code == 403 and "owner" in denied.json()["error"]
    assert SimulationJob.objects.get(pk=job_id).status == Status.QUEUED
    assert Client().post(f"{URL}{job_id}/cancel/").status_code in (401, 403)
    staff = django_user_model.objects.create_user("staff", password="x-long-password-9",
                                                  is_staff=True)
    other.force_login(staff)
    done = other.post(f"{URL}{job_id}/cancel/")
    assert done.status_code == 200 and done.json()["status"] == "cancelled"
    assert not SimulationPoint.objects.filter(job_id=job_id).exclude(
        status=Status.CANCELLED).exists()


def test_owner_cancels_through_the_api(api_client):
    job_id = post(api_client, tiny_spec()).json()["id"]
    response = api_client.post(f"{URL}{job_id}/cancel/")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"

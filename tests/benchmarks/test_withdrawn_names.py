"""Names only withdrawn runs use (a misread upload taken back: benchmark `stress-ng: metrc: cpu
969`, kernel `(secs)`) leave the home page and the API's lists; names no run uses stay."""

import pytest
from django.test import Client
from django.urls import reverse

from benchmarks.models import Kernel
from benchmarks.services.catalog import kernel_get_or_create, machine_get_or_create
from benchmarks.services.tokens import token_create
from tests.factories import CORE2, make_run

pytestmark = pytest.mark.django_db

MISREAD_MACHINE = {**CORE2, "name": "misread box", "cpu_model": "Misread CPU"}


def names(client: Client, path: str, key: str) -> list[str]:
    response = client.get(path)
    assert response.status_code == 200
    body = response.json()
    return [item[key] for item in body.get("results", body)]


def test_withdrawing_misread_runs_takes_their_names_off_the_lists(django_user_model):
    owner = django_user_model.objects.create_user("owner")
    kept = make_run("2.6.24", [8900.0, 8950.0], submitter=owner)
    misread = [make_run("(secs)", [969.0], benchmark="stress-ng: metrc: cpu 969",
                        machine=MISREAD_MACHINE, submitter=owner),
               make_run("(real time) (usr+sys time)", [1.0], benchmark="stress-ng: metrc: cpu 969",
                        machine=MISREAD_MACHINE, submitter=owner)]
    # A kernel a run of the kept benchmark also uses stays when one of its runs is withdrawn.
    shared = make_run("2.6.24", [8800.0], submitter=owner)
    kernel_get_or_create(version="2.6.25")  # a bisection's end: no run yet, listed
    machine_get_or_create(spec={**CORE2, "name": "calibrated only", "cpu_model": "Other"})
    _, key = token_create(user=owner, name="t")
    api = Client(HTTP_AUTHORIZATION=f"Token {key}")
    home = Client().get(reverse("home")).content.decode()
    assert "stress-ng: metrc: cpu 969" in home and "misread box" in home

    for run in [*misread, shared]:
        assert api.delete(f"/api/v1/runs/{run.pk}/").status_code == 204

    home = Client().get(reverse("home")).content.decode()
    assert "stress-ng: metrc: cpu 969" not in home and "misread box" not in home
    assert "calibrated only" in home and kept.machine.name in home
    anonymous = Client()
    assert names(anonymous, "/api/v1/kernels/", "version") == ["2.6.24", "2.6.25"]
    assert names(anonymous, "/api/v1/benchmarks/", "slug") == ["threadtest"]
    assert "misread box" not in names(anonymous, "/api/v1/machines/", "name")
    assert "calibrated only" in names(anonymous, "/api/v1/machines/", "name")
    # Cited by address, a withdrawn run's kernel still answers; a restore brings it back.
    assert anonymous.get("/api/v1/kernels/(secs)/").status_code == 200
    staff = django_user_model.objects.create_user("admin", is_staff=True)
    Client(HTTP_AUTHORIZATION=f"Token {token_create(user=staff, name='s')[1]}").post(
        f"/api/v1/runs/{misread[0].pk}/restore/")
    assert "(secs)" in names(anonymous, "/api/v1/kernels/", "version")
    assert Kernel.objects.filter(version="(real time) (usr+sys time)").exists()


@pytest.mark.parametrize("count", [2, 20])
def test_api_lists_query_count_does_not_grow_with_runs(client, django_assert_num_queries, count):
    for i in range(count):
        make_run(f"2.6.{i}", [100 + i], benchmark=f"bench{i}")
    for path, queries in (("/api/v1/kernels/", 2), ("/api/v1/machines/", 2),
                          ("/api/v1/benchmarks/", 3)):  # count, page (+ metrics)
        with django_assert_num_queries(queries):
            assert client.get(path).status_code == 200

"""Refusals a newcomer meets name the real problem (issue 23), and flows end in a next step:
each test reads the message it checks."""

import pytest

from benchmarks.comparisons.spec import parse_spec
from benchmarks.models import Comparison, Run
from benchmarks.services.comparisons import comparison_create

pytestmark = pytest.mark.django_db


def test_an_over_long_kernel_heading_in_a_paste_says_so_with_its_line(api_client):
    text = "2.6.24-" + "x" * 293 + "\ntime 100 ms\ntime 110 ms\n"
    response = api_client.post("/api/v1/uploads/", {"benchmark": "threadtest", "text": text,
                                                    "dry_run": "1"})
    assert response.status_code == 400
    body = response.json()
    assert body["line"] == 1
    assert "kernel of 300 characters" in body["error"] and "at most 200" in body["error"]
    assert "does not name one" not in body["error"]
    assert not Run.objects.exists()


def test_a_bearer_header_is_told_to_use_token(api_client):
    response = api_client.get("/api/v1/runs/", HTTP_AUTHORIZATION="Bearer sbt_whatever")
    assert response.status_code == 401
    assert "Token <key>" in response.json()["error"]
    assert "Bearer" in response.json()["error"]


def test_saving_the_same_comparison_twice_gives_one_permalink(api_client):
    for kernel, values in (("2.6.22", [100, 110]), ("2.6.24", [150, 160])):
        api_client.post("/api/v1/runs/", {"benchmark": "threadtest", "kernel": kernel,
                                          "metrics": {"time_ms": values}},
                        content_type="application/json")
    spec = {"filters": {"benchmark": "threadtest"}, "x": "kernel", "title": "same"}
    first = comparison_create(spec=parse_spec(spec))
    again = comparison_create(spec=parse_spec(spec))
    assert again.pk == first.pk and Comparison.objects.count() == 1
    retitled = comparison_create(spec=parse_spec({**spec, "title": "another title"}))
    assert retitled.slug != first.slug


def test_bisect_this_on_a_finding_shows_the_findings_values(client, django_user_model):
    from benchmarks.models import Benchmark, Kernel, Machine, Metric
    from regressions.models import Regression

    user = django_user_model.objects.create_user("bisector", password="a-long-password-1")
    client.force_login(user)
    benchmark = Benchmark.objects.create(name="threadtest")
    finding = Regression.objects.create(
        benchmark=benchmark, machine=Machine.objects.create(name="core2-duo-laptop"),
        metric=Metric.objects.create(benchmark=benchmark, name="time_ms", unit="ms"),
        good=Kernel.objects.create(version="2.6.22"), bad=Kernel.objects.create(version="2.6.24"),
        params={"loops": 1000000}, change=2.1)
    page = client.get(f"/bisect/new/?regression={finding.pk}").content.decode()
    for shown in ('value="2.6.22"', 'value="2.6.24"', 'value="threadtest"',
                  'value="core2-duo-laptop"', 'value="time_ms"', "loops=1000000"):
        assert shown in page
    missing = client.get("/bisect/new/?regression=999999").content.decode()
    assert "There is no finding #999999" in missing

"""Durable copies of frozen permalinks, and what is answered when the database fails."""

import pytest
from django.db import OperationalError

from benchmarks.comparisons import views
from benchmarks.comparisons.pagecache import frozen_files, frozen_pages
from benchmarks.comparisons.spec import parse_spec
from benchmarks.services.comparisons import comparison_create
from tests.factories import make_run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def comparison():
    runs = [make_run("2.6.22", [3300.0, 3310.0]), make_run("2.6.24", [8900.0, 8950.0])]
    return comparison_create(spec=parse_spec({"title": "durable", "runs": [r.pk for r in runs],
                                              "x": "kernel"}))


@pytest.fixture
def database_down(monkeypatch):
    def unreachable(*args, **kwargs):
        raise OperationalError("connection refused")

    def down():
        frozen_pages.clear_memory()
        monkeypatch.setattr(views, "_frozen", unreachable)
        monkeypatch.setattr(frozen_pages, "version", unreachable)
    return down


def test_exports_are_kept_at_freeze_time_and_pages_at_first_render(comparison, client):
    assert frozen_files.has(comparison.slug, "json") and frozen_files.has(comparison.slug, "csv")
    assert not frozen_files.has(comparison.slug, "html")
    json_bytes = client.get(f"/c/{comparison.slug}.json").content
    assert frozen_files.read(comparison.slug, "json") == json_bytes
    page = client.get(f"/c/{comparison.slug}/").content
    assert frozen_files.read(comparison.slug, "html") == page


def test_a_failing_database_serves_the_copies(comparison, client, database_down):
    before = {suffix: client.get(f"/c/{comparison.slug}{suffix}")
              for suffix in ("/", ".json", ".csv", ".txt")}
    database_down()
    for suffix, answer in before.items():
        during = client.get(f"/c/{comparison.slug}{suffix}")
        assert during.status_code == 200 and during.content == answer.content, suffix
        assert during["Content-Type"] == answer["Content-Type"], suffix
    assert client.get(f"/c/{comparison.slug}.csv")["Content-Disposition"].startswith(
        "attachment")


def test_without_a_copy_the_outage_is_a_503(client, database_down):
    database_down()
    page = client.get("/c/never-seen/")
    assert page.status_code == 503 and page["Retry-After"] == "30"
    assert b"Back in a moment" in page.content
    api_style = client.get("/c/never-seen.json")
    assert api_style.status_code == 503


def test_slugs_cannot_leave_the_store():
    with pytest.raises(ValueError):
        frozen_files.path("../etc", "html")
    assert frozen_files.read("../../x", "json") is None

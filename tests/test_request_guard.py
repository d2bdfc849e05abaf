"""Requests no view should see: a NUL byte in the path or query, and /api/ paths with no route."""

import pytest

pytestmark = pytest.mark.django_db

API_ERROR_KEYS = {"error", "field", "line"}


@pytest.mark.parametrize("url", ["/api/v1/comparisons/a%00b/", "/api/v1/comparisons/%00/",
                                 "/api/v1/runs/%00/"])
def test_a_nul_in_an_api_path_is_the_api_json_404(client, url):
    response = client.get(url)
    assert response.status_code == 404
    assert set(response.json()) == API_ERROR_KEYS
    assert "NUL" in response.json()["error"]


@pytest.mark.parametrize("url", ["/m/a%00b/", "/m/%00/raw/", "/m/x%00@y/attachments/1/",
                                 "/c/a%00b/", "/c/a%00b.json"])
def test_a_nul_in_a_page_path_is_a_404_before_any_query(client, url, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get(url)
    assert response.status_code == 404


@pytest.mark.parametrize("url", ["/api/v1/nope/", "/api/nope", "/api/v1/runs/1/nope/",
                                 "/api/"])
def test_an_unknown_api_path_answers_the_api_json_404(client, url):
    response = client.get(url)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert set(response.json()) == API_ERROR_KEYS
    assert url in response.json()["error"]


def test_the_api_own_404_keeps_its_message(client):
    response = client.get("/api/v1/comparisons/no-such-slug/")
    assert response.status_code == 404
    assert "no-such-slug" in response.json()["error"]

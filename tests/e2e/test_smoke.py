"""A person's first look: home page, a filtered run list, a run with its chart drawn."""

import pytest

from tests.factories import make_run

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_browse_from_home_to_a_drawn_chart(page):
    make_run("2.6.22", [3332, 3350, 3301])
    target = make_run("2.6.24", [8953, 9001, 8870])
    page.goto("/")
    assert "Scheduler benchmark results" in page.text_content("h1")
    assert page.locator("table.runs tbody tr").count() == 2

    page.goto("/runs/?kernel=2.6.24")
    rows = page.locator("table.runs tbody tr")
    assert rows.count() == 1
    assert rows.first.locator("td.kernel").text_content() == "2.6.24"

    rows.first.locator("a").first.click()
    page.wait_for_url(f"**/runs/{target.pk}/")
    page.wait_for_selector("#samples-chart[data-rendered='1']", timeout=20000)
    assert page.locator("#samples-chart .main-svg").count() >= 1
    assert page.locator("#samples-chart .scatterlayer .trace").count() >= 2
    assert page.js_errors == []

"""Accessibility and comfort (issue 15): a skip link, a visible focus ring, charts with a name
and their numbers as a table, a dark scheme the charts follow, an embed that fills its frame,
a favicon."""

import pytest

from benchmarks.comparisons.spec import parse_spec
from benchmarks.services.comparisons import comparison_create
from tests.factories import make_run

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def comparison():
    runs = [make_run(kernel, [base + i for i in range(3)], params={"loops": loops})
            for kernel, base in (("2.6.22", 3300.0), ("2.6.24", 8900.0))
            for loops in (1000, 10000)]
    return comparison_create(spec=parse_spec({"title": "by loops", "runs": [r.pk for r in runs],
                                              "x": "param.loops", "series": "kernel"}))


def test_skip_link_focus_ring_and_favicon(page, comparison):
    page.goto("/")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    assert page.is_visible(".skip-link")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"  # :focus-visible draws a ring
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "content"
    icon = page.get_attribute("link[rel=icon]", "href")
    assert page.request.get(icon).status == 200


def test_a_chart_has_a_name_and_its_numbers_as_a_table(page, comparison):
    page.goto(f"/c/{comparison.slug}/")
    page.wait_for_selector("#comparison-chart[data-rendered='1']")
    chart = page.locator("#comparison-chart")
    assert chart.get_attribute("role") == "figure"
    assert chart.get_attribute("aria-label").startswith("by loops")
    assert chart.get_attribute("aria-describedby") == "comparison-chart-data"
    rows = page.locator("#comparison-chart-data tbody tr")
    assert rows.count() == 4
    page.click("#comparison-chart-data summary")
    first = rows.first.locator("td").all_text_contents()
    assert first[:3] == ["2.6.22", "1000", "3301"]  # series, x, the plotted median
    assert page.js_errors == []


def test_dark_scheme_reaches_the_page_and_the_charts(browser, live_server, comparison):
    context = browser.new_context(base_url=live_server.url, color_scheme="dark")
    page = context.new_page()
    page.goto(f"/c/{comparison.slug}/")
    page.wait_for_selector("#comparison-chart[data-rendered='1']")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(17, 21, 28)"
    assert page.evaluate("document.getElementById('comparison-chart').layout.paper_bgcolor") \
        == "#191e27"
    page.emulate_media(color_scheme="light")  # the reader switches: the chart follows
    deadline = 50
    while deadline and page.evaluate(
            "document.getElementById('comparison-chart').layout.paper_bgcolor") == "#191e27":
        page.wait_for_timeout(100)
        deadline -= 1
    assert page.evaluate("document.getElementById('comparison-chart').layout.paper_bgcolor") \
        == "#ffffff"
    context.close()


def test_the_embed_fills_its_frame(browser, live_server, comparison):
    context = browser.new_context(base_url=live_server.url,
                                  viewport={"width": 900, "height": 900})
    page = context.new_page()
    page.goto(f"/c/{comparison.slug}/embed")
    page.wait_for_selector("#comparison-chart[data-rendered='1'] .main-svg")
    height = page.evaluate("document.querySelector('#comparison-chart .main-svg')"
                           ".getBoundingClientRect().height")
    assert height > 800
    assert page.evaluate("document.documentElement.scrollWidth") <= 900
    context.close()

"""From a finding on /regressions/ to its page and on to a ready comparison, in Chromium."""

import pytest

from regressions.models import Regression
from regressions.services import regressions_detect_all
from tests.regressions.conftest import step_series

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_finding_to_its_comparison(page, live_server):
    step_series()
    regressions_detect_all()
    finding = Regression.objects.get()
    page.goto("/regressions/")
    chart = f"#finding-chart-{finding.pk}"
    page.wait_for_selector(f"{chart}[data-rendered='1']")
    assert page.locator(f"{chart} .scatterlayer .point").count() == 6
    assert page.locator(f"{chart} .shapelayer path").count() >= 1  # the marked change
    page.click(f"#finding-{finding.pk} a.finding-link")
    page.wait_for_url(f"**/regressions/{finding.pk}/")
    assert "2.6.23" in page.inner_text(".finding-numbers")
    page.wait_for_selector(f"{chart}[data-rendered='1']")  # the detail page draws it too
    page.click("button.open-comparison")
    page.wait_for_url("**/c/*/")
    page.wait_for_selector("#comparison-chart[data-rendered='1']")
    assert page.locator("#comparison-chart .scatterlayer .point").count() >= 2
    assert page.js_errors == []

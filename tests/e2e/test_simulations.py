"""Launch a small sweep from the generated form and watch it finish in the browser."""

import re

import pytest

from benchmarks.models import Run
from simulations.models import SimulationJob

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_launch_sweep_and_watch_progress_and_chart(signed_in, celery_worker_factory):
    page = signed_in
    celery_worker_factory()
    page.goto("/simulations/new/")
    # The form comes from the simulator's catalog: every workload and profile is offered.
    assert page.locator("#workload-select option").count() >= 10
    assert page.locator("input[name=kernels][value='6.6-eevdf']").count() == 1
    assert page.input_value("input[name='param.threadtest.loops']") == "1000000"
    page.select_option("#workload-select", "threadtest")
    page.fill("input[name='param.threadtest.iterations']", "5")
    page.check("input[name=kernels][value='2.6.22']")
    page.check("input[name=kernels][value='2.6.24']")
    page.select_option("#sweep-axis-1", "loops")
    page.fill("#sweep-values-1", "100000, 1000000, 4000000")
    page.fill("#repeat-input", "2")
    page.click("#launch-button")
    page.wait_for_url(re.compile(r".*/simulations/\d+/$"))
    page.wait_for_js(
        "document.getElementById('progress-percent').textContent === '100%'", timeout=60000)
    page.wait_for_selector("#job[data-finished='succeeded']", timeout=30000)
    page.wait_for_selector("#simulation-chart[data-rendered='1']", timeout=30000)
    assert page.locator("#simulation-chart .scatterlayer .trace").count() == 2  # per kernel
    assert page.text_content("#progress-text") == "6 / 6 points"
    assert page.get_attribute("#progress-fill", "style") == "width: 100%;"
    assert page.locator("td.point-status.status-succeeded").count() == 6
    job = SimulationJob.objects.get()
    assert job.spec["sweep"] == {"loops": [100000, 1000000, 4000000]}
    assert Run.objects.filter(source="simulator").count() == 6
    assert page.is_visible("#comparison-link")
    assert page.js_errors == []


def test_a_finished_jobs_chart_on_a_phone_keeps_a_readable_plot(page, django_user_model):
    """On a phone the chart's title moves below Plotly's mode bar and its legend above the plot
    wraps: the height that takes is added to the chart, not taken from the plot (which shrank
    to a strip of ~115 px in the chart's 300 px box)."""
    from tests.e2e.site_pages import _simulate

    job = _simulate(django_user_model.objects.create_user("phone-user"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/simulations/{job.pk}/")
    page.wait_for_selector("#simulation-chart[data-rendered='1']")
    plot = page.locator("#simulation-chart .nsewdrag").bounding_box()
    bar = page.locator("#simulation-chart .modebar").bounding_box()
    title = page.locator("#simulation-chart .gtitle").bounding_box()
    assert plot["height"] >= 150, plot
    assert title["y"] >= bar["y"] + bar["height"], (title, bar)
    # A redraw (the dark scheme, a point arriving) draws the same height, not a taller one.
    height = page.evaluate("document.getElementById('simulation-chart').layout.height")
    page.emulate_media(color_scheme="dark")
    page.wait_for_timeout(500)
    assert page.evaluate("document.getElementById('simulation-chart').layout.height") == height
    assert page.js_errors == []

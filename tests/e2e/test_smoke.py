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


def test_on_a_phone_the_run_list_starts_on_its_first_screen(page):
    """Every param of every run was a filter box: the demo's 19 (threadtest's and the chatroom
    simulation's) filled a phone's first screen and pushed the first run below it. They fold
    under 'params', open when one is used."""
    from django.core.management import call_command

    call_command("load_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    chatroom = ("broadcast clients cs_us deliver_us jvm lock messages pacing rooms sock_msgs"
                " spin_loops spin_sleep_us spin_yields succession think_us working_set_bytes")
    make_run("2.6.22", [31163.0, 31000.0], benchmark="chatroom",
             params=dict.fromkeys(chatroom.split(), 1))
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/runs/")
    first_row = page.locator("table.runs tbody tr").first.bounding_box()
    assert first_row["y"] < 844 / 2, first_row
    assert not page.is_visible("input[name='param.loops']")

    page.click("details.param-filters > summary")
    page.fill("input[name='param.loops']", "10000")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**/runs/?*param.loops=10000*")
    assert page.input_value("input[name='param.loops']") == "10000"  # open: it is in use
    params = page.locator("table.runs tbody td.params").all_text_contents()
    assert params and all("loops=10000" in cell for cell in params)
    assert page.js_errors == []

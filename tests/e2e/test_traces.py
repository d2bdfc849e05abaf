"""A trace page in Chromium: the canvas timeline draws, a drag-zoom re-fetches a narrower
window, hover text names the run, wakeup arrows come on demand, the keyboard zooms, a
double-click shows the whole trace again, the histogram and the task table draw, and the
side-by-side view zooms both traces together. A hostile comm stays text."""

import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.factories import make_run
from traces.services import trace_ingest

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"


def ingest(user, name, title, run=None):
    upload = SimpleUploadedFile(name, (FIXTURES / name).read_bytes())
    with upload.open("rb") as stream:
        return trace_ingest(stream=stream, filename=name, owner=user, title=title,
                            run_id=run.pk if run else None)


def window(page, selector):
    start, end = page.get_attribute(selector, "data-window").split(",")
    return float(start), float(end)


def wait_fetches(page, count, index=0):
    page.wait_for_js(f"document.querySelectorAll('.trace-timeline')[{index}]"
                     f".dataset.fetches === '{count}'")


def drag(page, canvas, start=0.4, end=0.6):
    """Press at `start` of the canvas's width, move to `end` in steps, release."""
    box = page.locator(canvas).bounding_box()
    y = box["y"] + box["height"] / 3
    page.mouse.move(box["x"] + box["width"] * start, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * (start + end) / 2, y, steps=5)
    page.mouse.move(box["x"] + box["width"] * end, y, steps=5)
    page.mouse.up()


def hover_lanes(page, canvas, lanes, wanted=None):
    """Move the pointer along each lane's middle until the tooltip shows (containing `wanted`
    when given); its text, or None."""
    box = page.locator(canvas).bounding_box()
    left, top, right, bottom = (float(v) for v in page.get_attribute(canvas, "data-plot")
                                .split(","))
    for lane in range(lanes):
        y = box["y"] + top + (lane + 0.5) * (bottom - top) / lanes
        x = left + 1
        while x < right:
            page.mouse.move(box["x"] + x, y)
            if page.is_visible(".timeline-tip"):
                text = page.text_content(".timeline-tip")
                if wanted is None or wanted in text:
                    return text
            x += 6
    return None


def test_trace_page_zoom_wakeups_keys_sort_and_side_by_side(signed_in):
    page = signed_in
    run = make_run(submitter=page.user)
    trace = ingest(page.user, "ftrace_threadtest.trace.gz", "threadtest on 6.18", run)
    other = ingest(page.user, "ftrace_burn.trace", "burn on 6.18")
    asked = []
    page.on("request", lambda request: asked.append(request.url) if "/timeline/" in request.url
            else None)
    page.goto(f"/traces/{trace.pk}/")
    timeline, canvas = ".trace-timeline", ".trace-timeline canvas"
    page.wait_for_js("document.querySelector('.trace-timeline').dataset.ready === '1'")
    # The whole-trace window was preloaded from <head> and that very response was used.
    assert len(asked) == 1, asked
    # No chart library on this page: the timeline is our canvas.
    assert page.evaluate("typeof window.Plotly") == "undefined"
    assert page.locator(f"{timeline} .timeline-chart canvas").count() == 1
    assert int(page.get_attribute(timeline, "data-segments")) > 20
    label = page.get_attribute(canvas, "aria-label")
    assert label.startswith("Timeline of 2 CPUs, 0–") and "segments" in label
    assert page.get_attribute(canvas, "tabindex") == "0"
    first = window(page, timeline)
    assert first[0] == 0 and first[1] == pytest.approx(trace.duration_ms, abs=0.01)

    # Drag across a fifth of the canvas: trace.js asks for that window only.
    drag(page, canvas)
    wait_fetches(page, 2)
    zoomed = window(page, timeline)
    assert zoomed[1] - zoomed[0] < (first[1] - first[0]) / 3
    assert first[0] < zoomed[0] < zoomed[1] < first[1]

    text = hover_lanes(page, canvas, 2)
    assert text and "left the CPU: " in text and re.search(r"CPU [01] · ", text), text

    page.check("#wakeups-toggle")
    wait_fetches(page, 3)
    assert int(page.get_attribute(timeline, "data-wakeups")) > 0
    assert window(page, timeline) == pytest.approx(zoomed)
    text = hover_lanes(page, canvas, 2, wanted="wakes ")
    assert text and re.match(r"wakes .+-\d+ at [\d.]+ ms", text), text

    # Keyboard: "+" zooms into the middle half, then a double-click shows the whole trace.
    page.focus(canvas)
    page.keyboard.press("+")
    wait_fetches(page, 4)
    keyed = window(page, timeline)
    assert keyed[1] - keyed[0] == pytest.approx((zoomed[1] - zoomed[0]) / 2, rel=1e-3)
    assert zoomed[0] < keyed[0] < keyed[1] < zoomed[1]
    page.keyboard.press("ArrowRight")
    wait_fetches(page, 5)
    panned = window(page, timeline)
    assert panned[0] > keyed[0] and panned[1] - panned[0] == pytest.approx(keyed[1] - keyed[0],
                                                                            rel=1e-3)
    page.dblclick(canvas)
    wait_fetches(page, 6)
    assert window(page, timeline) == pytest.approx(first, abs=0.01)

    page.wait_for_selector("#latency-chart[data-rendered='1']")
    assert page.locator("#latency-chart svg rect.hist-bar").count() > 3
    assert "wakeups" in page.text_content("#latency-chart svg rect.hist-bar title")
    page.click("#task-table th:nth-child(3)")  # runtime, descending
    runtimes = page.eval_on_selector_all(
        "#task-table tbody tr td:nth-child(3)", "cells => cells.map(c => Number(c.dataset.value))")
    assert runtimes == sorted(runtimes, reverse=True) and len(runtimes) > 10
    assert page.text_content("#run-link").startswith(f"Run #{run.pk}")

    page.select_option("#compare-select", str(other.pk))
    page.click("#compare-link")
    page.wait_for_url(re.compile(rf".*/traces/{trace.pk}/vs/{other.pk}/$"))
    page.wait_for_js("Array.from(document.querySelectorAll('.trace-timeline'))"
                     ".every(el => el.dataset.ready === '1')")
    assert page.locator(".trace-timeline").count() == 2
    both = [window(page, f".trace-timeline >> nth={i}") for i in (0, 1)]
    assert both[0] == both[1]
    drag(page, ".trace-timeline >> nth=1 >> canvas")
    wait_fetches(page, 2, 0)
    wait_fetches(page, 2, 1)
    synced = [window(page, f".trace-timeline >> nth={i}") for i in (0, 1)]
    assert synced[0] == synced[1] and synced[0][1] - synced[0][0] < (both[0][1] - both[0][0]) / 3
    assert page.js_errors == []


def test_task_table_shows_the_busiest_and_fetches_the_rest(signed_in):
    from traces import selectors

    page = signed_in
    trace = ingest(page.user, "ftrace_threadtest.trace.gz", "threadtest")
    assert trace.tasks_count > selectors.TASKS_SHOWN
    page.goto(f"/traces/{trace.pk}/")
    rows = "#task-table tbody tr"
    assert page.locator(rows).count() == selectors.TASKS_SHOWN
    note = page.text_content("#tasks-note")
    assert f"{selectors.TASKS_SHOWN} busiest" in note and str(trace.tasks_count) in note
    page.click("#task-table th:nth-child(5)")  # wakeups, descending, over the busiest
    page.click("#all-tasks")
    page.wait_for_js("document.querySelector('#task-table').dataset.rows === 'all'")
    assert page.locator(rows).count() == trace.tasks_count
    assert page.text_content("#tasks-note") == f"All {trace.tasks_count} tasks are shown."
    assert not page.is_visible("#all-tasks")
    wakeups = page.eval_on_selector_all(
        "#task-table tbody tr td:nth-child(5)", "cells => cells.map(c => Number(c.dataset.value))")
    assert wakeups == sorted(wakeups, reverse=True)  # the chosen order kept over every task
    page.click("#task-table th:nth-child(3)")
    runtimes = page.eval_on_selector_all(
        "#task-table tbody tr td:nth-child(3)", "cells => cells.map(c => Number(c.dataset.value))")
    assert runtimes == sorted(runtimes, reverse=True)
    assert page.js_errors == []


def test_hostile_comm_is_only_text_in_the_tooltip(signed_in):
    evil = "<img src=x onerror=alert(1)>"
    page = signed_in
    content = (FIXTURES / "edge_cases.trace").read_text().replace("Web Content", evil).encode()
    upload = SimpleUploadedFile("evil.trace", content)
    with upload.open("rb") as stream:
        trace = trace_ingest(stream=stream, filename="evil.trace", owner=page.user, title=evil)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"/traces/{trace.pk}/")
    page.wait_for_js("document.querySelector('.trace-timeline').dataset.ready === '1'")
    text = hover_lanes(page, ".trace-timeline canvas", trace.cpus, wanted=evil)
    assert text and evil in text, text
    assert page.locator(".timeline-tip img, #task-table img, main img").count() == 0
    assert dialogs == [] and page.js_errors == []


def test_the_wheel_zooms_around_the_pointer_and_two_fingers_pinch(signed_in):
    """Issue 23: the wheel did nothing. Over the plot it zooms (plain, or Ctrl as a trackpad's
    pinch sends it) keeping the time under the pointer in place; on a touch screen two fingers
    moving apart zoom in around their middle."""
    page = signed_in
    trace = ingest(page.user, "ftrace_threadtest.trace.gz", "threadtest on 6.18")
    page.goto(f"/traces/{trace.pk}/")
    timeline, canvas = ".trace-timeline", ".trace-timeline canvas"
    page.wait_for_js("document.querySelector('.trace-timeline').dataset.ready === '1'")
    first = window(page, timeline)
    box = page.locator(canvas).bounding_box()
    left, _top, right, _bottom = (float(v) for v in page.get_attribute(canvas, "data-plot")
                                  .split(","))
    x = box["x"] + left + (right - left) * 0.25
    page.mouse.move(x, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -300)
    wait_fetches(page, 2)
    wheeled = window(page, timeline)
    assert wheeled[1] - wheeled[0] < (first[1] - first[0]) / 1.5
    # the time under the pointer (a quarter of the way in) stays a quarter of the way in
    under = first[0] + (first[1] - first[0]) * 0.25
    assert (under - wheeled[0]) / (wheeled[1] - wheeled[0]) == pytest.approx(0.25, abs=0.02)
    page.keyboard.down("Control")
    page.mouse.wheel(0, 300)
    page.keyboard.up("Control")
    wait_fetches(page, 3)
    assert window(page, timeline)[1] - window(page, timeline)[0] > wheeled[1] - wheeled[0]

    # Two touch points moving apart, as Chromium delivers them (pointer events of type touch).
    page.dblclick(canvas)
    wait_fetches(page, 4)
    before = window(page, timeline)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 2})
    y, middle = box["y"] + box["height"] / 2, box["x"] + (left + right) / 2

    def touch(kind, spread):
        points = [] if kind == "touchEnd" else [
            {"x": middle - spread, "y": y, "id": 1}, {"x": middle + spread, "y": y, "id": 2}]
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    touch("touchStart", 20)
    for spread in (40, 60, 80):
        touch("touchMove", spread)
    touch("touchEnd", 0)
    page.wait_for_timeout(500)  # the new window draws at once; its fetch follows
    pinched = window(page, timeline)
    assert pinched[1] - pinched[0] < (before[1] - before[0]) / 2

"""A trace page in Chromium: the timeline draws, a drag-zoom re-fetches a narrower window,
wakeup arrows come on demand, the task table sorts, and the side-by-side view opens."""

import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.traces.services import trace_ingest
from tests.factories import make_run

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


def test_trace_page_zoom_wakeups_sort_and_side_by_side(signed_in):
    page = signed_in
    run = make_run(submitter=page.user)
    trace = ingest(page.user, "ftrace_threadtest.trace.gz", "threadtest on 6.18", run)
    other = ingest(page.user, "ftrace_burn.trace", "burn on 6.18")
    asked = []
    page.on("request", lambda request: asked.append(request.url) if "/timeline/" in request.url
            else None)
    page.goto(f"/traces/{trace.pk}/")
    timeline = ".trace-timeline"
    page.wait_for_js("document.querySelector('.trace-timeline').dataset.ready === '1'")
    # The whole-trace window was preloaded from <head> and that very response was used.
    assert len(asked) == 1, asked
    assert page.locator(f"{timeline} .timeline-chart .bars path").count() > 20
    first = window(page, timeline)
    assert first[0] == 0 and first[1] == pytest.approx(trace.duration_ms, abs=0.01)

    # Drag across a fifth of the plot area: Plotly zooms, trace.js asks for that window only.
    box = page.locator(f"{timeline} .nsewdrag").first.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.4, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.5, y, steps=5)
    page.mouse.move(box["x"] + box["width"] * 0.6, y, steps=5)
    page.mouse.up()
    page.wait_for_js("document.querySelector('.trace-timeline').dataset.fetches === '2'")
    zoomed = window(page, timeline)
    assert zoomed[1] - zoomed[0] < (first[1] - first[0]) / 3
    assert first[0] < zoomed[0] < zoomed[1] < first[1]

    page.check("#wakeups-toggle")
    page.wait_for_js("document.querySelector('.trace-timeline').dataset.fetches === '3'")
    assert int(page.get_attribute(timeline, "data-wakeups")) > 0
    assert window(page, timeline) == pytest.approx(zoomed)

    page.wait_for_selector("#latency-chart[data-rendered='1']")
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
    assert page.js_errors == []

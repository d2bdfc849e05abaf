"""Whole-site checks on every page type with demo data (issue 15), in one browser context per
test: at a desktop (1400x900) and a phone (390x844) size, no page scrolls sideways, logs a
console error or fails a request, breaks a word between two letters, cuts a chart's title at the
chart's edges or puts it under Plotly's mode bar, or gives more than a third
of its first screen to navigation (issue 23); an axe-core scan (both sizes, and the dark scheme
at the desktop size) finds no serious or critical violation.

Set SCHEDBENCH_SHOTS=/some/dir to keep a full-page screenshot of each page at each size.
"""

import json
import os
from pathlib import Path

import pytest

from tests.e2e.site_pages import AXE_PAGES, PAGE_TYPES, site_data

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SIZES = {"desktop": (1400, 900), "phone": (390, 844)}
SHOTS = os.environ.get("SCHEDBENCH_SHOTS")


@pytest.fixture
def site(browser, live_server, django_user_model, celery_queue):
    """Demo data, and a signed-in browser context that records what went wrong on each page."""
    from django.conf import settings
    from django.test import Client

    user = django_user_model.objects.create_user("walker", password="a-long-test-password")
    data = site_data(user)
    client = Client()
    client.force_login(user)
    context = browser.new_context(base_url=live_server.url)
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "url": live_server.url,
                          "value": client.cookies[settings.SESSION_COOKIE_NAME].value}])
    page = context.new_page()
    page.problems = []
    page.on("pageerror", lambda exc: page.problems.append(f"js error: {exc}"))
    page.on("console", lambda msg: msg.type == "error" and page.problems.append(
        f"console: {msg.text}"))
    page.on("requestfailed", lambda req: page.problems.append(
        f"failed: {req.url} {req.failure}"))
    page.on("response", lambda resp: resp.status >= 400 and page.problems.append(
        f"HTTP {resp.status}: {resp.url}"))
    yield page, data
    context.close()


def open_page(page, path: str, ready: str) -> None:
    page.problems.clear()
    response = page.goto(path)
    assert response.status == 200, f"{path}: HTTP {response.status}"
    page.wait_for_selector(ready, state="attached", timeout=20000)
    # Late requests (the threads panel, a job's first poll) start right after the load event.
    page.wait_for_timeout(150)


def screenshot(page, name: str, size: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        height = min(page.evaluate("document.documentElement.scrollHeight"), 2400)
        width = page.evaluate("document.documentElement.scrollWidth")
        page.screenshot(path=f"{SHOTS}/{name}-{size}.png", full_page=True,
                        clip={"x": 0, "y": 0, "width": width, "height": height})


WIDEST = """() => [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
  .filter(e => ![...e.children].some(c => c.getBoundingClientRect().right > window.innerWidth + 1))
  .slice(0, 3).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
                   (e.className && e.className.baseVal === undefined ? '.' + e.className : ''))"""


def widest(page) -> list[str]:
    """The innermost elements that stick out to the right: what to fix."""
    return page.evaluate(WIDEST)


# Words that wrap between two of their letters ("B E N C H M A R K" down a narrow cell): every
# piece of text between spaces, hyphens, dashes, ellipses, slashes, underscores, @ and dots not in a
# number (where an identifier may end a line) must sit on one line. Pieces of a token longer
# than 24 characters (hashes, paths, commands) may break anywhere.
BROKEN_WORDS = """() => {
  const found = [], range = document.createRange();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node && found.length < 5; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest('svg, script, style, .sr-only, .js-plotly-plot')) continue;
    for (const token of node.nodeValue.matchAll(/\\S+/g)) {
      if (token[0].length > 24) continue;
      for (const piece of token[0].matchAll(/(?:[^\\-\\/_@\u2013\u2014\u2026.]|\\.(?=\\d))+/g)) {
        if (piece[0].length < 2) continue;
        const start = token.index + piece.index;
        range.setStart(node, start);
        range.setEnd(node, start + piece[0].length);
        const tops = new Set([...range.getClientRects()].filter(r => r.width > 0)
                             .map(r => Math.round(r.top)));
        if (tops.size > 1) {
          found.push(`${parent.tagName.toLowerCase()}.${parent.className}: ${piece[0]}`);
          break;
        }
      }
    }
  }
  return found;
}"""

# The share of the first screen the site header (brand, menu, search, account) takes.
NAVIGATION_SHARE = """() => {
  const header = document.querySelector('header.site');
  return header ? Math.min(header.getBoundingClientRect().bottom, innerHeight) / innerHeight : 0;
}"""


# A chart's titles (its own and its axes') drawn past its edges: SVG text does not wrap, so on a
# phone a long title was cut at its ends and a long y axis title ran over the chart's title.
CLIPPED_CHART_TEXT = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(plot => {
  const svg = plot.querySelector('.main-svg');
  if (!svg) return [];
  const edge = svg.getBoundingClientRect();
  return [...plot.querySelectorAll('.gtitle, .g-xtitle text, .g-ytitle text')]
    .filter(t => t.textContent.trim())
    .filter(t => { const r = t.getBoundingClientRect();
                   return r.left < edge.left - 1 || r.right > edge.right + 1 ||
                          r.top < edge.top - 1 || r.bottom > edge.bottom + 1; })
    .map(t => t.textContent.slice(0, 40));
})"""


# Plotly's mode bar (its buttons, at the chart's top right) is always shown on a phone and on
# hover elsewhere: a title under it was unreadable.
TITLES_UNDER_THE_MODE_BAR = """() =>
  [...document.querySelectorAll('.js-plotly-plot')].filter(plot => {
    const bar = plot.querySelector('.modebar'), title = plot.querySelector('.gtitle');
    if (!bar || !title || !title.textContent.trim()) return false;
    const b = bar.getBoundingClientRect(), t = title.getBoundingClientRect();
    return t.left < b.right && b.left < t.right && t.top < b.bottom && b.top < t.bottom;
  }).map(plot => plot.id)"""


def layout_problems(page) -> list[str]:
    problems = []
    clipped = page.evaluate(CLIPPED_CHART_TEXT)
    if clipped:
        problems.append(f"chart titles cut at the chart's edges: {clipped}")
    hidden = page.evaluate(TITLES_UNDER_THE_MODE_BAR)
    if hidden:
        problems.append(f"chart titles under the mode bar: {hidden}")
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    if overflow > 0:
        problems.append(f"{overflow} px wider than the window: {widest(page)}")
    broken = page.evaluate(BROKEN_WORDS)
    if broken:
        problems.append(f"words broken between letters: {broken}")
    share = page.evaluate(NAVIGATION_SHARE)
    if share > 1 / 3:
        problems.append(f"navigation takes {share:.0%} of the first screen")
    return problems


def test_no_page_scrolls_sideways_logs_an_error_or_fails_a_request(site):
    page, data = site
    found = {}
    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        for name, path_of, ready in PAGE_TYPES:
            open_page(page, path_of(data), ready)
            screenshot(page, name, size)
            problems = list(page.problems) + layout_problems(page)
            if problems:
                found[f"{name} @ {size}"] = problems
    assert found == {}, json.dumps(found, indent=1)


def axe_scan(page) -> list[dict]:
    """Run axe-core (the copy pinned in requirements-dev.txt) in the page. Evaluated through
    the DevTools protocol, so the page's Content-Security-Policy stays as in production."""
    from axe_playwright_python.base import AXE_SCRIPT

    page.evaluate(AXE_SCRIPT)
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [{"id": v["id"], "impact": v["impact"], "nodes": len(v["nodes"]),
             "first": v["nodes"][0]["target"] if v["nodes"] else None}
            for v in results["violations"]]


def test_axe_finds_no_serious_or_critical_violation(site):
    page, data = site
    by_page, serious = {}, {}
    pages = {name: (path_of, ready) for name, path_of, ready in PAGE_TYPES}
    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        for name in AXE_PAGES:
            path_of, ready = pages[name]
            open_page(page, path_of(data), ready)
            violations = axe_scan(page)
            by_page[f"{name} @ {size}"] = {v["id"]: v["impact"] for v in violations}
            bad = [v for v in violations if v["impact"] in ("serious", "critical")]
            if bad:
                serious[f"{name} @ {size}"] = bad
    # The dark scheme has colours of its own: their contrast is checked too (desktop only).
    page.set_viewport_size({"width": 1400, "height": 900})
    page.emulate_media(color_scheme="dark")
    for name in AXE_PAGES:
        path_of, ready = pages[name]
        open_page(page, path_of(data), ready)
        violations = axe_scan(page)
        by_page[f"{name} @ dark"] = {v["id"]: v["impact"] for v in violations}
        bad = [v for v in violations if v["impact"] in ("serious", "critical")]
        if bad:
            serious[f"{name} @ dark"] = bad
    if SHOTS:
        Path(SHOTS, "axe.json").write_text(json.dumps(by_page, indent=1, sort_keys=True))
    assert serious == {}, json.dumps(serious, indent=1)

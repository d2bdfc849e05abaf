"""Build a comparison in the browser, toggle the axis, save, reopen it elsewhere, get the CSV."""

from pathlib import Path

import pytest

from benchmarks.models import Comparison
from tests.factories import make_run

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def sweep():
    for kernel, base in (("2.6.22", 3300.0), ("2.6.24", 8900.0), ("2.6.24-git19", 8200.0)):
        for loops in (1_000_000, 10_000_000, 40_000_000):
            scale = loops / 1_000_000
            make_run(kernel, [base * scale + i for i in range(5)],
                     params={"loops": loops, "iterations": 500})


def test_build_toggle_save_reopen_and_download(signed_in, browser, live_server, sweep):
    page = signed_in
    page.goto("/compare/?benchmark=threadtest")
    page.wait_for_selector("#builder-chart[data-rendered='1']")
    # The default layout is what the runs vary in: the loop sweep on x, kernels as series.
    assert page.input_value("#x-select") == "param.loops"
    assert page.input_value("#series-select") == "kernel"
    page.select_option("#x-select", "param.loops")
    page.select_option("#series-select", "kernel")
    page.select_option("#baseline-dim-select", "kernel")
    page.select_option("#baseline-value-select", "2.6.22")
    page.wait_for_js(
        "Array.from(document.querySelectorAll('#builder-chart .legendtext'))"
        ".map(e => e.textContent).join() === '2.6.22,2.6.24,2.6.24-git19'")
    assert page.locator("#builder-chart .scatterlayer .trace").count() == 3
    legend = page.locator("#builder-chart .legendtext").all_text_contents()
    assert legend == ["2.6.22", "2.6.24", "2.6.24-git19"]  # version order
    page.fill("#title-input", "threadtest by loop size")
    page.click("#save-button")
    page.wait_for_url("**/c/*/")
    slug = page.url.rstrip("/").rsplit("/", 1)[1]
    assert Comparison.objects.get(slug=slug).spec["baseline"] == {"dim": "kernel",
                                                                  "value": "2.6.22"}
    page.wait_for_selector("#comparison-chart[data-rendered='1']")
    assert page.evaluate("document.getElementById('comparison-chart').layout.xaxis.type") == \
        "linear"
    page.click("#toggle-x-scale")
    page.wait_for_js(
        "document.getElementById('comparison-chart').layout.xaxis.type === 'log'")
    assert page.text_content("#toggle-x-scale") == "x axis: log"

    fresh = browser.new_context(base_url=live_server.url, accept_downloads=True)
    other = fresh.new_page()
    other.goto(f"/c/{slug}/")
    other.wait_for_selector("#comparison-chart[data-rendered='1']")
    assert "threadtest by loop size" in other.text_content("h1")
    other.wait_for_selector("#comparison-threads[data-loaded='1'] a.start-thread")
    assert "Mann-Whitney" in other.text_content("body") or "Welch" in other.text_content("body")
    with other.expect_download() as download:
        other.click("#csv-link")
    content = Path(download.value.path()).read_text()
    assert content.splitlines()[0].startswith("x,series,facet,n,value,median")
    assert len(content.splitlines()) == 1 + 9
    fresh.close()
    assert page.js_errors == []


def test_empty_selection_explains_itself(page, sweep):
    page.goto("/compare/?benchmark=threadtest&kernel=9.9.9")
    page.wait_for_js("document.getElementById('builder-empty').textContent.includes('9.9.9')")
    assert page.is_hidden("#builder-preview")


def test_compare_runs_picked_in_the_run_list(page, sweep):
    page.goto("/runs/?benchmark=threadtest&param.loops=1000000")
    boxes = page.locator("table.runs input[type=checkbox]")
    assert boxes.count() == 3
    boxes.nth(0).check()
    boxes.nth(2).check()
    page.click("#compare-selected-button")
    page.wait_for_selector("#builder-chart[data-rendered='1']")
    assert page.text_content("#selection-status") == "2 runs"
    assert page.locator("#builder-cells tbody tr").count() == 2


def test_one_uploaded_run_compared_is_one_run(page, sweep):
    """The README's first five minutes end on one uploaded run's "Compare these runs"."""
    page.goto("/runs/?kernel=2.6.22&param.loops=1000000")
    page.locator("table.runs input[type=checkbox]").first.check()
    page.click("#compare-selected-button")
    page.wait_for_selector("#builder-chart[data-rendered='1']")
    assert page.text_content("#selection-status") == "1 run"


def test_compare_all_runs_of_a_list_filtered_only_by_kernel(page, sweep):
    page.goto("/runs/?kernel=2.6.24")
    page.click("#compare-these")
    page.wait_for_selector("#builder-chart[data-rendered='1']")
    assert page.text_content("#selection-status") == "3 runs"


def test_every_filter_on_any_means_every_run_and_the_preview_says_it_is_updating(page, sweep):
    page.goto("/compare/")
    assert "every run" in page.text_content("#filters-help")
    page.click("#load-options")
    page.wait_for_selector("#builder-chart[data-rendered='1']")
    assert page.text_content("#selection-status") == "9 runs"
    page.wait_for_js("!document.getElementById('builder-updating').classList.contains('active')")
    page.evaluate("document.getElementById('builder-chart').dataset.rendered = '0'")
    page.select_option("#statistic-select", "mean")
    # Shown at once, before the (debounced) request is even sent; gone when it is drawn.
    assert "updating" in page.text_content("#builder-updating")
    page.wait_for_selector("#builder-chart[data-rendered='1']")
    page.wait_for_js("!document.getElementById('builder-updating').classList.contains('active')")
    assert page.js_errors == []


def test_a_chart_of_many_series_draws_with_webgl_and_keeps_its_name_and_tables(page):
    from benchmarks.comparisons.spec import parse_spec
    from benchmarks.services.comparisons import comparison_create

    for number in range(45):
        for loops in (1000, 10000):
            make_run(f"5.{number}", [100.0 + number + loops / 1000, 101.0 + number],
                     params={"loops": loops})
    comparison = comparison_create(spec=parse_spec({
        "title": "many kernels", "filters": {"benchmark": "threadtest"}, "x": "param.loops",
        "series": "kernel"}))
    page.goto(f"/c/{comparison.slug}/")
    chart = page.locator("#comparison-chart")
    # the name and the numbers are there before Plotly.js has drawn anything
    assert chart.get_attribute("aria-label").startswith("many kernels")
    assert page.locator("#comparison-chart-data tbody tr").count() == 90
    page.wait_for_selector("#comparison-chart[data-rendered='1']")
    assert page.evaluate("document.getElementById('comparison-chart')._fullData"
                         ".every(t => t.type === 'scattergl')")
    assert page.locator("#comparison-chart canvas").count() > 0  # drawn by WebGL, not SVG
    assert page.locator("#comparison-chart-data tbody tr").count() == 90  # kept, not doubled
    # 90 cells: the statistics table comes when its panel is opened
    assert page.locator("table.cells").count() == 0
    page.click("details.cells-panel summary")
    page.wait_for_selector("details.cells-panel[data-loaded='1'] table.cells")
    assert page.locator("table.cells tbody tr").count() == 90
    assert page.js_errors == []


@pytest.mark.parametrize("chart", ["line", "table"])
def test_user_text_in_a_chart_is_drawn_as_typed_not_read_as_markup(page, chart):
    """Plotly reads <b>, <i>, <a href> in the texts it draws: a title, a legend entry, a tick
    label or a table cell typed with them must read exactly as typed."""
    from benchmarks.comparisons.spec import parse_spec
    from benchmarks.services.comparisons import comparison_create

    for policy, base in (("<b>loud</b> & co", 100.0), ("<i>quiet</i>", 90.0)):
        make_run("2.6.24", [base, base + 1, base + 2], policy=policy)
    title = "my <b>first</b> & <a href='https://example.org'>linked</a> one"
    comparison = comparison_create(spec=parse_spec({
        "title": title, "filters": {"benchmark": "threadtest"}, "metric": "time_ms",
        "x": "policy", "series": "kernel", "chart": chart}))
    page.goto(f"/c/{comparison.slug}/")
    page.wait_for_selector("#comparison-chart[data-rendered='1']")
    drawn = page.locator("#comparison-chart svg").first.evaluate(
        "svg => [...svg.ownerDocument.querySelectorAll('#comparison-chart svg text')]"
        ".map(t => t.textContent)")
    assert title in drawn
    assert any("<b>loud</b> & co" in text for text in drawn), drawn
    assert any("<i>quiet</i>" in text for text in drawn), drawn
    assert page.locator("#comparison-chart svg a, #comparison-chart svg tspan[style*=bold]"
                        ).count() == 0


@pytest.mark.parametrize("kernels", [3, 15])
def test_on_a_phone_the_legend_is_above_the_plot_between_it_and_the_title(page, kernels):
    """Right of the plot (Plotly's default) a legend of three kernels took a third of a phone's
    width: the plot was left ~140 px wide; fifteen long names left it 64 px. Above it, between
    the title and the plot, in as many rows as it needs, it takes none."""
    from benchmarks.comparisons.spec import parse_spec
    from benchmarks.services.comparisons import comparison_create

    for number in range(kernels):
        for loops in (1_000_000, 10_000_000):
            make_run(f"2.6.{number + 10}.17-cfs-v24.1-smp", [loops / 1000 + number] * 3,
                     params={"loops": loops, "iterations": 500})
    comparison = comparison_create(spec=parse_spec({
        "title": "threadtest by loop size", "filters": {"benchmark": "threadtest"},
        "metric": "time_ms", "x": "param.loops", "series": "kernel"}))
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/c/{comparison.slug}/")
    page.wait_for_selector("#comparison-chart[data-rendered='1']")
    box = page.evaluate("""() => Object.fromEntries(['.main-svg', '.gtitle', '.legend',
        '.nsewdrag'].map(s => { const r = document.querySelector('#comparison-chart ' + s)
        .getBoundingClientRect(); return [s, [r.left, r.top, r.right, r.bottom]]; }))""")
    chart, title, legend, plot = (box[s] for s in (".main-svg", ".gtitle", ".legend",
                                                    ".nsewdrag"))
    assert plot[2] - plot[0] >= 0.7 * (chart[2] - chart[0]), box
    assert plot[3] - plot[1] >= 150, box
    assert title[3] <= legend[1] and legend[3] <= plot[1], box


def test_a_long_title_is_not_under_the_mode_bar_on_a_wide_screen(page, sweep):
    """The mode bar appears over the chart's top right on hover: the end of a title that long
    sat under its buttons."""
    from benchmarks.comparisons.spec import parse_spec
    from benchmarks.services.comparisons import comparison_create

    title = ("RSDL 0.31 vs 0.33: a chat server whose locks spin on sched_yield() (2 CPUs, seed"
             " thread's case)")
    comparison = comparison_create(spec=parse_spec({
        "title": title, "filters": {"benchmark": "threadtest"}, "metric": "time_ms",
        "x": "param.loops", "series": "kernel"}))
    page.goto(f"/c/{comparison.slug}/")
    page.wait_for_selector("#comparison-chart[data-rendered='1']")
    page.hover("#comparison-chart .nsewdrag")
    bar = page.locator("#comparison-chart .modebar").bounding_box()
    drawn = page.locator("#comparison-chart .gtitle").bounding_box()
    assert drawn["y"] >= bar["y"] + bar["height"] or \
        drawn["x"] + drawn["width"] <= bar["x"], (drawn, bar)

"""A fork reproduces its original exactly: same runs, same cells, and the builder's live preview
prints every number as the saved page does (no 4-significant-digit rounding of 10045)."""

import pytest

from benchmarks.comparisons.spec import parse_spec
from benchmarks.models import Comparison
from benchmarks.services.comparisons import comparison_create
from tests.factories import CORE2, make_run

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SIMULATED = {"name": "sim-1x2x1", "cpu_model": "schedbench simulator", "arch": "simulated",
             "sockets": 1, "cores_per_socket": 2, "threads_per_core": 1}
# A second machine that shares the laptop's name: a filter by name takes both, by id one.
TWIN_NAME = {**CORE2, "cpu_model": "Intel Core 2 Duo 2.0 GHz"}

CELLS = "Array.from(document.querySelectorAll('{} tbody tr')).map(r => " \
        "Array.from(r.cells).map(c => c.innerText.trim()).join(' | '))"


@pytest.fixture
def saved(signed_in):
    values = {"2.6.22": [10044.0, 10045.0, 10046.0], "2.6.24": [4015.0, 4016.0],
              "2.6.25": [0.12345, 0.125, 0.135]}
    for kernel, numbers in values.items():
        for loops in (1_000_000, 10_000_000):
            make_run(kernel, numbers, params={"loops": loops}, machine=CORE2)
            make_run(kernel, [n / 2 for n in numbers], params={"loops": loops},
                     machine=SIMULATED, source="simulator")
    spec = parse_spec({"title": "laptop only", "filters": {"benchmark": "threadtest",
                                                           "machine": "core2-laptop"},
                       "x": "param.loops", "series": "kernel"})
    original = comparison_create(spec=spec, author=signed_in.user)
    # Later uploads that match the saved filters must not slip into a fork.
    make_run("2.6.24", [1.0, 2.0], params={"loops": 1_000_000}, machine=TWIN_NAME)
    return original


def test_fork_reproduces_the_run_set_and_every_cell(signed_in, saved):
    page = signed_in
    assert len(saved.run_ids) == 6
    page.goto(f"/c/{saved.slug}/")
    page.wait_for_selector("#comparison-chart[data-rendered='1']")
    saved_cells = page.evaluate(CELLS.format("table.cells"))
    assert any("10,045" in row for row in saved_cells)  # not 10,050
    page.click("text=Fork")
    page.wait_for_selector("#builder-chart[data-rendered='1']")
    page.wait_for_js("document.getElementById('selection-status').textContent === "
                           "'6 runs'")
    assert page.evaluate(CELLS.format("#builder-cells")) == saved_cells
    page.click("#save-button")
    page.wait_for_url("**/c/*/")
    fork = Comparison.objects.exclude(pk=saved.pk).get()
    assert sorted(fork.run_ids) == sorted(saved.run_ids)
    keys = ("x", "series", "n", "median", "mean", "stdev", "min", "max", "runs")
    assert [{k: c[k] for k in keys} for c in fork.frozen["cells"]] == \
        [{k: c[k] for k in keys} for c in saved.frozen["cells"]]
    page.wait_for_selector("#comparison-chart[data-rendered='1']")
    assert page.evaluate(CELLS.format("table.cells")) == saved_cells
    assert page.js_errors == []


def test_builder_preview_numbers_equal_the_saved_page(signed_in, saved):
    """Ties round to even as Python does: a median of 4015.5 prints 4,016, 0.125 prints 0.1250."""
    page = signed_in
    page.goto(f"/compare/?fork={saved.slug}")
    page.wait_for_selector("#builder-chart[data-rendered='1']")
    page.select_option("#series-select", "")
    page.select_option("#x-select", "kernel")
    page.select_option("#series-select", "param.loops")
    page.select_option("#error-select", "ci95")
    page.wait_for_js("document.querySelector('#builder-cells thead th').textContent"
                           " === 'kernel' && document.querySelector('#builder-cells thead')"
                           ".textContent.includes('95% CI')")
    page.wait_for_js("document.querySelector('#builder-cells tbody tr').cells[7]"
                           ".textContent.includes(' – ')")  # the bootstrap CI has arrived
    preview = page.evaluate(CELLS.format("#builder-cells"))
    page.click("#save-button")
    page.wait_for_url("**/c/*/")
    page.wait_for_selector("#comparison-chart[data-rendered='1']")
    assert page.evaluate(CELLS.format("table.cells")) == preview
    assert any(row.startswith("2.6.24 | 1000000 | 2 | 4,016 |") for row in preview)

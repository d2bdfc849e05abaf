"""Upload in a real browser: paste, preview, correct a kernel, commit; errors point at the line."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from benchmarks.models import Run

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "uploads"


def test_sign_in_through_the_form(page, django_user_model):
    django_user_model.objects.create_user("uploader", password="a-long-test-password")
    page.goto("/upload/")
    page.wait_for_url("**/accounts/login/?next=/upload/")
    page.fill("input[name=username]", "uploader")
    page.fill("input[name=password]", "a-long-test-password")
    page.click("form button[type=submit]")
    page.wait_for_url("**/upload/")
    assert page.text_content("header .account a") == "uploader"


def test_paste_preview_correct_and_commit(signed_in):
    page = signed_in
    page.goto("/upload/")
    page.fill("#text-input", "2.6.24\ntime 8953 ms\ntime 9001 ms\n\n2.6.25\ntime 29 ms\n")
    page.fill("#benchmark-input", "threadtest")
    page.fill("#machine-input", "p4-ht")
    page.fill("#params-input", "loops=10000\niterations=500")
    page.click("#preview-button")
    page.wait_for_selector("#preview[data-state=previewed]")
    rows = page.locator("#preview-table tbody tr")
    assert rows.count() == 2
    assert "8953, 9001" in rows.nth(0).text_content()
    assert Run.objects.count() == 0  # a preview writes nothing

    rows.nth(1).locator("input.kernel-fix").fill("2.6.25-smp")
    page.click("#commit-button")
    page.wait_for_selector("#preview[data-state=committed]")
    assert page.locator("#preview-table tbody tr td a").count() == 2
    stored = sorted(Run.objects.values_list("kernel__version", flat=True))
    assert stored == ["2.6.24", "2.6.25-smp"]
    assert Run.objects.filter(params__loops=10000, source="upload").count() == 2
    assert page.locator("#upload-progress").get_attribute("value") == "100"

    page.locator("#preview-table tbody tr td a").first.click()
    page.wait_for_selector("#samples-chart[data-rendered='1']", timeout=20000)
    assert page.js_errors == []


def test_file_upload_and_an_error_that_points_at_the_line(signed_in):
    page = signed_in
    page.goto("/upload/")
    page.set_input_files("#file-input", str(FIXTURES / "threadtest-repeats.txt"))
    page.fill("#benchmark-input", "threadtest")
    page.fill("#kernel-input", "2.6.22.17-smp")
    page.click("#preview-button")
    page.wait_for_selector("#preview[data-state=previewed]")
    assert "skipped quoted line" in page.text_content("#preview-warnings")

    page.set_input_files("#file-input", [])
    page.fill("#text-input", "kernel,time_ms\n2.6.24,100\n2.6.25,abc\n")
    page.click("#preview-button")
    page.wait_for_selector("#upload-error:not([hidden])")
    error = page.text_content("#upload-error")
    assert "Line 3" in error and "abc" in error
    assert page.locator("#upload-error pre .bad").text_content().startswith("3  2.6.25,abc")


PER_KERNEL_SWEEP = """\
2.6.22.17:
Loop to 1M: 5210 ms
Loop to 1M: 5190 ms
Loop to 10M: 24030 ms
2.6.24:
Loop to 1M: 10765 ms
rebooted between these two, machine still warm
Loop to 10M: 30122 ms
"""


def test_per_kernel_sweep_preview_assign_commit_and_compare_over_loop_size(signed_in):
    page = signed_in
    page.goto("/upload/")
    assert page.get_attribute("#format-help-link", "href") == "/formats/"
    page.fill("#text-input", PER_KERNEL_SWEEP)
    page.fill("#machine-input", "core2-laptop")
    page.click("#preview-button")
    page.wait_for_selector("#preview[data-state=previewed]")
    rows = page.locator("#preview-table tbody tr")
    assert rows.count() == 4
    # Each run shows the lines it came from, its heading first.
    assert rows.nth(0).locator("pre.source-lines").text_content().splitlines() == [
        "1  2.6.22.17:", "2  Loop to 1M: 5210 ms", "3  Loop to 1M: 5190 ms"]
    unassigned = page.locator("#preview-table tbody tr.unassigned")
    assert unassigned.count() == 1
    assert "UNASSIGNED line 8" in unassigned.text_content()
    assert "8  Loop to 10M: 30122 ms" in unassigned.locator("pre.source-lines").text_content()
    assert "UNASSIGNED" in page.text_content("#upload-status")

    page.click("#commit-button")  # refused: the block after the prose line has no kernel
    page.wait_for_selector("#upload-error:not([hidden])")
    assert "Line 8" in page.text_content("#upload-error")
    assert page.get_attribute("#preview", "data-state") == "refused"
    assert Run.objects.count() == 0

    page.click("#preview-button")
    page.wait_for_selector("#preview[data-state=previewed] tr.unassigned")
    page.locator("#preview-table tbody tr.unassigned input.kernel-fix").fill("2.6.24")
    page.click("#commit-button")
    page.wait_for_selector("#preview[data-state=committed]")
    stored = sorted(Run.objects.values_list("kernel__version", "params__loops"))
    assert stored == [("2.6.22.17", 1_000_000), ("2.6.22.17", 10_000_000),
                      ("2.6.24", 1_000_000), ("2.6.24", 10_000_000)]

    page.goto("/compare/?benchmark=threadtest")
    page.wait_for_selector("#builder-chart[data-rendered='1']")
    page.select_option("#x-select", "param.loops")
    page.select_option("#series-select", "kernel")
    # expect() polls without evaluating strings, which the site's CSP forbids.
    expect(page.locator("#builder-chart .legendtext")).to_have_text(["2.6.22.17", "2.6.24"])
    page.fill("#title-input", "per-kernel sweep")
    page.click("#save-button")
    page.wait_for_url("**/c/*/")
    slug = page.url.rstrip("/").rsplit("/", 1)[1]
    cells = page.request.get(f"/c/{slug}.json").json()["cells"]
    found = {(str(cell["x"]), cell["series"]): (cell["n"], cell["median"]) for cell in cells}
    assert found == {("1000000", "2.6.22.17"): (2, 5200), ("10000000", "2.6.22.17"): (1, 24030),
                     ("1000000", "2.6.24"): (1, 10765), ("10000000", "2.6.24"): (1, 30122)}

    # Fork the saved comparison: the same runs and every cell identical.
    page.wait_for_selector("#comparison-chart[data-rendered='1']")
    page.click("text=Fork")
    page.wait_for_selector("#builder-chart[data-rendered='1']")
    page.fill("#title-input", "per-kernel sweep, forked")
    page.click("#save-button")
    page.wait_for_url(lambda url: slug not in url and "/c/" in url)
    fork_slug = page.url.rstrip("/").rsplit("/", 1)[1]
    original = page.request.get(f"/c/{slug}.json").json()
    fork = page.request.get(f"/c/{fork_slug}.json").json()
    assert sorted(fork["runs"]) == sorted(original["runs"])
    keys = ("x", "series", "n", "median", "mean", "stdev", "min", "max")
    assert [{k: c[k] for k in keys} for c in fork["cells"]] == \
        [{k: c[k] for k in keys} for c in original["cells"]]
    assert page.js_errors == []


PARSER_FIXTURES = FIXTURES.parent / "parsers"


@pytest.mark.parametrize("fixture", ["mmtests.txt", "robot_report.txt"])
def test_a_published_summary_shows_its_figure_in_the_preview(signed_in, fixture):
    """mmtests and robot reports carry a statistic per metric, not samples: the preview showed
    'time_s.amean (s): ' with nothing after the colon."""
    page = signed_in
    page.goto("/upload/")
    page.fill("#text-input", (PARSER_FIXTURES / fixture).read_text())
    page.click("#preview-button")
    page.wait_for_selector("#preview[data-state=previewed]")
    cells = page.locator("#preview-table tbody tr td:nth-child(9)").all_text_contents()
    lines = [line for cell in cells for line in cell.split("\n") if line]
    assert lines
    summaries = [line for line in lines if "published" in line]
    assert summaries, lines
    for line in summaries:  # "name (unit): published amean 0.2357 ± 1.36%"
        figure = line.split("published ", 1)[1].split()[1]
        float(figure)


def test_the_preview_table_scrolls_in_its_box_instead_of_widening_the_page(signed_in):
    page = signed_in
    page.goto("/upload/")
    page.fill("#text-input", (PARSER_FIXTURES / "mmtests.txt").read_text())
    page.click("#preview-button")
    page.wait_for_selector("#preview[data-state=previewed]")
    widths = page.evaluate("() => [document.documentElement.scrollWidth,"
                           " document.documentElement.clientWidth]")
    assert widths[0] <= widths[1], f"the page is {widths[0]} px wide in a {widths[1]} px window"


@pytest.mark.parametrize("path", ["/upload/", "/compare/"])
def test_a_label_with_code_in_it_reads_as_one_line(signed_in, path):
    """'params, one name=value per line': the label is a flex column, so its <code> became a
    row of its own and the sentence read over three lines."""
    page = signed_in
    page.goto(path)
    for label in page.locator("label:has(> span > code), label:has(> code)").all():
        tops = label.evaluate("l => [l.getBoundingClientRect().top,"
                              " l.querySelector('code').getBoundingClientRect().top]")
        assert tops[1] - tops[0] < 8, f"{label.text_content()!r}: its code sits on a later line"

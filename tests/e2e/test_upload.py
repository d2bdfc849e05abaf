"""Upload in a real browser: paste, preview, correct a kernel, commit; errors point at the line."""

from pathlib import Path

import pytest

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

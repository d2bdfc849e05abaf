"""In the browser: the header search box finds a run by kernel and a thread by subject; an
owner tags and withdraws a run, which then leaves the run list and the search."""

import pytest

from benchmarks.models import Run
from discussions import services as discussions
from tests.factories import make_run

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def search_from_header(page, q):
    page.fill("#site-search-q", q)
    page.press("#site-search-q", "Enter")
    page.wait_for_url("**/search/?q=*")


def test_header_search_finds_a_run_by_kernel_and_a_thread_by_subject(page, django_user_model):
    user = django_user_model.objects.create_user("ingo")
    run = make_run("2.6.22.17-cfs-v24.1", [3300.0, 3310.0])
    make_run("2.6.24", [8900.0, 8950.0])
    thread = discussions.thread_create(user=user, subject="CFS v24.1 yield regression",
                                       body="numbers attached", source="api")
    page.goto("/machines/")
    search_from_header(page, "2.6.22.17-cfs-v24.1")
    runs = page.locator("#search-runs li a")
    assert runs.count() == 1 and runs.first.text_content().startswith(f"#{run.pk} ")
    runs.first.click()
    page.wait_for_url(f"**/runs/{run.pk}/")

    search_from_header(page, "yield regression")
    threads = page.locator("#search-threads li a")
    assert threads.first.text_content() == "CFS v24.1 yield regression"
    threads.first.click()
    page.wait_for_url(f"**/threads/{thread.pk}/")
    assert page.js_errors == []


def test_owner_tags_and_withdraws_a_run(signed_in):
    page = signed_in
    run = make_run("2.6.23-rc8", [5100.0, 5120.0], submitter=page.user)
    page.goto(f"/runs/{run.pk}/")
    page.fill("#run-label", "SCHED_BATCH")
    page.fill("#run-tags-input", "cfs batch-test")
    page.click("#run-edit-save")
    page.wait_for_url(f"**/runs/{run.pk}/")
    assert page.locator("#run-tags .tag").all_text_contents() == ["cfs", "batch-test"]
    assert "SCHED_BATCH" in page.text_content("p.subtitle")
    search_from_header(page, "batch-test")
    assert page.locator("#search-runs li a").count() == 1

    page.goto(f"/runs/{run.pk}/")
    page.click("#run-withdraw")
    page.wait_for_url(f"**/runs/{run.pk}/")
    assert "Withdrawn" in page.text_content("#run-withdrawn")
    assert Run.objects.get(pk=run.pk).withdrawn is not None
    page.goto("/runs/")
    assert page.locator(f"a[href='/runs/{run.pk}/']").count() == 0
    search_from_header(page, "batch-test")
    assert page.locator("#search-runs li a").count() == 0
    assert page.js_errors == []

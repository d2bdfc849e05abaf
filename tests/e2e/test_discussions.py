"""Discussions in a real browser: post, reply with quote, fold and unfold, import an mbox."""

from pathlib import Path

import pytest

from discussions.models import Post, PostRun

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
MBOX = Path(__file__).resolve().parent.parent / "fixtures" / "mbox" / "threadtest.mbox"
TABLE = """My numbers on the Core 2, three runs each:

2.6.22   time 3332 ms
2.6.22   time 3350 ms
2.6.24   time 8953 ms
2.6.24   time 9001 ms
2.6.24   time 8870 ms
"""


def test_post_reply_with_quote_then_fold_and_unfold(signed_in):
    page = signed_in
    page.goto("/threads/")
    page.click("text=New thread")
    page.fill("input[name=subject]", "threadtest: 2.6.24 is 2.7x slower")
    page.fill("textarea[name=body]", TABLE)
    page.click("#send-button")
    page.wait_for_url("**/threads/*/")
    assert "threadtest: 2.6.24 is 2.7x slower" in page.text_content("h1")

    page.click("article.post >> a.reply-quote")
    page.wait_for_url("**/reply/?quote=1")
    body = page.input_value("textarea[name=body]")
    author = page.user.get_username()
    assert body.startswith("On ") and f", {author} wrote:\n> My numbers on the Core 2" in body
    page.fill("textarea[name=body]", body + "Do you have a variance measure?\n")
    page.click("#send-button")
    page.wait_for_url("**/threads/*/#m-*")

    reply = page.locator("article.post").nth(1)
    assert "Do you have a variance measure?" in reply.text_content()
    quote = reply.locator("details.quote").first
    assert quote.locator("summary .quote-who").text_content() == page.user.get_username()
    assert quote.locator("summary .quote-lines").text_content() == "7 lines"
    folded_text = quote.locator(".quote-body pre").first
    assert not folded_text.is_visible()  # long quotes start folded
    quote.locator("summary").click()
    assert folded_text.is_visible() and "2.6.24   time 8953 ms" in folded_text.text_content()
    quote.locator("summary").click()
    assert not folded_text.is_visible()
    assert Post.objects.filter(depth=1, in_reply_to=Post.objects.get(depth=0).message_id).exists()
    assert page.js_errors == []


def test_import_an_mbox_and_open_an_extracted_run(signed_in, celery_worker_factory):
    page = signed_in
    page.goto("/threads/import/")
    page.set_input_files("input[name=file]", str(MBOX))
    page.click("#import-button")
    page.wait_for_url("**/threads/import/*/")  # the job's page: progress, then the report
    celery_worker_factory()
    page.wait_for_selector("#import-report", timeout=60000)
    assert page.text_content("#import-report .imported") == "6"
    assert page.text_content("#import-report .skipped") == "1"
    assert page.text_content("#import-report .runs-extracted") == "9"

    page.click("#import-report .imported-threads a")
    page.wait_for_url("**/threads/*/")
    root = page.locator("article.post").first
    compare = root.locator("a.compare-these").get_attribute("href")
    assert compare.startswith("/compare/?runs=") and len(compare.split(",")) == 6
    first_run = PostRun.objects.filter(post__depth=0).order_by("run_id").first().run
    root.locator("a.run-link").first.click()
    page.wait_for_url(f"**/runs/{first_run.pk}/")
    assert first_run.kernel.version in page.text_content("h1")
    assert page.locator("#threads").count() == 1  # the run page offers its discussions
    assert page.js_errors == []

"""Pages: one ordered query per thread page, paging, views, reply forms, permissions, CSRF."""

import re

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from discussions import services
from discussions.models import Post, Thread, ThreadFollow
from discussions.selectors import MAX_INDENT
from tests.factories import make_run

pytestmark = pytest.mark.django_db


def long_thread(user, replies: int, *, chain: bool = False) -> Thread:
    thread = services.thread_create(user=user, subject="long", body="first")
    parent = Post.objects.get()
    for number in range(replies):
        post = services.post_reply(user=user, thread=thread, body=f"reply {number}\n> q\n",
                                   parent=parent)
        parent = post if chain else parent
    thread.refresh_from_db()
    return thread


@pytest.mark.parametrize("replies", [3, 60])
def test_thread_page_takes_the_same_few_queries_whatever_its_length(
        client, poster, replies, django_assert_num_queries):
    thread = long_thread(poster, replies)
    # thread, the ordered posts (authors joined), their attachments, their runs
    with django_assert_num_queries(4) as captured:
        response = client.get(reverse("thread-detail", args=[thread.pk]))
    assert response.status_code == 200
    assert response.content.decode().count('<article class="post') == replies + 1
    ordered = [q["sql"] for q in captured.captured_queries if "thread_order" in q["sql"]]
    assert len(ordered) == 1 and "ORDER BY" in ordered[0]


def test_long_threads_are_paged_and_indent_is_capped(client, poster, settings):
    thread = long_thread(poster, 14, chain=True)
    html = client.get(reverse("thread-detail", args=[thread.pk])).content.decode()
    assert f"indent-{MAX_INDENT}" in html and f"indent-{MAX_INDENT + 1}" not in html
    assert 'data-depth="14"' in html and "(depth 14)" in html
    settings.DISCUSSIONS_POSTS_PER_PAGE = 5
    page3 = client.get(reverse("thread-detail", args=[thread.pk]), {"page": 3}).content
    assert "page 3 of 3" in page3.decode()
    assert page3.decode().count('<article class="post') == 5
    assert 'href="?page=2"' in page3.decode()
    flat = client.get(reverse("thread-detail", args=[thread.pk]), {"view": "flat", "page": 2})
    assert 'href="?view=flat&amp;page=3"' in flat.content.decode()
    whole = client.get(reverse("thread-detail", args=[thread.pk]), {"all": "1"}).content
    assert whole.decode().count('<article class="post') == 15


def test_flat_view_is_by_date_and_threaded_view_by_tree(client, imported):
    url = reverse("thread-detail", args=[imported.threads[0].pk])
    authors = lambda html: re.findall(r'class="post-author">([^<]+)<', html)  # noqa: E731
    threaded = authors(client.get(url).content.decode())
    flat = authors(client.get(url, {"view": "flat"}).content.decode())
    assert threaded == ["Olof Example", "Jan Example", "Ingo Example", "Jörg Beispiel",
                        "Ingo Example", "Peter Example"]
    assert flat == ["Olof Example", "Jan Example", "Ingo Example", "Peter Example",
                    "Jörg Beispiel", "Ingo Example"]


def test_post_links_to_its_runs_and_compare_these(client, imported):
    root = Post.objects.get(author="Olof Example")
    html = client.get(reverse("message-detail", args=[root.message_id])).content.decode()
    ids = sorted(root.run_links.values_list("run_id", flat=True))
    assert len(ids) == 6
    for run_id in ids:
        assert f'href="/runs/{run_id}/"' in html
    assert f'href="/compare/?runs={",".join(map(str, ids))}"' in html


def test_message_page_shows_headers_and_raw_source(client, imported):
    post = Post.objects.get(author="Peter Example")
    html = client.get(f"/m/{post.message_id}/").content.decode()
    assert "&lt;not-in-archive-1@example.org&gt; <span class=\"muted\">(not in this archive" in html
    jan = Post.objects.get(author="Jan Example")
    jan_html = client.get(jan.url).content.decode()
    assert f'<a href="{jan.parent.url}">&lt;{jan.in_reply_to}&gt;</a>' in jan_html
    raw = client.get(f"/m/{post.message_id}/raw/")
    assert raw["Content-Type"].startswith("text/plain") and raw.content == bytes(post.raw)
    assert client.get("/m/nothing@here/").status_code == 404


def test_reply_with_quote_prefills_the_parent_under_an_attribution(signed_in, imported):
    jan = Post.objects.get(author="Jan Example")
    page = signed_in.get(reverse("message-reply", args=[jan.message_id]), {"quote": "1"})
    body = page.context["form"].initial["body"]
    assert body.startswith("On Mon, 11 Feb 2008 11:30, Jan Example wrote:\n")
    assert "> time 254 ms\n" in body and "> > Loop to 1M:" in body
    response = signed_in.post(reverse("message-reply", args=[jan.message_id]),
                              {"subject": "Re: numbers", "body": body + "Variance: 2%\n"})
    assert response.status_code == 302
    reply = Post.objects.get(body__endswith="Variance: 2%\n")
    assert reply.parent_id == jan.pk and reply.depth == 2 and reply.in_reply_to == jan.message_id
    assert reply.references.split()[-1] == jan.message_id


def test_start_a_thread_from_a_run_page(signed_in):
    run = make_run()
    run_page = signed_in.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert f"/threads/new/?target_type=run&amp;target_id={run.pk}" in run_page
    response = signed_in.post(reverse("thread-new"), {
        "subject": "2.6.24 slower here", "body": "see the run", "target_type": "run",
        "target_id": str(run.pk)})
    thread = Thread.objects.get()
    assert response.status_code == 302 and (thread.target_type, thread.target_id) == (
        "run", str(run.pk))
    assert "2.6.24 slower here" in signed_in.get(
        reverse("run-detail", args=[run.pk])).content.decode()


def test_only_author_or_staff_edit_and_delete(client, poster, other_user, django_user_model):
    thread = services.thread_create(user=poster, subject="s", body="mine")
    post = Post.objects.get()
    client.force_login(other_user)
    assert client.post(f"/m/{post.message_id}/edit/", {"body": "hijacked"}).status_code == 403
    assert client.post(f"/m/{post.message_id}/delete/").status_code == 403
    client.force_login(poster)
    assert client.post(f"/m/{post.message_id}/edit/", {"subject": "s", "body": "fixed"}) \
        .status_code == 302
    staff = django_user_model.objects.create_user("admin", is_staff=True)
    client.force_login(staff)
    assert client.post(f"/m/{post.message_id}/delete/").status_code == 302
    post.refresh_from_db()
    assert post.deleted and post.body == "" and post.edited
    assert "This message was deleted." in client.get(thread.get_absolute_url()).content.decode()


def test_every_form_needs_a_csrf_token(poster, imported):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(poster)
    post = Post.objects.first()
    for url, data in [
        (reverse("thread-new"), {"subject": "s", "body": "b"}),
        (reverse("message-reply", args=[post.message_id]), {"body": "b"}),
        (reverse("thread-follow", args=[post.thread_id]), {"follow": "1"}),
        (reverse("thread-import"), {}),
        (reverse("message-delete", args=[post.message_id]), {}),
    ]:
        assert strict.post(url, data).status_code == 403, url
    form = strict.get(reverse("message-reply", args=[post.message_id])).content.decode()
    assert 'name="csrfmiddlewaretoken"' in form


def test_posting_pages_need_sign_in(client, imported):
    post = Post.objects.first()
    for url in [reverse("thread-new"), reverse("thread-import"),
                reverse("message-reply", args=[post.message_id])]:
        assert "/accounts/login/" in client.get(url)["Location"]


def test_follow_then_get_a_mail_per_new_post(signed_in, poster, other_user,
                                             django_capture_on_commit_callbacks):
    thread = services.thread_create(user=other_user, subject="yield", body="first")
    signed_in.post(reverse("thread-follow", args=[thread.pk]), {"follow": "1"})
    assert ThreadFollow.objects.filter(thread=thread, user=poster).exists()
    with django_capture_on_commit_callbacks(execute=True):
        services.post_reply(user=other_user, thread=thread, body="numbers: time 5 ms")
    assert [m.to for m in mail.outbox] == [["olof@example.org"]]
    signed_in.post(reverse("thread-follow", args=[thread.pk]), {"follow": "0"})
    with django_capture_on_commit_callbacks(execute=True):
        services.post_reply(user=other_user, thread=thread, body="more")
    assert len(mail.outbox) == 1


def test_import_page_reports_threads_runs_skips_and_problems(
        signed_in, mbox_bytes, django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile

    with django_capture_on_commit_callbacks(execute=True):
        sent = signed_in.post(reverse("thread-import"), {
            "file": SimpleUploadedFile("broken.mbox", mbox_bytes("broken.mbox"))})
    assert sent.status_code == 302 and "/threads/import/" in sent["Location"]
    response = signed_in.get(sent["Location"])
    html = response.content.decode()
    assert response.status_code == 200
    assert '<strong class="imported">3</strong>' in html
    assert "unknown charset" in html and "no mail headers" in html


def test_comparison_report_is_offered_as_a_reply_draft(signed_in, poster, monkeypatch):
    from discussions import drafts

    monkeypatch.setitem(drafts._SOURCES, "comparison",
                        lambda key, site: f"report {key} from {site}/c/{key}/\n")
    services.thread_create(user=poster, subject="s", body="first")
    post = Post.objects.get()
    page = signed_in.get(reverse("message-reply", args=[post.message_id]),
                         {"draft": "comparison:ab12"})
    assert page.context["form"].initial["body"] == "report ab12 from http://testserver/c/ab12/\n"


@pytest.mark.parametrize("message_id", [
    "20080211100000.GA1@example.org", "a/b@c", "x\"y&z@evil", "sp ace+%25@x", "ünï@x", "~'*@x"])
def test_post_url_is_what_reverse_builds(message_id):
    post = Post(message_id=message_id)
    assert post.url == reverse("message-detail", args=[message_id])


def test_a_real_comparisons_text_report_becomes_the_reply_draft(signed_in, poster):
    from benchmarks.comparisons.spec import parse_spec
    from benchmarks.services.comparisons import comparison_create

    runs = [make_run("2.6.22", [3332, 3350]), make_run("2.6.24", [8953, 9001])]
    comparison = comparison_create(spec=parse_spec(
        {"title": "create/join", "runs": [r.pk for r in runs], "x": "kernel"}))
    services.thread_create(user=poster, subject="s", body="first")
    post = Post.objects.get()
    page = signed_in.get(reverse("message-reply", args=[post.message_id]),
                         {"quote": "1", "draft": f"comparison:{comparison.slug}"})
    body = page.context["form"].initial["body"]
    assert body.startswith("On ") and "> first" in body
    assert f"/c/{comparison.slug}/" in body and "2.6.24" in body

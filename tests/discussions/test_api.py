"""REST API v1 threads: the contract of docs/discussions.md, JSON errors, auth, rate limit."""

import json

import pytest
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile

from discussions.models import Post, Thread, ThreadFollow
from tests.factories import make_run

pytestmark = pytest.mark.django_db


def post_json(client, url, body):
    return client.post(url, json.dumps(body), content_type="application/json")


def test_start_a_thread_on_a_run_and_read_it_back(api_client):
    run = make_run()
    response = post_json(api_client, "/api/v1/threads/", {
        "subject": "Is 2.6.24 really slower?", "body": "time 9000 ms vs 3300 ms\n",
        "attach_to": {"type": "run", "id": run.pk}})
    assert response.status_code == 201, response.content
    thread_id = response.json()["id"]
    data = api_client.get(f"/api/v1/threads/{thread_id}/").json()
    assert data["attach_to"] == {"type": "run", "id": str(run.pk)}
    [post] = data["posts"]
    assert set(post) >= {"message_id", "in_reply_to", "author", "date", "subject", "depth",
                         "body", "runs"}
    assert post["author"] == "harness-user" and post["depth"] == 0 and post["runs"] == []


def test_replies_nest_under_in_reply_to_and_come_in_thread_order(api_client):
    thread_id = post_json(api_client, "/api/v1/threads/",
                          {"subject": "s", "body": "first"}).json()["id"]
    first = Post.objects.get()
    a = post_json(api_client, f"/api/v1/threads/{thread_id}/posts/", {"body": "a"}).json()
    b = post_json(api_client, f"/api/v1/threads/{thread_id}/posts/",
                  {"body": "b", "subject": "Re: s (b)"}).json()
    c = post_json(api_client, f"/api/v1/threads/{thread_id}/posts/",
                  {"body": "c", "in_reply_to": a["message_id"]})
    assert c.status_code == 201 and c.json()["depth"] == 2
    assert a["in_reply_to"] == first.message_id and b["subject"] == "Re: s (b)"
    posts = api_client.get(f"/api/v1/threads/{thread_id}/").json()["posts"]
    assert [p["body"] for p in posts] == ["first", "a", "c", "b"]
    assert [p["depth"] for p in posts] == [0, 1, 2, 1]


def test_errors_are_json_with_4xx(api_client, client):
    cases = [
        (api_client, {"subject": "", "body": "x"}, 400, "subject"),
        (api_client, {"subject": "s", "body": "  "}, 400, "body"),
        (api_client, {"subject": "s", "body": "x", "attach_to": {"type": "run", "id": "999"}},
         400, "no run"),
        (api_client, {"subject": "s", "body": "x", "attach_to": {"type": "planet", "id": "1"}},
         400, "attach_to.type"),
        (client, {"subject": "s", "body": "x"}, 401, "credentials"),
    ]
    for who, body, status, words in cases:
        response = post_json(who, "/api/v1/threads/", body)
        assert response.status_code == status, (body, response.content)
        assert words in response.json()["error"], response.json()
    assert api_client.get("/api/v1/threads/424242/").json() == {
        "error": "No Thread matches the given query.", "field": None, "line": None}
    bad = post_json(api_client, "/api/v1/threads/1/posts/", {"body": "x"})
    assert bad.status_code == 404 and "error" in bad.json()
    assert Thread.objects.count() == 0


def test_reply_to_unknown_or_foreign_message_is_a_400(api_client):
    one = post_json(api_client, "/api/v1/threads/", {"subject": "one", "body": "x"}).json()
    two = post_json(api_client, "/api/v1/threads/", {"subject": "two", "body": "y"}).json()
    foreign = two["posts"][0]["message_id"]
    for reply_to, words in [("nope@x", "no message"), (foreign, "another thread")]:
        response = post_json(api_client, f"/api/v1/threads/{one['id']}/posts/",
                             {"body": "z", "in_reply_to": reply_to})
        assert response.status_code == 400 and words in response.json()["error"]


def test_per_user_rate_limit_is_a_429(api_client, settings):
    settings.DISCUSSIONS_POSTS_PER_HOUR = 2
    thread_id = post_json(api_client, "/api/v1/threads/",
                          {"subject": "s", "body": "1"}).json()["id"]
    assert post_json(api_client, f"/api/v1/threads/{thread_id}/posts/",
                     {"body": "2"}).status_code == 201
    limited = post_json(api_client, f"/api/v1/threads/{thread_id}/posts/", {"body": "3"})
    assert limited.status_code == 429 and "an hour" in limited.json()["error"]
    assert Post.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_import_endpoint_follows_the_contract(api_client, mbox_bytes):
    run = make_run()
    upload = SimpleUploadedFile("lkml.mbox", mbox_bytes("threadtest.mbox"))
    response = api_client.post("/api/v1/threads/import/", {
        "file": upload, "attach_to": json.dumps({"type": "run", "id": str(run.pk)})})
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["runs_extracted"] == 9 and data["skipped"] == 1
    [thread] = data["threads"]
    assert thread["posts"] == 6 and thread["subject"].startswith("[BUG] thread create/join")
    assert Thread.objects.get().target_id == str(run.pk)
    again = api_client.post("/api/v1/threads/import/", {
        "file": SimpleUploadedFile("lkml.mbox", mbox_bytes("threadtest.mbox"))})
    assert again.status_code == 200 and again.json()["skipped"] == 7


@pytest.mark.django_db(transaction=True)
def test_import_bad_input_is_a_json_400_never_a_500(api_client, mbox_bytes):
    for payload in [mbox_bytes("not-an-mbox.txt"), b"\x1f\x8b\x08garbage", b"\x00" * 50]:
        response = api_client.post("/api/v1/threads/import/",
                                   {"file": SimpleUploadedFile("x.mbox", payload)})
        assert response.status_code == 400 and response.json()["error"]
    missing = api_client.post("/api/v1/threads/import/", {})
    assert missing.status_code == 400 and "file" in missing.json()["error"]
    anonymous = api_client.__class__().post(
        "/api/v1/threads/import/", {"file": SimpleUploadedFile("x.mbox", b"x")})
    assert anonymous.status_code == 401 and "error" in anonymous.json()


def test_followers_get_one_mail_per_new_post_but_not_for_their_own(
        api_client, other_user, api_user, django_capture_on_commit_callbacks):
    api_user.email = "harness@example.org"
    api_user.save()
    thread_id = post_json(api_client, "/api/v1/threads/",
                          {"subject": "s", "body": "1"}).json()["id"]
    ThreadFollow.objects.create(thread_id=thread_id, user=other_user)
    with django_capture_on_commit_callbacks(execute=True):
        post_json(api_client, f"/api/v1/threads/{thread_id}/posts/", {"body": "new numbers"})
    assert [m.to for m in mail.outbox] == [["jan@example.com"]]
    assert mail.outbox[0].subject == "[schedbench] Re: s"
    assert "new numbers" in mail.outbox[0].body and "/m/" in mail.outbox[0].body


def test_any_json_body_gets_a_4xx_json_answer_never_a_500(api_client):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
    values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)
    bodies = st.fixed_dictionaries({}, optional={
        "subject": values, "body": values, "attach_to": values, "in_reply_to": values}) | values

    @settings(max_examples=60, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(bodies)
    def check(body):
        for url in ("/api/v1/threads/", "/api/v1/threads/1/posts/"):
            response = post_json(api_client, url, body)
            assert response.status_code < 500, (url, body)
            if response.status_code >= 400:
                assert "error" in response.json()

    check()

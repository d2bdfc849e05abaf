"""Site search: runs, comparisons, threads, messages and machines, on the embedded SQLite
(LIKE) and on PostgreSQL (full-text search plus exact identifiers); CI runs it on both."""

import pytest
from django.db import connection
from django.test import Client

from benchmarks.comparisons.spec import parse_spec
from benchmarks.search import engine as search
from benchmarks.services.comparisons import comparison_create
from benchmarks.services.ownership import run_update, run_withdraw
from discussions import services as discussions
from discussions.models import Post
from discussions.search import post_search
from tests.factories import CORE2, make_run

pytestmark = pytest.mark.django_db

P4 = {**CORE2, "name": "p4-ht", "cpu_model": "Intel Pentium 4 HT 3.0 GHz", "cores_per_socket": 1,
      "threads_per_core": 2}


@pytest.fixture
def site(django_user_model):
    user = django_user_model.objects.create_user("ingo", email="mingo@elte.example")
    runs = {
        "cfs": make_run("2.6.22.17-cfs-v24.1", [3300.0, 3310.0], submitter=user),
        "exact": make_run("2.6.22", [3500.0, 3520.0]),
        "rc": make_run("2.6.24-rc1", [8900.0, 8950.0], machine=P4),
        "hackbench": make_run("2.6.24-rc1", [1.2, 1.3], benchmark="hackbench", metric="time_s",
                              unit="s"),
    }
    run_update(run=runs["cfs"], user=user, label="sched_yield in spin", tags=["cfs", "regression"])
    thread = discussions.thread_create(user=user, subject="threadtest slowdown on 2.6.24",
                                       body="the hackbench numbers look fine", source="api")
    post = Post.objects.get(thread=thread)
    Post.objects.filter(pk=post.pk).update(message_id="20071002.abc@host.example",
                                           author="Ingo Molnar", author_email="mingo@elte.example")
    reply = discussions.post_reply(user=user, thread=thread, source="api",
                                   body="sched_compat_yield=1 brings the spinning back")
    comparison = comparison_create(spec=parse_spec({
        "title": "Yield storm: 2.6.22 vs 2.6.24-rc1", "runs": [runs["exact"].pk, runs["rc"].pk]}))
    return {"user": user, "runs": runs, "thread": thread, "post": post, "reply": reply,
            "comparison": comparison}


def ids(q, kind):
    return [hit.id for hit in search.search_group(q, kind).hits]


def test_runs_by_exact_kernel_prefix_label_tag_and_benchmark(site):
    runs = site["runs"]
    assert ids("2.6.22", "runs")[0] == runs["exact"].pk  # the exact kernel first
    assert set(ids("2.6.22", "runs")) == {runs["exact"].pk, runs["cfs"].pk}
    assert ids("2.6.22.17-cfs-v24.1", "runs") == [runs["cfs"].pk]
    assert ids("regression", "runs") == ids("yield in spin", "runs") == [runs["cfs"].pk]
    assert ids("hackbench 2.6.24-rc1", "runs") == [runs["hackbench"].pk]  # every term
    assert ids("p4-ht", "runs") == [runs["rc"].pk]
    assert ids(f"#{runs['rc'].pk}", "runs")[0] == runs["rc"].pk
    assert ids("2.6.99", "runs") == []


def test_withdrawn_runs_are_not_found(site):
    run_withdraw(run=site["runs"]["cfs"], user=site["user"])
    assert ids("regression", "runs") == []
    assert site["runs"]["cfs"].pk not in ids("2.6.22", "runs")


def test_threads_and_messages_by_subject_author_body_and_message_id(site):
    assert ids("threadtest slowdown", "threads") == [site["thread"].pk]
    assert ids("<20071002.abc@host.example>", "posts") == ["20071002.abc@host.example"]
    assert ids("20071002.abc@host.example", "posts") == ["20071002.abc@host.example"]
    assert ids("Molnar", "posts") == ["20071002.abc@host.example"]
    assert ids("spinning", "posts") == [site["reply"].message_id]
    assert ids("mingo@elte.example", "posts") == ["20071002.abc@host.example"]
    Post.objects.filter(pk=site["reply"].pk).update(deleted=True)
    assert ids("spinning", "posts") == []


def test_comparisons_and_machines(site):
    assert ids("yield storm", "comparisons") == [site["comparison"].slug]
    assert ids(site["comparison"].slug, "comparisons") == [site["comparison"].slug]
    assert ids("pentium", "machines") == [site["runs"]["rc"].machine_id]
    assert ids("core2-laptop", "machines") == [site["runs"]["exact"].machine_id]


def test_one_query_per_group(site, django_assert_num_queries):
    with django_assert_num_queries(len(search.groups())):
        groups = search.search("2.6.24-rc1")
    assert [g.kind for g in groups] == list(search.groups())
    with django_assert_num_queries(1):
        search.search("2.6.22", kind="runs", page=1)


def test_groups_are_paginated(site):
    for number in range(3):
        make_run(f"2.6.23.{number}", [100.0 + number])
    first = search.search_group("2.6.2", "runs", per_page=4)
    second = search.search_group("2.6.2", "runs", page=2, per_page=4)
    assert first.has_next and not second.has_next
    assert len(first.hits) == 4 and len(second.hits) == 3
    assert not {h.id for h in first.hits} & {h.id for h in second.hits}


def test_the_page_escapes_and_links(site):
    run_update(run=site["runs"]["rc"], user=_staff(),
               label="<script>alert(1)</script>")
    html = Client().get("/search/", {"q": "2.6.24-rc1"}).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert" not in html
    assert f'href="/runs/{site["runs"]["rc"].pk}/"' in html
    assert f'href="/c/{site["comparison"].slug}/"' in html
    assert 'id="site-search-q"' in html  # the header box, on every page
    assert 'id="site-search-q"' in Client().get("/machines/").content.decode()
    paged = Client().get("/search/", {"q": "2.6.2", "type": "runs", "page": "1"})
    assert paged.status_code == 200 and 'id="search-runs"' in paged.content.decode()
    empty = Client().get("/search/", {"q": "no-such-thing-anywhere"}).content.decode()
    assert "Nothing matches" in empty


def _staff():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("staffer", is_staff=True)


def test_api_shape_and_pagination(site):
    for number in range(25):
        make_run(f"9.{number}", [float(number + 1)])
    body = Client().get("/api/v1/search/", {"q": "9.", "type": "runs"}).json()
    assert body["q"] == "9." and len(body["groups"]) == 1
    group = body["groups"][0]
    assert group["type"] == "runs" and group["page"] == 1 and len(group["results"]) == 20
    assert group["next"].startswith("http://testserver/api/v1/search/?")
    second = Client().get(group["next"]).json()["groups"][0]
    assert second["page"] == 2 and second["next"] is None and len(second["results"]) == 5
    hit = group["results"][0]
    assert set(hit) == {"type", "id", "title", "detail", "url"}
    assert hit["url"].startswith("http://testserver/runs/")
    overview = Client().get("/api/v1/search/", {"q": "threadtest"}).json()
    assert [g["type"] for g in overview["groups"]] == list(search.groups())


@pytest.mark.parametrize("params, field", [
    ({}, "q"), ({"q": "  "}, "q"), ({"q": "x" * 201}, "q"), ({"q": "a\x00b"}, "q"),
    ({"q": "x", "type": "kernels"}, "type"), ({"q": "x", "type": "runs", "page": "0"}, "page"),
    ({"q": "x", "type": "runs", "page": "abc"}, "page"),
])
def test_api_bad_queries_are_400(params, field):
    answer = Client().get("/api/v1/search/", params)
    assert answer.status_code == 400
    assert answer.json()["field"] == field and answer.json()["line"] is None
    page = Client().get("/search/", params)
    assert page.status_code == (200 if field == "q" and not params.get("q", "").strip()
                                else 400)


def test_postgresql_uses_full_text_search(site):
    """Words in any order and form the FTS parser splits, which LIKE on the whole string
    would miss; on SQLite every term still has to occur."""
    found = ids("numbers hackbench", "posts")
    assert found == ["20071002.abc@host.example"]
    if connection.vendor == "postgresql":
        sql = str(post_search("hackbench").query)
        assert "search_vector" in sql and "to_tsquery" in sql and "to_tsvector" not in sql
    # the stored vector follows edits (a trigger on PostgreSQL)
    Post.objects.filter(pk=site["reply"].pk).update(body="now about pipelines")
    assert ids("pipelines", "posts") == [site["reply"].message_id]
    assert ids("spinning", "posts") == []
    assert ids("slowdo", "threads") == [site["thread"].pk]  # every term is also a prefix
    for odd in ("'", "\\", ":*", "&|!", "<>", "()", "a'b & c", "%"):
        # quoted: nothing typed reaches the tsquery parser (or LIKE) as syntax
        assert all(g.hits == [] for g in search.search(odd)), odd

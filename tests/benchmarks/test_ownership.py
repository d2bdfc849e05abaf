"""Owners fixing their runs: label and tags, withdrawal and restoration, in the services, the
API and the pages; withdrawn runs leave lists and new comparisons, frozen ones keep them."""

import json

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client

from benchmarks import selectors
from benchmarks.comparisons.spec import SpecError, parse_spec
from benchmarks.errors import InputError
from benchmarks.models import Run, RunVisibilityChange
from benchmarks.services.comparisons import comparison_create
from benchmarks.services.ownership import run_restore, run_update, run_withdraw
from benchmarks.services.tokens import token_create
from tests.factories import make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user("owner")


@pytest.fixture
def stranger(django_user_model):
    return django_user_model.objects.create_user("stranger")


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("admin", is_staff=True)


@pytest.fixture
def run(owner):
    return make_run("2.6.22.17", [3300.0, 3310.0, 3290.0], submitter=owner)


def token_client(user) -> Client:
    _, key = token_create(user=user, name="t")
    return Client(HTTP_AUTHORIZATION=f"Token {key}")


# --- services ------------------------------------------------------------------------------

def test_owner_sets_label_and_tags(run, owner):
    run_update(run=run, user=owner, label="  SCHED_BATCH ", tags="cfs, regression cfs  v24")
    run.refresh_from_db()
    assert run.label == "SCHED_BATCH" and run.tags == ["cfs", "regression", "v24"]
    run_update(run=run, user=owner, tags=["v24"])  # the label is left alone
    run.refresh_from_db()
    assert run.label == "SCHED_BATCH" and run.tags == ["v24"]


@pytest.mark.parametrize("changes, field", [
    ({"tags": ["has space"]}, "tags"), ({"tags": ["x" * 51]}, "tags"),
    ({"tags": [f"t{i}" for i in range(21)]}, "tags"), ({"tags": [3]}, "tags"),
    ({"tags": {"a": 1}}, "tags"), ({"label": "x" * 201}, "label"),
    ({"label": "evil\u202egnp.exe"}, "label"), ({"label": 7}, "label"),
])
def test_bad_labels_and_tags_name_the_field(run, owner, changes, field):
    with pytest.raises(InputError) as caught:
        run_update(run=run, user=owner, **changes)
    assert caught.value.field == field
    run.refresh_from_db()
    assert run.label == "" and run.tags == []


def test_only_the_owner_or_staff_change_a_run(run, stranger, staff):
    for attempt in (lambda: run_update(run=run, user=stranger, label="mine now"),
                    lambda: run_withdraw(run=run, user=stranger)):
        with pytest.raises(PermissionDenied):
            attempt()
    run_update(run=run, user=staff, tags=["checked"])
    assert Run.objects.get(pk=run.pk).tags == ["checked"]


def test_withdraw_hides_the_run_and_staff_restore_it(run, owner, staff):
    other = make_run("2.6.24", [8900.0, 8950.0])
    run_withdraw(run=run, user=owner)
    run_withdraw(run=run, user=owner)  # twice: nothing more happens
    assert RunVisibilityChange.objects.filter(run_id=run.pk).count() == 1
    assert list(selectors.run_filter({}).runs) == [other]
    assert [k.version for k in selectors.kernels_in_use()] == ["2.6.24"]
    assert {b.slug: b.run_count for b in selectors.benchmarks_with_counts()} == {"threadtest": 1}
    assert list(selectors.recent_runs()) == [other]
    with pytest.raises(PermissionDenied):
        run_restore(run=run, user=owner)  # owners withdraw; only staff restore
    run_restore(run=run, user=staff)
    assert set(selectors.run_filter({}).runs) == {run, other}


def test_new_comparisons_leave_withdrawn_runs_out(run, owner):
    other = make_run("2.6.24", [8900.0, 8950.0])
    run_withdraw(run=run, user=owner)
    by_filter = comparison_create(spec=parse_spec({"filters": {"benchmark": "threadtest"}}))
    assert by_filter.run_ids == [other.pk]
    with pytest.raises(SpecError) as caught:
        comparison_create(spec=parse_spec({"runs": [run.pk, other.pk]}))
    assert caught.value.field == "runs" and "withdrawn" in caught.value.message


def test_a_withdrawn_result_sent_again_is_a_new_run(run, owner):
    """Not a silent link to the hidden run: the uploader meant to publish it."""
    again = make_run("2.6.22.17", [3300.0, 3310.0, 3290.0], submitter=owner)
    assert again.pk == run.pk and again.already_stored  # visible: linked, as before
    run_withdraw(run=run, user=owner)
    fresh = make_run("2.6.22.17", [3300.0, 3310.0, 3290.0], submitter=owner)
    assert fresh.pk != run.pk and not fresh.already_stored and fresh.withdrawn is None


# --- API -------------------------------------------------------------------------------------

def test_api_patch_and_delete_for_the_owner(run, owner):
    api = token_client(owner)
    answer = api.patch(f"/api/v1/runs/{run.pk}/", {"label": "v24.1", "tags": ["cfs", "smp"]},
                       content_type="application/json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["label"] == "v24.1" and answer.json()["tags"] == ["cfs", "smp"]
    assert api.delete(f"/api/v1/runs/{run.pk}/").status_code == 204
    assert Client().get("/api/v1/runs/").json()["count"] == 0
    detail = Client().get(f"/api/v1/runs/{run.pk}/").json()  # still readable, and says so
    assert detail["withdrawn"] is not None and detail["tags"] == ["cfs", "smp"]


def test_api_refuses_strangers_and_anonymous_with_the_error_shape(run, stranger, owner):
    body = json.dumps({"label": "x"})
    anonymous = Client().patch(f"/api/v1/runs/{run.pk}/", body, content_type="application/json")
    assert anonymous.status_code == 401
    assert set(anonymous.json()) >= {"error", "field", "line"}
    assert Client().delete(f"/api/v1/runs/{run.pk}/").status_code == 401
    api = token_client(stranger)
    for answer in (api.patch(f"/api/v1/runs/{run.pk}/", body, content_type="application/json"),
                   api.delete(f"/api/v1/runs/{run.pk}/")):
        assert answer.status_code == 403
        assert answer.json()["error"].startswith("only the submitter") and "field" in answer.json()
    bad_body = api.patch(f"/api/v1/runs/{run.pk}/", json.dumps({"tags": "x"}),
                         content_type="application/json")
    assert bad_body.status_code == 403  # a stranger is refused before the body is read
    assert Run.objects.get(pk=run.pk).withdrawn is None
    assert token_client(owner).post(f"/api/v1/runs/{run.pk}/restore/").status_code == 403


@pytest.mark.parametrize("body, field", [
    ({"tags": "not a list"}, "tags"), ({"tags": ["a b"]}, "tags"), ({"label": None}, "label"),
    ({"kernel": "2.6.99"}, "kernel"), ([1, 2], None),
])
def test_api_bad_patch_bodies_are_400_naming_the_field(run, owner, body, field):
    answer = token_client(owner).patch(f"/api/v1/runs/{run.pk}/", json.dumps(body),
                                       content_type="application/json")
    assert answer.status_code == 400, answer.content
    assert answer.json()["field"] == field and answer.json()["line"] is None


def test_api_staff_restore(run, owner, staff):
    run_withdraw(run=run, user=owner)
    answer = token_client(staff).post(f"/api/v1/runs/{run.pk}/restore/")
    assert answer.status_code == 200 and answer.json()["withdrawn"] is None
    assert Client().get("/api/v1/runs/").json()["count"] == 1


# --- pages and permalinks -------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_withdraw_and_restore_keep_a_permalink_byte_identical(run, owner, staff):
    other = make_run("2.6.24", [8900.0, 8950.0, 8990.0])
    comparison = comparison_create(spec=parse_spec({"runs": [run.pk, other.pk]}))
    visitor, slug = Client(), comparison.slug
    paths = (f"/c/{slug}/", f"/c/{slug}.json", f"/c/{slug}.csv", f"/c/{slug}.txt")
    before = {path: visitor.get(path).content for path in paths}
    run_withdraw(run=run, user=owner)
    during = {path: visitor.get(path).content for path in paths}
    for path in paths[1:]:
        assert during[path] == before[path], path  # the frozen numbers never move
    assert b'id="withdrawn-runs"' in during[paths[0]]
    assert f'href="/runs/{run.pk}/">#{run.pk}</a>) was withdrawn'.encode() in during[paths[0]]
    run_restore(run=run, user=staff)
    after = {path: visitor.get(path).content for path in paths}
    assert after == before


def test_run_page_owner_form_and_withdrawn_notice(run, owner, stranger, staff):
    page = Client()
    page.force_login(owner)
    assert b'id="run-owner"' in page.get(f"/runs/{run.pk}/").content
    answer = page.post(f"/runs/{run.pk}/edit/", {"label": "<b>batch</b>", "tags": "cfs smp"})
    assert answer.status_code == 302
    html = page.get(f"/runs/{run.pk}/").content.decode()
    assert "&lt;b&gt;batch&lt;/b&gt;" in html and "<b>batch</b>" not in html
    assert 'href="/runs/?tag=cfs"' in html
    page.post(f"/runs/{run.pk}/edit/", {"label": "", "tags": "bad tag!"})
    assert Run.objects.get(pk=run.pk).tags == ["cfs", "smp"]  # refused, nothing changed
    page.post(f"/runs/{run.pk}/withdraw/")
    html = page.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="run-withdrawn"' in html and 'id="run-restore"' not in html
    assert f"/runs/{run.pk}/" not in page.get("/runs/").content.decode()
    nosy = Client()
    nosy.force_login(stranger)
    assert b'id="run-owner"' not in nosy.get(f"/runs/{run.pk}/").content
    assert nosy.post(f"/runs/{run.pk}/edit/", {"label": "x"}).status_code == 403
    admin = Client()
    admin.force_login(staff)
    assert b'id="run-restore"' in admin.get(f"/runs/{run.pk}/").content
    admin.post(f"/runs/{run.pk}/restore/")
    assert Run.objects.get(pk=run.pk).withdrawn is None


def test_the_schema_documents_patch_delete_restore_and_search(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    run = schema["paths"]["/api/v1/runs/{id}/"]
    assert {"200", "400", "401", "403", "404"} <= set(run["patch"]["responses"])
    assert {"204", "401", "403", "404"} <= set(run["delete"]["responses"])
    body = run["patch"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    fields = schema["components"]["schemas"][body.rsplit("/", 1)[1]]["properties"]
    assert set(fields) == {"label", "tags"} and fields["tags"]["type"] == "array"
    assert {"200", "403"} <= set(schema["paths"]["/api/v1/runs/{id}/restore/"]["post"]
                                 ["responses"])
    found = schema["paths"]["/api/v1/search/"]["get"]
    assert {"200", "400"} <= set(found["responses"])
    assert [p for p in found["parameters"] if p["name"] == "q"][0]["required"] is True


def test_runs_filter_by_tag_in_lists_api_and_comparisons(run, owner):
    other = make_run("2.6.24", [8900.0, 8950.0], submitter=owner)
    make_run("2.6.25", [7000.0, 7100.0], submitter=owner)
    run_update(run=run, user=owner, tags=["cfs", "smp"])
    run_update(run=other, user=owner, tags=["cfs-v24"])  # a longer tag is not the tag cfs
    assert list(selectors.run_filter({"tag": "cfs"}).runs) == [run]
    assert list(selectors.run_filter({"tag": "cfs-v24"}).runs) == [other]
    assert selectors.run_filter({"tag": "bad tag"}).problems
    assert [r["id"] for r in Client().get("/api/v1/runs/", {"tag": "smp"}).json()["results"]] \
        == [run.pk]
    assert f'href="/runs/{run.pk}/"' in Client().get("/runs/", {"tag": "cfs"}).content.decode()
    both = comparison_create(spec=parse_spec({"filters": {"tag": "cfs"}}))
    assert both.run_ids == [run.pk]
    page = Client().get(f"/runs/{run.pk}/").content.decode()
    assert 'href="/runs/?tag=cfs"' in page
    assert 'name="tag" value="cfs"' in Client().get("/compare/", {"tag": "cfs"}).content.decode()


def test_a_refused_label_and_tags_come_back_in_the_form_with_the_reason(run, owner):
    """After a refused edit the page showed the stored label and tags, and what the owner had
    typed was gone."""
    page = Client()
    page.force_login(owner)
    answer = page.post(f"/runs/{run.pk}/edit/", {"label": "<i>first</i> try",
                                                 "tags": "cfs bad,tag!"})
    assert answer.status_code == 400
    html = answer.content.decode()
    form = html.split('id="run-owner"', 1)[1].split("</section>", 1)[0]
    assert 'value="&lt;i&gt;first&lt;/i&gt; try"' in form
    assert 'value="cfs bad,tag!"' in form
    assert 'aria-invalid="true"' in form
    assert "Label and tags not saved: " in html.split('id="run-owner"', 1)[0]  # and why
    assert Run.objects.get(pk=run.pk).label == run.label  # refused: nothing changed

"""The upload preview through `POST /api/v1/uploads/`: source lines, per-heading corrections,
labels, UNASSIGNED blocks refused at commit by their lines, refusals linking the format help."""

import json

import pytest

from benchmarks.models import Artifact, Run

pytestmark = pytest.mark.django_db

SWEEP = ("2.6.22.17:\nLoop to 1M: 5210 ms\nLoop to 10M: 24030 ms\n"
         "2.6.26-rc2-smp (git from this morning)\nLoop to 1M: 4105 ms\n")
UNSURE = "2.6.22.17:\nLoop to 1M: 5210 ms\nrebooted, warm now\nLoop to 10M: 24030 ms\n"


def post(client, text, **fields):
    return client.post("/api/v1/uploads/", {"text": text, "machine": "box", **fields})


def test_dry_run_shows_each_runs_source_lines_and_label(api_client):
    body = post(api_client, SWEEP, dry_run="1").json()
    first, second, annotated = body["runs"]
    assert first["source"] == [[1, "2.6.22.17:"], [2, "Loop to 1M: 5210 ms"]]
    assert second["source"] == [[1, "2.6.22.17:"], [3, "Loop to 10M: 24030 ms"]]
    assert first["source_key"] == second["source_key"] == "heading:1:2.6.22.17"
    assert (annotated["kernel"], annotated["label"]) == ("2.6.26-rc2-smp", "git from this morning")
    assert not any(run["unassigned"] for run in body["runs"])
    assert Run.objects.count() == 0


def test_correcting_a_heading_corrects_every_row_from_it(api_client):
    assign = {"heading:1:2.6.22.17": {"kernel": "2.6.22.17-smp"},
              "heading:4:2.6.26-rc2-smp": {"label": "git 3f2a1b"}}
    response = post(api_client, SWEEP, assign=json.dumps(assign))
    assert response.status_code == 201, response.content
    stored = sorted(Run.objects.values_list("kernel__version", "params__loops", "label"))
    assert stored == [("2.6.22.17-smp", 1_000_000, ""), ("2.6.22.17-smp", 10_000_000, ""),
                      ("2.6.26-rc2-smp", 1_000_000, "git 3f2a1b")]


def test_unassigned_block_is_previewed_then_refused_at_commit_by_its_lines(api_client):
    runs = post(api_client, UNSURE, dry_run="1").json()["runs"]
    sure, unsure = runs
    assert (sure["kernel"], sure["unassigned"]) == ("2.6.22.17", False)
    assert (unsure["kernel"], unsure["unassigned"], unsure["missing"]) == (None, True, ["kernel"])
    assert unsure["lines"] == [4, 4] and unsure["source"] == [[4, "Loop to 10M: 24030 ms"]]

    refused = post(api_client, UNSURE)
    assert refused.status_code == 400
    assert refused.json()["line"] == 4 and "line 4" in refused.json()["error"]
    assert Run.objects.count() == 0 and Artifact.objects.count() == 0  # nothing half-written

    assign = {unsure["source_key"]: {"kernel": "2.6.22.17", "label": "after reboot"}}
    committed = post(api_client, UNSURE, assign=json.dumps(assign))
    assert committed.status_code == 201, committed.content
    assert sorted(Run.objects.values_list("kernel__version", "params__loops", "label")) == [
        ("2.6.22.17", 1_000_000, ""), ("2.6.22.17", 10_000_000, "after reboot")]


def test_an_unassigned_table_block_spans_its_columns(api_client):
    text = "loops   2.6.22  2.6.24\n1M      4015    8286\nswitched governor\n10M  24030  30120\n"
    runs = post(api_client, text, dry_run="1").json()["runs"]
    unsure = [run for run in runs if run["unassigned"]]
    assert [run["source_key"] for run in unsure] == ["block:4.1", "block:4.2"]
    assert all(run["metrics"]["time_ms"]["values"] in ([24030], [30120]) for run in unsure)
    refused = post(api_client, text)
    assert refused.status_code == 400 and refused.json()["line"] == 4


def test_assignment_must_be_an_object_of_text(api_client):
    response = post(api_client, UNSURE, assign=json.dumps({"block:4": {"kernel": 5}}))
    assert response.status_code == 400
    assert "assign" in response.json()["error"]


def test_refusals_name_the_closest_layout_and_link_its_example(api_client):
    malformed = post(api_client, "Loop to 10k:\n2.6.22 time lots ms\n", format="sweep")
    assert malformed.status_code == 400
    assert (malformed.json()["layout"], malformed.json()["help"]) == (
        "sweep", "/formats/#format-sweep")
    header = post(api_client, "old kernel new kernel\nhackbench 1 0.9\n")
    assert header.status_code == 400 and header.json()["line"] == 1
    assert header.json()["help"] == "/formats/#format-normalized"
    unknown = post(api_client, "nothing to see here\n")
    assert unknown.status_code == 400 and unknown.json()["help"].startswith("/formats/")


def test_format_help_page_renders_the_docs_with_copyable_examples(client):
    page = client.get("/formats/")
    assert page.status_code == 200
    html = page.content.decode()
    for name in ("sweep", "kernel-table", "normalized", "results-file"):
        assert f'id="format-{name}"' in html
    assert "Loop to 1M: 5210 ms" in html and "data-copy" in html
    assert "Ingo&#x27;s pipe test" in html  # escaped, never raw HTML from the docs


def test_upload_page_links_the_format_help(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("u", password="pw-long-enough"))
    assert 'href="/formats/"' in client.get("/upload/").content.decode()

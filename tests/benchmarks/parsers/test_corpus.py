"""The paste corpus: every paste yields exactly the runs written down beside it, both from the
parsers and through `POST /api/v1/uploads/` (dry run, commit, refusal, assignment)."""

import json

import pytest

from benchmarks.models import Artifact, Run
from benchmarks.parsers import ParseError, parse_text

from .corpus import expected, paste_names, paste_text, runs_view

NAMES = paste_names()


def test_the_corpus_is_large_and_complete():
    assert len(NAMES) >= 60
    for name in NAMES:
        assert expected(name), name  # every paste has its expectation beside it
    refused = [name for name in NAMES if "error" in expected(name)]
    unsure = [name for name in NAMES if expected(name).get("unassigned")]
    assert 2 <= len(refused) < 10 and len(unsure) >= 8


@pytest.mark.parametrize("name", NAMES)
def test_parsers_yield_the_runs_written_down(name):
    wanted = expected(name)
    if "error" in wanted:
        with pytest.raises(ParseError) as caught:
            parse_text(paste_text(name))
        assert caught.value.line == wanted["error"]["line"]
        assert wanted["error"]["says"] in caught.value.message
        return
    view = runs_view(parse_text(paste_text(name)))
    assert view == {key: wanted[key] for key in ("format", "runs", "unassigned")}


def _post(client, name, **fields):
    wanted = expected(name)
    data = {"text": paste_text(name), "machine": "corpus-box", **wanted.get("upload", {}),
            **fields}
    return client.post("/api/v1/uploads/", data)


def _comparable(run: dict) -> tuple:
    values = {name: metric["values"] for name, metric in run["metrics"].items()}
    return run["kernel"], run["benchmark"], run["params"], values


def _wanted(run: dict, wanted: dict) -> tuple:
    kernel = run["kernel"] or wanted.get("upload", {}).get("kernel")
    return kernel, run["benchmark"], run["params"], run["metrics"]


@pytest.mark.django_db
@pytest.mark.parametrize("name", NAMES)
def test_upload_api_dry_run_and_commit(api_client, name):
    wanted = expected(name)
    response = _post(api_client, name, dry_run="1")
    if "error" in wanted:
        assert response.status_code == 400, response.content
        body = response.json()
        assert body["line"] == wanted["error"]["line"]
        assert body["help"].startswith("/formats/")  # every refusal links the format help
        assert Artifact.objects.count() == 0
        return
    assert response.status_code == 200, response.content
    runs = response.json()["runs"]
    sure = [_comparable(run) for run in runs if not run["unassigned"]]
    assert sure == [_wanted(run, wanted) for run in wanted["runs"]]
    unsure = [run for run in runs if run["unassigned"]]
    assert [run["missing"] for run in unsure] == [u["missing"] for u in wanted["unassigned"]]
    assert all(run["source"] for run in runs)  # each run shows the lines it came from

    committed = _post(api_client, name)
    if unsure:
        assert committed.status_code == 400, committed.content
        first = min(run["lines"][0] for run in unsure)
        assert committed.json()["line"] == first
        assert Run.objects.count() == 0 and Artifact.objects.count() == 0
    else:
        assert committed.status_code == 201, committed.content
        assert Run.objects.count() == len(wanted["runs"])


@pytest.mark.django_db
@pytest.mark.parametrize("name", [n for n in NAMES if expected(n).get("unassigned")])
def test_unassigned_blocks_commit_once_assigned(api_client, name):
    runs = _post(api_client, name, dry_run="1").json()["runs"]
    assign = {}
    for run in runs:
        if run["unassigned"]:
            fix = {"kernel": "2.6.99-assigned"} if "kernel" in run["missing"] else {}
            params = {m[len("param."):]: 777 for m in run["missing"] if m.startswith("param.")}
            assign[run["source_key"]] = {**fix, **({"params": params} if params else {})}
    response = _post(api_client, name, assign=json.dumps(assign))
    assert response.status_code == 201, response.content
    wanted = expected(name)
    assert Run.objects.count() == len(wanted["runs"]) + len(wanted["unassigned"])
    assigned = Run.objects.filter(kernel__version="2.6.99-assigned").count()
    assert assigned == sum("kernel" in u["missing"] for u in wanted["unassigned"])

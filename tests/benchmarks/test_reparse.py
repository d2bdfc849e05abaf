import io

import pytest
from django.core.management import call_command

from benchmarks import parsers
from benchmarks.models import Artifact, Run
from benchmarks.services.ingest import UploadMetadata, upload_ingest

pytestmark = pytest.mark.django_db


def ingest(text: str, **metadata) -> Artifact:
    outcome = upload_ingest(
        stream=io.BytesIO(text.encode()),
        filename="out.txt",
        metadata=UploadMetadata(**metadata),
        source="upload",
    )
    return outcome.artifact


def test_reparse_rederives_runs_with_the_stored_metadata(monkeypatch, capsys):
    artifact = ingest("time 10 ms\ntime 12 ms\n", benchmark="threadtest", kernel="2.6.24",
                      machine="box", params={"loops": 1000})
    parser = parsers.PARSERS["time-ms"]
    monkeypatch.setattr(parser, "version", parser.version + 1)  # a newer parser ships
    old_ids = set(artifact.runs.values_list("id", flat=True))
    call_command("reparse")
    out = capsys.readouterr().out
    assert "1 runs (0 removed" in out and "1 reparsed, 0 failed" in out
    [run] = Run.objects.all()
    assert run.pk in old_ids  # reparse keeps run ids
    assert run.parser_version == parser.version
    assert (run.kernel.version, run.machine.name, run.params) == ("2.6.24", "box", {"loops": 1000})
    assert list(run.samples.order_by("index").values_list("value", flat=True)) == [10, 12]


def test_current_artifacts_are_left_alone_unless_forced(capsys):
    ingest("time 10 ms\n", benchmark="threadtest", kernel="2.6.24")
    call_command("reparse")
    assert "0 reparsed" in capsys.readouterr().out
    call_command("reparse", "--force", "--dry-run")
    assert "would reparse" in capsys.readouterr().out
    assert Run.objects.count() == 1


def test_a_failed_reparse_keeps_the_old_runs(capsys):
    artifact = ingest("time 10 ms\n", benchmark="threadtest", kernel="2.6.24")
    before = list(Run.objects.values_list("id", flat=True))
    Artifact.objects.filter(pk=artifact.pk).update(forced_format="hyperfine-json")
    call_command("reparse", "--force")
    captured = capsys.readouterr()
    assert "kept as it was" in captured.err and "1 failed" in captured.out
    assert list(Run.objects.values_list("id", flat=True)) == before


RESULTS = "2.6.24:\ntime 10 ms\ntime 12 ms\n\n2.6.25:\ntime 20 ms\ntime 22 ms\n"


def test_reparse_keeps_every_run_id_and_rewrites_the_rows_in_place(client, capsys):
    artifact = ingest(RESULTS, benchmark="threadtest", machine="box")
    before = {r.kernel.version: r.pk for r in artifact.runs.select_related("kernel")}
    assert len(before) == 2
    # The uploader corrects a kernel in the stored metadata (as the preview's kernel map does).
    Artifact.objects.filter(pk=artifact.pk).update(
        metadata={**artifact.metadata, "kernel_map": {"2.6.25": "2.6.25-rc1"}})
    call_command("reparse", "--force")
    after = {r.kernel.version: r.pk for r in Run.objects.select_related("kernel")}
    assert after == {"2.6.24": before["2.6.24"], "2.6.25-rc1": before["2.6.25"]}
    assert client.get(f"/runs/{before['2.6.25']}/").status_code == 200


def test_a_run_a_reparse_no_longer_yields_redirects_to_its_successor(client):
    from benchmarks.services.ingest import _prepare_run
    from benchmarks.services.runs import Provenance, runs_replace

    artifact = ingest(RESULTS, benchmark="threadtest", machine="box")
    first, second = artifact.runs.order_by("id")
    first_id, second_id = first.pk, second.pk
    # Say a fixed parser finds the two blocks were one kernel's repeats: one run, not two.
    merged = _prepare_run(
        {"benchmark": "threadtest", "kernel": "2.6.24", "machine": "box", "policy": "",
         "label": "", "params": {}, "tunables": {}, "series": {}, "environment": {},
         "metrics": {"time_ms": {"unit": "ms", "higher_is_better": False,
                                 "values": [10, 12, 20, 22]}}, "line": 1},
        Provenance(source="upload", artifact=artifact))
    runs, removed = runs_replace(old=[first, second], new=[merged])
    assert [r.pk for r in runs] == [first_id] and removed == [second_id]
    assert list(Run.objects.get(pk=first_id).samples.order_by("index")
                .values_list("value", flat=True)) == [10, 12, 20, 22]
    assert Run.objects.get(pk=first_id).summaries.get().n == 4
    response = client.get(f"/runs/{second_id}/")
    assert response.status_code == 302 and response["Location"] == f"/runs/{first_id}/"
    assert client.get("/runs/999999/").status_code == 404


def test_the_api_redirects_a_replaced_run_to_its_successor(client):
    from benchmarks.services.runs import runs_replace

    artifact = ingest(RESULTS, benchmark="threadtest", machine="box")
    first, second = artifact.runs.order_by("id")
    kept_id, gone_id = first.pk, second.pk
    runs_replace(old=[first, second], new=[_prepare_merged(artifact)])
    response = client.get(f"/api/v1/runs/{gone_id}/")
    successor_url = f"http://testserver/api/v1/runs/{kept_id}/"
    assert response.status_code == 301 and response["Location"] == successor_url
    assert response.json() == {"error": f"run {gone_id} was replaced by run {kept_id} when its "
                               "input was reparsed", "successor": kept_id, "url": successor_url}
    followed = client.get(response["Location"])
    assert followed.status_code == 200 and followed.json()["id"] == kept_id
    for missing in ("999999", "99999999999999999999999", "abc", "\u00b2"):
        response = client.get(f"/api/v1/runs/{missing}/")
        assert response.status_code == 404 and "error" in response.json(), missing


def test_reparsing_an_upload_that_linked_to_stored_runs_stores_nothing_twice(capsys):
    first = ingest(RESULTS, benchmark="threadtest", machine="box")
    again = ingest(RESULTS, benchmark="threadtest", machine="box")
    stored = list(first.runs.order_by("id").values_list("id", flat=True))
    assert again.runs.count() == 0 and again.answered_run_ids == stored
    call_command("reparse", "--force")
    assert list(Run.objects.order_by("id").values_list("id", flat=True)) == stored
    again.refresh_from_db()
    assert again.answered_run_ids == stored


def _prepare_merged(artifact):
    """The runs of RESULTS as a fixed parser might read them: one kernel's four repeats."""
    from benchmarks.services.ingest import _prepare_run
    from benchmarks.services.runs import Provenance

    return _prepare_run(
        {"benchmark": "threadtest", "kernel": "2.6.24", "machine": "box", "policy": "",
         "label": "", "params": {}, "tunables": {}, "series": {}, "environment": {},
         "metrics": {"time_ms": {"unit": "ms", "higher_is_better": False,
                                 "values": [10, 12, 20, 22]}}, "line": 1},
        Provenance(source="upload", artifact=artifact))

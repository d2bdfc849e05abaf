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

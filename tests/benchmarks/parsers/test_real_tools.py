"""Every real-tool fixture (tests/fixtures/real/<tool>/<case>/) through the path an upload
takes: the ingest service in preview (dry run), with the params harness/schedbench.py records
from the case's command line. Each reads to the figures the tool printed (expected.json), or is
refused at the line expected.json names."""

import io
import json
import sys
from pathlib import Path

import pytest

from benchmarks.services.ingest import IngestError, UploadMetadata, upload_ingest

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real"
sys.path.insert(0, str(REAL.parents[2] / "harness"))
import schedbench  # noqa: E402

CASES = sorted(path.parent for path in REAL.glob("*/*/expected.json"))
KERNEL = "6.1.0-test"
MACHINE = "fixture-box"


def case_id(folder: Path) -> str:
    return f"{folder.parent.name}/{folder.name}"


def load(folder: Path) -> tuple[dict, bytes]:
    expected = json.loads((folder / "expected.json").read_text())
    return expected, (folder / expected["input"]).read_bytes()


def preview(data: bytes, expected: dict, **overrides) -> list[dict]:
    program = Path(expected["command"][0]).name
    meta = UploadMetadata(
        # dbench and tbench print the same banner: the harness's --benchmark names which.
        benchmark=program if program in ("dbench", "tbench") else None,
        kernel=KERNEL, machine=MACHINE, params=dict(expected["harness_params"]))
    for key, value in overrides.items():
        setattr(meta, key, value)
    outcome = upload_ingest(stream=io.BytesIO(data), filename=expected["input"], metadata=meta,
                            source="upload", dry_run=True)
    return outcome.previews


def test_at_least_forty_cases_over_every_tool():
    tools = {folder.parent.name for folder in CASES}
    assert len(CASES) >= 40
    assert tools >= {"hackbench", "cyclictest", "perf", "sysbench", "stress-ng", "dbench",
                     "tbench", "hyperfine", "schbench"}
    written = [case_id(f) for f in CASES if not load(f)[0]["recorded"]]
    assert written and all(name.startswith("schbench/") for name in written)


@pytest.mark.parametrize("folder", CASES, ids=case_id)
def test_the_harness_records_the_command_lines_params(folder):
    expected, _ = load(folder)
    assert schedbench.command_params(expected["command"]) == expected["harness_params"]


@pytest.mark.django_db
@pytest.mark.parametrize("folder", CASES, ids=case_id)
def test_real_output_reads_to_the_figures_the_tool_printed(folder):
    expected, data = load(folder)
    if "refused" in expected:
        with pytest.raises(IngestError) as caught:
            preview(data, expected)
        assert caught.value.line == expected["refused"]["line"]
        assert expected["refused"].get("hint", "") in caught.value.message
        return
    runs = preview(data, expected)
    assert [run_view(run) for run in runs] == [wanted_view(run) for run in expected["runs"]]
    for run in runs:  # what the uploader (here: the harness) said is never overwritten
        assert (run["kernel"], run["machine"], run["unassigned"]) == (KERNEL, MACHINE, False)


def run_view(run: dict) -> dict:
    view = {"benchmark": run["benchmark"], "params": run["params"],
            "metrics": {name: {"unit": m["unit"], "values": list(m["values"])}
                        for name, m in run["metrics"].items()}}
    labels = run["environment"].get("labels")
    if labels:
        view["labels"] = labels
    histogram = run["series"].get("latency_histogram")
    if histogram is not None:
        view["histogram_us"] = {str(bucket): count for bucket, count in histogram["rows"]
                                if count}
    return view


def wanted_view(run: dict) -> dict:
    view = {key: run[key] for key in ("benchmark", "params", "metrics", "labels",
                                      "histogram_us") if key in run}
    view["metrics"] = dict(view["metrics"])
    for operation, figures in run.get("operations", {}).items():
        name = operation.lower()
        view["metrics"][f"{name}_count"] = {"unit": "", "values": [figures["count"]]}
        view["metrics"][f"{name}_avg_latency_ms"] = {"unit": "ms",
                                                     "values": [figures["avg_latency_ms"]]}
        view["metrics"][f"{name}_max_latency_ms"] = {"unit": "ms",
                                                     "values": [figures["max_latency_ms"]]}
    return view


@pytest.mark.django_db
@pytest.mark.parametrize(("case", "missing"), [
    ("hackbench/pipe-thread-g4-l200", "param.transport"),
    ("sysbench/threads-t4", "param.test"),
    ("sysbench/mutex-t2", "param.test"),
])
def test_what_the_output_cannot_say_is_unassigned_without_the_command_line(case, missing):
    expected, data = load(REAL / case)
    runs = preview(data, expected, params={})
    assert [run["missing"] for run in runs] == [[missing]] and runs[0]["unassigned"]


@pytest.mark.django_db
def test_pipe_and_socket_never_pool():
    pipe = preview(*reversed(load(REAL / "hackbench/pipe-process-g2-l100")))
    socket = preview(*reversed(load(REAL / "hackbench/socket-process-g2-l100")))
    assert pipe[0]["params"]["transport"] == "pipe" and socket[0]["params"]["transport"] == \
        "socket"


@pytest.mark.django_db
def test_a_kernel_named_in_the_text_never_overwrites_the_uploads():
    text = b"                 base       patched\nhackbench        1          0.9\n"
    with pytest.raises(IngestError) as caught:
        upload_ingest(stream=io.BytesIO(text), filename="x.txt", source="upload",
                      metadata=UploadMetadata(kernel=KERNEL), dry_run=True)
    assert caught.value.line == 1 and "6.1.0-test" in caught.value.message
    assert "'base'" in caught.value.message


@pytest.mark.django_db
@pytest.mark.parametrize(("case", "layout"), [
    ("hyperfine/csv", "hyperfine-json"),
    ("sysbench/unknown-test", "sysbench"),
    ("perf/messaging-zero-groups", "perf-bench-sched"),
])
def test_the_portals_refusal_names_the_line_and_the_closest_layout(api_client, case, layout):
    expected, data = load(REAL / case)
    response = api_client.post("/api/v1/uploads/", {
        "text": data.decode(), "kernel": KERNEL, "machine": MACHINE, "dry_run": "1",
        "benchmark": expected["tool"]})
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["line"] == expected["refused"]["line"]
    assert body["layout"] == layout and body["help"].startswith("/formats/")


def test_runs_joined_by_a_harness_repeat_are_samples_of_their_setups():
    from benchmarks.parsers import parse_text

    for case, runs in (("stress-ng/cpu-1-switch-1", 2), ("tbench/c2", 1),
                       ("cyclictest/t2-q", 2), ("schbench/interim-and-final", 1)):
        text = (REAL / case / "output.txt").read_text()
        once, thrice = parse_text(text).results, parse_text(text * 3).results
        assert len(once) == len(thrice) == runs, case
        for single, joined in zip(once, thrice, strict=True):
            assert {name: list(values) * 3 for name, values in single.metrics.items()} == \
                {name: list(values) for name, values in joined.metrics.items()}, case

"""A client generated from the live schema by openapi-python-client calls the API unchanged.

The schema is the contract clients are built from: if an operation cannot be called as
generated (one component for three media types once sent all three and got "JSON parse
error"), every generated client is broken. The client is generated once per session from
/api/schema/ of pytest-django's live server into a temporary directory, imported, and used for
the README's flows; nothing in it is edited.
"""

import importlib
import inspect
import io
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from benchmarks.models import Run
from benchmarks.services.tokens import token_create
from traces.models import TraceJob

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PACKAGE = "schedbench_client"
RESULTS = "2.6.24\ntime 10765 ms\ntime 10801 ms\ntime 10799 ms\n"
TRACE = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "ftrace_burn.trace"


@pytest.fixture(scope="session")
def generated(live_server, tmp_path_factory):
    """The generated package, imported: (its api.v1 module names -> modules, models, client)."""
    root = tmp_path_factory.mktemp("generated")
    with urllib.request.urlopen(f"{live_server.url}/api/schema/?format=json") as answer:
        schema = json.load(answer)
    (root / "schema.json").write_text(json.dumps(schema))
    (root / "config.yaml").write_text("post_hooks: []\n")  # no formatter: faster, same code
    result = subprocess.run(
        [sys.executable, "-m", "openapi_python_client", "generate", "--path",
         str(root / "schema.json"), "--output-path", str(root / PACKAGE), "--meta", "none",
         "--config", str(root / "config.yaml")],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    # The one warning allowed: NDJSON, which the generator does not know, on runs/bulk/
    # (the JSON list there is generated and used below).
    output = result.stdout + result.stderr
    warnings = [line for line in output.splitlines() if line.startswith("WARNING")]
    assert warnings == ["WARNING parsing POST /api/v1/runs/bulk/ within v1."], output
    assert "Unsupported content type application/x-ndjson" in output
    sys.path.insert(0, str(root))
    try:
        package = importlib.import_module(PACKAGE)
        models = importlib.import_module(f"{PACKAGE}.models")
        types = importlib.import_module(f"{PACKAGE}.types")
    finally:
        sys.path.remove(str(root))
    return package, models, types


def operation(name: str):
    return importlib.import_module(f"{PACKAGE}.api.v1.{name}")


@pytest.fixture
def client(generated, live_server, django_user_model, celery_queue):
    package, _, _ = generated
    user = django_user_model.objects.create_user("generated-client")
    _, key = token_create(user=user, name="generated client")
    return package.AuthenticatedClient(base_url=live_server.url, token=key, prefix="Token",
                                       raise_on_unexpected_status=True, timeout=60)


def call(name: str, *args, status: int, **kwargs):
    """Call an operation as generated; its answer must have `status` and parse to a model."""
    response = operation(name).sync_detailed(*args, **kwargs)
    assert response.status_code == status, (name, response.status_code, response.content)
    assert response.parsed is not None, (name, response.content)
    assert type(response.parsed).__name__ not in ("Error", "Outage"), response.content
    return response.parsed


def test_token_auth(client):
    me = call("v1_me_retrieve", client=client, status=200)
    assert me.username == "generated-client" and me.is_staff is False


def test_upload_dry_run_as_json_then_commit_as_multipart(client, generated):
    _, models, types = generated
    preview = call("v1_uploads_create", client=client, status=200,
                   body=models.UploadJSONRequest(text=RESULTS, benchmark="threadtest",
                                                 machine="core2-duo-laptop", dry_run=True))
    assert preview.dry_run is True and preview.artifact is None
    [run] = preview.runs
    assert run.id is None and run.kernel == "2.6.24"
    assert run.metrics.additional_properties["time_ms"]["values"] == [10765, 10801, 10799]
    stored = call("v1_uploads_create", client=client, status=201,
                  body=models.UploadMultipartRequest(
                      file=types.File(payload=io.BytesIO(RESULTS.encode()),
                                      file_name="results.txt"),
                      benchmark="threadtest", machine="core2-duo-laptop",
                      params=json.dumps({"loops": 1000000})))
    [run] = stored.runs
    assert isinstance(run.id, int) and run.params.additional_properties == {"loops": 1000000}
    detail = call("v1_runs_retrieve", run.id, client=client, status=200)
    assert detail.provenance.additional_properties["artifact"]["filename"] == "results.txt"


def test_form_encoded_upload(client, generated):
    _, models, _ = generated
    answer = call("v1_uploads_create", client=client, status=200,
                  body=models.UploadFormRequest(text=RESULTS, benchmark="threadtest",
                                                dry_run=True))
    assert [run.kernel for run in answer.runs] == ["2.6.24"]


def run_body(models, kernel: str, samples: list[float]):
    return models.RunCreateRequestRequest(
        benchmark="threadtest", kernel=kernel, machine="core2-duo-laptop",
        metrics=models.RunCreateRequestRequestMetrics.from_dict({"time_ms": samples}),
        params=models.RunCreateRequestRequestParamsType0.from_dict({"loops": 1000000}))


def test_runs_one_and_bulk_then_a_filtered_list_and_a_comparison(client, generated):
    _, models, _ = generated
    created = call("v1_runs_create", client=client, status=201,
                   body=run_body(models, "2.6.22", [3311.0, 3320.0, 3302.0]))
    bulk = call("v1_runs_bulk_create", client=client, status=201,
                body=[run_body(models, "2.6.24", [8895.0, 8910.0, 8902.0]),
                      run_body(models, "2.6.25", [8790.0, 8801.0, 8795.0])])
    assert len(bulk.ids) == 2 and created.id not in bulk.ids
    listed = call("v1_runs_list", client=client, status=200, benchmark="threadtest",
                  kernel="2.6.24")
    assert [run.id for run in listed.results] == [bulk.ids[0]]
    spec = models.ComparisonSpecRequest(
        title="threadtest by kernel", x="kernel", statistic=models.StatisticEnum.MEDIAN,
        filters=models.ComparisonSpecRequestFiltersType0.from_dict({"benchmark": "threadtest"}))
    comparison = call("v1_comparisons_create", client=client, status=201, body=spec)
    frozen = call("v1_comparisons_retrieve", comparison.slug, client=client, status=200)
    assert sorted(frozen.runs) == sorted([created.id, *bulk.ids])
    cells = [cell.additional_properties for cell in frozen.cells]
    assert [(cell["x"], cell["n"]) for cell in cells] == [("2.6.22", 3), ("2.6.24", 3),
                                                          ("2.6.25", 3)]


def test_simulation_create_and_status(client, generated):
    _, models, _ = generated
    spec = models.JobSpecRequest(
        workload="threadtest", kernels=["2.6.22", "2.6.24"], repeat=1, seed=1, cpus=2,
        sweep=models.JobSpecRequestSweepType0.from_dict({"loops": [1000, 10000]}))
    job = call("v1_simulations_create", client=client, status=202, body=spec)
    status = call("v1_simulations_retrieve", job.id, client=client, status=200)
    assert status.id == job.id and status.progress.total == 4
    assert status.status.value in ("queued", "running", "succeeded")


def test_thread_create_and_reply(client, generated):
    _, models, _ = generated
    thread = call("threads_start", client=client, status=201,
                  body=models.ThreadStartRequest(subject="threadtest on 2.6.24",
                                                 body="2.6.24 takes 2.7 times as long."))
    first = thread.posts[0]
    reply = call("v1_threads_posts_create", thread.id, client=client, status=201,
                 body=models.ReplyRequest(body="Same here with 10M loops.",
                                          in_reply_to=first.message_id))
    assert reply.in_reply_to == first.message_id and reply.depth == 1
    read = call("threads_retrieve", thread.id, client=client, status=200)
    assert [post.id for post in read.posts] == [first.id, reply.id]


def test_every_read_operation_parses_its_answer(client, generated):
    """Each list and retrieve operation of the generated client, on real objects (or a 404,
    a documented answer too, where none can exist here): its answer parses to its model."""
    _, models, types = generated
    call("v1_uploads_create", client=client, status=201, body=models.UploadJSONRequest(
        text=RESULTS, benchmark="threadtest", machine="core2-duo-laptop"))
    thread = call("threads_start", client=client, status=201,
                  body=models.ThreadStartRequest(subject="s", body="b"))
    job = call("v1_simulations_create", client=client, status=202, body=models.JobSpecRequest(
        workload="threadtest", kernels=["2.6.24"], repeat=1))
    slug = call("v1_comparisons_create", client=client, status=201,
                body=models.ComparisonSpecRequest(
                    filters=models.ComparisonSpecRequestFiltersType0.from_dict({}))).slug
    bisection = call("v1_bisections_create", client=client, status=201,
                     body=models.BisectionCreateRequest(good="2.6.22", bad="2.6.24"))
    with open(TRACE, "rb") as stream:
        trace = call("v1_traces_create", client=client, status=201,
                     body=models.TraceUploadRequest(file=types.File(payload=stream,
                                                                    file_name=TRACE.name)))
    run = Run.objects.get()
    ids = {"runs": run.pk, "machines": run.machine_id, "simulations": job.id,
           "threads": thread.id, "traces": trace.id, "bisections": bisection.id}
    missing = {"v1_regressions_retrieve", "threads_import_retrieve",
               "v1_machines_calibration_retrieve"}  # nothing of these exists here: 404
    reads = sorted(name for name in operations(generated)
                   if name.endswith(("_list", "_retrieve")))
    assert len(reads) >= 25
    for name in reads:
        resource = name.removeprefix("v1_").split("_")[0]
        by_name = {"v1_benchmarks_retrieve": "threadtest", "v1_kernels_retrieve": "2.6.24",
                   "v1_comparisons_retrieve": slug, "v1_regressions_retrieve": 1,
                   "v1_regressions_thresholds_retrieve": "threadtest",
                   "threads_import_retrieve": 1,
                   # the trace's upload job (ids are not 1 on PostgreSQL, whose sequences go on)
                   "v1_traces_jobs_retrieve": TraceJob.objects.get().pk}
        args = [by_name.get(name) or ids[resource]] if path_arguments(name) else []
        extra = {"q": "threadtest"} if name == "v1_search_retrieve" else {}
        if name in missing:
            response = operation(name).sync_detailed(*args, client=client, **extra)
            assert response.status_code == 404 and type(response.parsed).__name__ == "Error"
        else:
            call(name, *args, client=client, status=200, **extra)


def operations(generated) -> list[str]:
    package, _, _ = generated
    folder = Path(package.__file__).parent / "api" / "v1"
    return [path.stem for path in folder.glob("*.py") if path.stem != "__init__"]


def path_arguments(name: str) -> list[str]:
    """The operation's path parameters: what comes before its keyword-only arguments."""
    parameters = inspect.signature(operation(name).sync_detailed).parameters.values()
    return [p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD]

"""Provenance a user can follow: the raw input behind a run (view, download, who may), the
"rerun this" recipe from what the harness recorded, and the not-exercised flag."""

import io
import json

import pytest

from benchmarks.comparisons.compute import compute
from benchmarks.comparisons.spec import parse_spec
from benchmarks.models import Run
from benchmarks.services.ingest import UploadMetadata, upload_ingest
from benchmarks.services.ownership import run_restore, run_withdraw
from tests.factories import CORE2, make_run
from tests.harness.conftest import FIXTURES, load_harness

pytestmark = pytest.mark.django_db

RAW = b"2.6.24: 5210 ms\r\n2.6.24: 5230 ms\r\n<script>alert(document.domain)</script>\r\n"


def uploaded(user):
    outcome = upload_ingest(stream=io.BytesIO(RAW), filename="my <paste>.txt",
                            metadata=UploadMetadata(benchmark="threadtest", machine="box"),
                            source="upload", submitter=user, format="kernel-time")
    return outcome.runs[0]


def test_the_run_page_links_its_raw_input_to_view_and_download(client, api_user):
    run = uploaded(api_user)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert f'href="/artifacts/{run.artifact_id}/raw/"' in page
    assert f'href="/artifacts/{run.artifact_id}/download/"' in page
    view = client.get(f"/artifacts/{run.artifact_id}/raw/")
    assert view.status_code == 200 and b"".join(view.streaming_content) == RAW
    assert view["Content-Type"] == "text/plain; charset=utf-8"  # never rendered as HTML
    assert view["X-Content-Type-Options"] == "nosniff"
    assert view["Content-Security-Policy"].startswith("sandbox")
    assert view["Content-Disposition"].startswith("inline")
    download = client.get(f"/artifacts/{run.artifact_id}/download/")
    assert download["Content-Disposition"].startswith("attachment")
    assert b"".join(download.streaming_content) == RAW


def test_raw_input_whose_runs_are_gone_stays_with_its_uploader(client, api_user,
                                                              django_user_model):
    run = uploaded(api_user)
    artifact_id = run.artifact_id
    Run.objects.filter(pk=run.pk).delete()
    assert client.get(f"/artifacts/{artifact_id}/raw/").status_code == 404
    client.force_login(django_user_model.objects.create_user("someone-else"))
    assert client.get(f"/artifacts/{artifact_id}/raw/").status_code == 404
    client.force_login(api_user)
    assert client.get(f"/artifacts/{artifact_id}/raw/").status_code == 200
    assert client.get("/artifacts/999999/raw/").status_code == 404


def test_a_withdrawn_runs_raw_input_is_its_owners_and_staffs_only(client, api_user,
                                                                  django_user_model):
    run = uploaded(api_user)
    url = f"/artifacts/{run.artifact_id}/raw/"
    assert client.get(url).status_code == 200
    run_withdraw(run=run, user=api_user)
    assert client.get(url).status_code == 404
    assert client.get(f"/artifacts/{run.artifact_id}/download/").status_code == 404
    client.force_login(django_user_model.objects.create_user("someone-else"))
    assert client.get(url).status_code == 404
    client.force_login(django_user_model.objects.create_user("root", is_staff=True))
    assert client.get(url).status_code == 200
    client.force_login(api_user)
    assert client.get(url).status_code == 200
    run_restore(run=run, user=django_user_model.objects.get(username="root"))
    client.logout()
    assert client.get(url).status_code == 200


def test_a_harness_run_shows_the_command_line_it_was_made_with(api_client, client, capsys):
    harness = load_harness()
    argv = ["run", "--benchmark", "threadtest", "--root", str(FIXTURES / "oldbox"),
            "--dry-run", "-q", "--param", "loops=1M", "--vmstat", "1", "--token", "t0ken",
            "--", "echo", "time 5210 ms"]
    assert harness.main(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    response = api_client.post("/api/v1/uploads/", payload, content_type="application/json")
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["runs"][0]["id"])
    assert run.environment["vmstat_interval_s"] == 1
    page = client.get(f"/runs/{run.pk}/").content.decode()
    recipe = ("python3 schedbench.py run --benchmark threadtest --param loops=1M --vmstat 1 "
              "--token $SCHEDBENCH_TOKEN -- echo &#x27;time 5210 ms&#x27;")
    shown = page.split('id="rerun-recipe">', 1)[1].split("</pre>", 1)[0]
    assert shown == recipe  # submits for real: no --dry-run, no --root of the test tree
    assert "t0ken" not in page


def test_a_run_without_a_recorded_command_gets_the_closest_harness_command(client):
    """threadtest is the harness's own: the command is the one `build` makes, with the options
    that give the run's params (a bare ./threadtest ran 10000 loops under loops=1000000)."""
    run = make_run("2.6.24", [1.0, 2.0, 3.0], params={"loops": 1000000, "iterations": 500})
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert ("python3 schedbench.py run --url $SCHEDBENCH_URL --token $SCHEDBENCH_TOKEN "
            "--benchmark threadtest --param iterations=500 --param loops=1000000 --repeat 3 "
            "-- ./schedbench-bin/threadtest -n 500 -l 1000000") in page
    other = make_run("2.6.24", [1.0, 2.0], benchmark="hackbench", params={"groups": 4})
    page = client.get(f"/runs/{other.pk}/").content.decode()
    assert "--param groups=4 --repeat 2 -- ./hackbench<" in page  # no options known for it


def test_the_reconstructed_threadtest_command_measures_the_runs_params(client):
    """What the harness would record from the recipe's command is the run's own params."""
    import importlib.util
    import shlex
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "harness_for_recipe", Path(__file__).resolve().parents[2] / "harness" / "schedbench.py")
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    params = {"loops": 40000000, "iterations": 100, "yield_in_spin": True, "pin": True,
              "head_start_us": 1}
    run = make_run("2.6.24", [1.0, 2.0], params=params)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    recipe = page.split('id="rerun-recipe">', 1)[1].split("</pre>", 1)[0]
    command = shlex.split(recipe.split(" -- ", 1)[1])
    recorded = harness.command_params(command)
    assert {name: recorded[name] for name in params} == params


def test_a_memory_counter_run_is_rerun_with_the_O0_build_and_the_harness_takes_it(client):
    """The threads' threadtest was built -O0 (its counter in memory): the recipe runs the
    harness's -O0 build, and the harness, which refuses a --param its command contradicts,
    takes the whole recipe (before, the -O2 build ran under --param counter=memory)."""
    import importlib.util
    import shlex
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "harness_for_recipe", Path(__file__).resolve().parents[2] / "harness" / "schedbench.py")
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    params = {"loops": 1000000, "iterations": 500, "counter": "memory", "yield_in_spin": False}
    run = make_run("2.6.22", [1.0, 2.0], params=params)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    recipe = page.split('id="rerun-recipe">', 1)[1].split("</pre>", 1)[0]
    options, command = recipe.split(" -- ", 1)
    assert command.startswith("./schedbench-bin/threadtest-O0 ")
    given = shlex.split(options)
    param_items = [given[i + 1] for i, word in enumerate(given) if word == "--param"]
    recorded = harness.run_params(shlex.split(command), param_items)
    assert {name: recorded[name] for name in params} == params


def yield_run(tasks, values=(1200.0,), **extra):
    return make_run("2.6.24", values, benchmark="yield-loop", metric="yields_per_s",
                    unit="1/s", params={"tasks": tasks}, machine=CORE2, **extra)


def test_a_yield_benchmark_with_no_more_tasks_than_cpus_is_flagged(client):
    idle, busy = yield_run(2), yield_run(4)
    page = client.get(f"/runs/{idle.pk}/").content.decode()
    assert 'id="not-exercised"' in page and "2 yielding tasks on 2 CPUs" in page
    assert 'id="not-exercised"' not in client.get(f"/runs/{busy.pk}/").content.decode()
    frozen = compute(parse_spec({"runs": [idle.pk, busy.pk], "x": "param.tasks"}))
    flags = {cell["x"]: cell["flags"] for cell in frozen["cells"]}
    assert any(f.startswith(f"scheduler not exercised in run #{idle.pk}") for f in flags["2"])
    assert not any("not exercised" in f for f in flags["4"])


def test_no_context_switch_beyond_placement_is_flagged():
    quiet = make_run("2.6.24", [3.0, 2.0], benchmark="wake", metric="context_switches",
                     unit="count", params={"threads": 4})
    lively = make_run("2.6.24", [3.0, 900.0], benchmark="wake", metric="context_switches",
                      unit="count", params={"threads": 4})
    from benchmarks.analysis.exercise import not_exercised

    reasons = not_exercised(Run.objects.select_related("benchmark", "machine"))
    assert set(reasons) == {quiet.pk} and lively.pk not in reasons
    assert "no more than placing 4 tasks" in reasons[quiet.pk]

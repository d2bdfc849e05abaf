"""Refusals a newcomer meets name the real problem (issue 23), and flows end in a next step:
each test reads the message it checks."""

import html as _html
import json
import re

import pytest

from benchmarks.comparisons.spec import parse_spec
from benchmarks.models import Comparison, Run
from benchmarks.services.comparisons import comparison_create
from bisection.models import Bisection
from simulations.models import SimulationJob

pytestmark = pytest.mark.django_db


def test_an_over_long_kernel_heading_in_a_paste_says_so_with_its_line(api_client):
    text = "2.6.24-" + "x" * 293 + "\ntime 100 ms\ntime 110 ms\n"
    response = api_client.post("/api/v1/uploads/", {"benchmark": "threadtest", "text": text,
                                                    "dry_run": "1"})
    assert response.status_code == 400
    body = response.json()
    assert body["line"] == 1
    assert "kernel of 300 characters" in body["error"] and "at most 200" in body["error"]
    assert "does not name one" not in body["error"]
    assert not Run.objects.exists()


def test_a_bearer_header_is_told_to_use_token(api_client):
    response = api_client.get("/api/v1/runs/", HTTP_AUTHORIZATION="Bearer sbt_whatever")
    assert response.status_code == 401
    assert "Token <key>" in response.json()["error"]
    assert "Bearer" in response.json()["error"]


def test_saving_the_same_comparison_twice_gives_one_permalink(api_client):
    for kernel, values in (("2.6.22", [100, 110]), ("2.6.24", [150, 160])):
        api_client.post("/api/v1/runs/", {"benchmark": "threadtest", "kernel": kernel,
                                          "metrics": {"time_ms": values}},
                        content_type="application/json")
    spec = {"filters": {"benchmark": "threadtest"}, "x": "kernel", "title": "same"}
    first = comparison_create(spec=parse_spec(spec))
    again = comparison_create(spec=parse_spec(spec))
    assert again.pk == first.pk and Comparison.objects.count() == 1
    retitled = comparison_create(spec=parse_spec({**spec, "title": "another title"}))
    assert retitled.slug != first.slug


def test_bisect_this_on_a_finding_shows_the_findings_values(client, django_user_model):
    from benchmarks.models import Benchmark, Kernel, Machine, Metric
    from regressions.models import Regression

    user = django_user_model.objects.create_user("bisector", password="a-long-password-1")
    client.force_login(user)
    benchmark = Benchmark.objects.create(name="threadtest")
    finding = Regression.objects.create(
        benchmark=benchmark, machine=Machine.objects.create(name="core2-duo-laptop"),
        metric=Metric.objects.create(benchmark=benchmark, name="time_ms", unit="ms"),
        good=Kernel.objects.create(version="2.6.22"), bad=Kernel.objects.create(version="2.6.24"),
        params={"loops": 1000000}, change=2.1)
    page = client.get(f"/bisect/new/?regression={finding.pk}").content.decode()
    for shown in ('value="2.6.22"', 'value="2.6.24"', 'value="threadtest"',
                  'value="core2-duo-laptop"', 'value="time_ms"', "loops=1000000"):
        assert shown in page
    missing = client.get("/bisect/new/?regression=999999").content.decode()
    assert "There is no finding #999999" in missing


# --- every refusal of the four forms a newcomer fills in, as the form shows it ----------------
# The upload page and the comparison builder send their fields to the API the harness uses and
# show its `error` (the upload page puts "Line N:" before it); the simulation and bisection
# forms are rendered by the server with the refusal above the fields.


@pytest.fixture
def newcomer(client, django_user_model):
    user = django_user_model.objects.create_user("newcomer", password="a-long-password-1")
    client.force_login(user)
    return client


def _upload(client, **fields):
    """What the upload page's script sends: multipart fields, signed in by the session."""
    response = client.post("/api/v1/uploads/", fields)
    return response.status_code, response.json()


@pytest.mark.parametrize("fields", [{}, {"text": ""}, {"text": "  \n\n"}])
def test_upload_with_nothing_says_what_to_send(newcomer, fields):
    status, body = _upload(newcomer, benchmark="threadtest", **fields)
    assert status == 400 and body["field"] == "file"
    assert "send a file" in body["error"] and "or text" in body["error"]


def test_upload_with_a_wrong_format_forced_names_the_layout_and_the_lines(newcomer):
    status, body = _upload(newcomer, text="2.6.22: 3332 ms\n2.6.24: 8953 ms\n",
                           format="hackbench", dry_run="1")
    assert status == 400 and body["line"] == 1
    assert body["error"].startswith("hackbench output: lines 1, 2 hold numbers")
    assert "'2.6.22: 3332 ms'" in body["error"] and "choose the format that fits" in body["error"]
    assert body["help"] == "/formats/#format-hackbench"


def test_upload_with_an_unknown_format_lists_the_formats_and_a_guess(newcomer):
    status, body = _upload(newcomer, text="2.6.22: 3332 ms\n", format="csv-ish", dry_run="1")
    assert status == 400 and body["error"] == "unknown format 'csv-ish'"
    assert "kernel-time" in body["formats"] and body["best_guess"] == "kernel-time"


def test_upload_of_text_no_parser_reads_says_to_choose_a_format(newcomer):
    status, body = _upload(newcomer, text="hello there\nhow are you\n", dry_run="1")
    assert status == 400 and "could not recognise the input format" in body["error"]
    assert body["best_guess"] is None and body["help"] == "/formats/"


def test_upload_without_a_kernel_anywhere_asks_for_one(newcomer):
    status, body = _upload(newcomer, text="time 100 ms\ntime 110 ms\n", benchmark="threadtest")
    assert status == 400 and body["field"] == "kernel" and body["line"] == 1
    assert body["error"] == "kernel: the input does not name one; give it with the upload"


def test_committing_an_unassigned_block_names_its_line_and_the_preview_row(newcomer):
    text = "2.6.22:\nLoop to 1M: 5210 ms\nsomething odd here\nLoop to 10M: 24030 ms\n"
    status, preview = _upload(newcomer, text=text, benchmark="threadtest", dry_run="1")
    assert status == 200
    assert [run["unassigned"] for run in preview["runs"]] == [False, True]
    status, body = _upload(newcomer, text=text, benchmark="threadtest")
    assert status == 400 and body["line"] == 4
    # the page shows "Line 4: not sure of the kernel for the values of line 4: ..."
    assert body["error"].startswith("not sure of the kernel for the values of line 4: they "
                                    "follow a line the parser did not understand")
    assert "UNASSIGNED row" in body["error"] and "assign['block:4']" in body["error"]
    assert not Run.objects.exists()


def test_an_unassigned_block_of_several_lines_names_the_range(newcomer):
    text = "Loop to 1M:\n2.6.22\t\ttime 4015 ms\nmissed one\n2.6.24\t\ttime 8286 ms\n" \
           "2.6.24-git19\t\ttime 8300 ms\n"
    status, body = _upload(newcomer, text=text, benchmark="threadtest")
    assert status == 400 and body["line"] == 4
    assert "for the values of lines 4-5" in body["error"]
    assert "the parameter loops" in body["error"]


@pytest.fixture
def two_runs(api_client):
    ids = []
    for kernel, values in (("2.6.22", [100, 110]), ("2.6.24", [150, 160])):
        response = api_client.post("/api/v1/runs/", {"benchmark": "threadtest", "kernel": kernel,
                                                      "metrics": {"time_ms": values}},
                                   content_type="application/json")
        ids.append(response.json()["id"])
    return ids


def _builder(client, step, body):
    """What the comparison builder sends: "Use these runs" asks options/, every change
    preview/, "Save" the comparisons endpoint; it shows `error` above the chart."""
    path = {"options": "/api/v1/comparisons/options/", "preview": "/api/v1/comparisons/preview/",
            "save": "/api/v1/comparisons/"}[step]
    response = client.post(path, json.dumps(body), content_type="application/json")
    return response.status_code, response.json().get("error")


@pytest.mark.parametrize("step", ["options", "preview", "save"])
def test_compare_with_no_runs_selected_says_to_give_runs(newcomer, two_runs, step):
    assert _builder(newcomer, step, {"runs": []}) == (
        400, "runs: must be a non-empty list of run ids")
    assert _builder(newcomer, step, {}) == (
        400, "runs: give run ids or filters (an empty {} is every run)")


def test_compare_refusals_name_the_field_and_what_would_do(newcomer, two_runs):
    first, second = two_runs
    assert _builder(newcomer, "options", {"runs": [str(first), "x7"]}) == (
        400, "runs[1]: runs item = 'x7' is not an integer")
    assert _builder(newcomer, "preview", {"runs": [first, 999999]}) == (
        400, "runs: no run(s) with id 999999")
    assert _builder(newcomer, "options", {"filters": {"kernel": "2.6.99"}}) == (
        400, "filters: no kernel '2.6.99'")
    assert _builder(newcomer, "preview", {"runs": two_runs, "metric": "speed"}) == (
        400, "metric: 'speed' is not measured by these runs; they have time_ms")
    status, error = _builder(newcomer, "preview", {"runs": two_runs, "x": "colour"})
    assert status == 400 and error.startswith("x: 'colour' is not a dimension: use kernel, ")
    assert "param.<name>" in error
    status, error = _builder(newcomer, "save", {"runs": two_runs, "series": "flavour"})
    assert status == 400 and error.startswith("series: 'flavour' is not a dimension")
    assert not Comparison.objects.exists()


def _form_error(response, element_id: str) -> str:
    """The text of a server-rendered form's refusal box."""
    found = re.search(rf'id="{element_id}">(.*?)</(?:div|p)>', response.content.decode(), re.S)
    assert found, f"no #{element_id} on the page"
    return _html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def _simulate(client, **fields):
    body = {"workload": "threadtest", "kernels": ["2.6.22"], **fields}
    response = client.post("/simulations/new/", body)
    assert response.status_code == 400
    return _form_error(response, "form-error")


def test_simulate_refusals_name_the_field_and_the_valid_values(newcomer, settings):
    error = _simulate(newcomer, kernels=["2.6.99"])
    assert error.startswith("kernels: unknown kernel '2.6.99'; valid kernels: ")
    assert "rsdl-0.31" in error
    assert _simulate(newcomer, kernels=[]).startswith(
        "kernels: kernels must be a non-empty list of kernel profiles")
    assert _simulate(newcomer, workload="volano").startswith(
        "workload: unknown workload 'volano'; valid workloads: threadtest, ")
    assert _simulate(newcomer, **{"param.threadtest.loops": "many"}) == (
        "params.loops: params.loops = 'many' is not an integer")
    assert _simulate(newcomer, **{"param.threadtest.loops": "-5"}) == (
        "params.loops: params.loops = -5 is below the minimum 0")
    assert _simulate(newcomer, **{"tunable.timeslice": "3"}).startswith(
        "tunables.timeslice: unknown tunable 'timeslice'; valid tunables: ")
    assert _simulate(newcomer, repeat="twice") == "repeat: repeat = 'twice' is not an integer"
    assert _simulate(newcomer, machine="2x2") == (
        "topology: topology '2x2' does not parse; expected SxCxT such as 1x2x1 or 2x4x2")
    assert not SimulationJob.objects.exists()


def test_simulate_too_many_points_states_the_count_and_the_limit(newcomer, settings):
    limit = settings.SIMULATION_MAX_POINTS
    values = ",".join(str(1000 * (i + 1)) for i in range(limit // 2 + 1))
    error = _simulate(newcomer, kernels=["2.6.22", "2.6.24"], sweep_axis_1="loops",
                      sweep_values_1=values)
    points = 2 * (limit // 2 + 1)
    assert error == (f"sweep: this job has {points} points (kernels x sweep values); "
                     f"the limit is {limit} points per job")
    assert not SimulationJob.objects.exists()


def _bisect(client, **fields):
    response = client.post("/bisect/new/", {"start": "1", **fields})
    assert response.status_code == 400
    return _form_error(response, "bisect-error")


def test_bisect_refusals_say_what_is_wrong_with_the_ends(newcomer):
    assert _bisect(newcomer, good="2.6.24", bad="2.6.24") == (
        "the good kernel 2.6.24 is not older than the bad kernel 2.6.24 (natural kernel "
        "order); a bisection looks for where a good kernel turned bad")
    assert _bisect(newcomer, good="2.6.24", bad="2.6.22").startswith(
        "the good kernel 2.6.24 is not older than the bad kernel 2.6.22")
    assert _bisect(newcomer, good="hello world", bad="2.6.24") == (
        "good 'hello world' is neither a kernel version nor a commit")
    for fields in ({}, {"good": "2.6.22"}):
        assert _bisect(newcomer, **fields) == (
            'give "good" and "bad" kernels (or a finding as "regression", or a `git bisect '
            'log` as "log")')
    assert _bisect(newcomer, good="2.6.22", bad="2.6.24", machine="nowhere") == (
        "no machine 'nowhere'")
    assert _bisect(newcomer, good="2.6.22", bad="2.6.24", metric="time_ms") == (
        "metric needs a benchmark")
    assert not Bisection.objects.exists()


def test_bisect_an_unknown_finding_says_so_and_where_to_pick_one(newcomer):
    response = newcomer.post("/bisect/new/", {"start": "1", "regression": "999999"})
    assert response.status_code == 400
    assert _form_error(response, "bisect-error") == "no finding 999999"
    assert _form_error(response, "bisect-no-finding").startswith(
        "There is no finding #999999: pick one from the findings or give the kernels yourself")
    assert _bisect(newcomer, regression="abc") == "regression must be a finding's id, not 'abc'"
    assert not Bisection.objects.exists()

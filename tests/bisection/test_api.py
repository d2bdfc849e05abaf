"""A bisection driven end to end through the API: runs alternate good and bad until git's
first bad commit; bad input answers 400 naming the problem; only the creator or staff writes."""

import json

import pytest
from django.test import Client

from benchmarks.models import Run
from benchmarks.services.tokens import token_create
from bisection.models import Bisection, BisectRun
from tests.factories import make_run

pytestmark = pytest.mark.django_db

GOOD = [100.0, 101.0, 99.0, 100.5, 99.5]
BAD = [130.0, 131.0, 129.0, 130.5, 129.5]
SHAS = ["1a2b3c4d5e6f", "2b3c4d5e6f70", "3c4d5e6f7081", "4d5e6f708192"]


@pytest.fixture
def ends():
    """Two runs of each end kernel, five repeats each."""
    for shift in (0.0, 0.2):  # different values: an identical result set is stored once
        make_run("6.7.0", [v + shift for v in GOOD])
        make_run("6.8.0", [v + shift for v in BAD])


def post(client, path, body, method="post"):
    call = getattr(client, method)
    return call(path, json.dumps(body), content_type="application/json")


def submit(client, bisect_id, kernel, values, **extra):
    return post(client, "/api/v1/runs/", {
        "benchmark": "threadtest", "kernel": kernel, "machine": "core2-laptop",
        "params": {"loops": 10000, "iterations": 500}, "metrics": {"time_ms": values},
        "bisect": bisect_id, **extra})


def start(client, **extra):
    response = post(client, "/api/v1/bisections/", {
        "good": "6.7.0", "bad": "6.8.0", "benchmark": "threadtest", **extra})
    assert response.status_code == 201, response.content
    return response.json()


def test_runs_alternating_good_and_bad_drive_the_bisection_to_its_first_bad_commit(
        api_client, ends):
    created = start(api_client, steps_left="Bisecting: 7 revisions left to test after this "
                    "(roughly 3 steps)")
    assert set(created) >= {"id", "url", "steps"} and created["steps"] == []
    assert created["good"]["n"] == 10 and created["bad"]["n"] == 10
    assert created["steps_left"] == 4 and created["revisions_left"] == 7
    assert created["good"]["commit"] == "v6.7" and created["bad"]["commit"] == "v6.8"
    bisect_id = created["id"]
    wanted = ["good", "bad", "good", "bad"]
    for number, (sha, verdict) in enumerate(zip(SHAS, wanted, strict=True), 1):
        values = GOOD if verdict == "good" else BAD
        kernel = f"6.7.0-{number:05d}-g{sha}"
        # One repeat is not enough to tell: the portal says so and offers no line to type.
        first = submit(api_client, bisect_id, kernel, [values[0]])
        assert first.status_code == 201, first.content
        assert first.json()["bisect"]["verdict"] == "unknown"
        assert "run more repeats" in first.json()["bisect"]["reason"]
        state = api_client.get(f"/api/v1/bisections/{bisect_id}/").json()
        assert state["next"] is None and "repeats" in state["next_hint"]
        answer = submit(api_client, bisect_id, kernel, [v + 0.1 for v in values]).json()
        assert answer["bisect"]["commit"] == sha and answer["bisect"]["verdict"] == verdict
        state = api_client.get(f"/api/v1/bisections/{bisect_id}/").json()
        step = state["steps"][-1]
        assert (step["commit"], step["kernel"], step["verdict"]) == (sha, kernel, verdict)
        assert len(step["runs"]) == 2 and step["n"] == 6
        assert state["steps_left"] == (4 - number if number < 4 else 0)
        if number < 4:
            assert state["next"] == f"git bisect {verdict} {sha}"
            assert state["first_bad"] is None
        if number == 3:  # typing the line, git answers that the next commit is the last
            state = post(api_client, f"/api/v1/bisections/{bisect_id}/", {
                "revisions_left": "Bisecting: 0 revisions left to test after this (roughly 0 "
                "steps)"}, method="patch").json()
            assert state["steps_left"] == 1 and state["revisions_left"] == 0
    # git said no revisions were left after the last one, and it is bad: it is the first bad
    # commit, and the session ended.
    assert state["first_bad"] == SHAS[3] and state["ended"] is not None
    assert [s["verdict"] for s in state["steps"]] == wanted
    log = api_client.get(f"/bisect/{bisect_id}/log").content.decode()
    assert log.splitlines()[0] == "git bisect start 'v6.8' 'v6.7'"
    assert f"git bisect good {SHAS[2]}" in log and f"git bisect bad {SHAS[1]}" in log
    assert log.rstrip().endswith(f"# first bad commit: [{SHAS[3]}]")
    # A step submitted for a session that has ended is refused, and nothing is stored.
    before = Run.objects.count()
    late = submit(api_client, bisect_id, "6.7.0-00099-gabcdef0123ab", BAD)
    assert late.status_code == 400 and late.json()["field"] == "bisect"
    assert "has ended" in late.json()["error"] and Run.objects.count() == before


def test_runs_of_the_end_kernels_join_as_the_sides(api_client):
    bisect_id = start(api_client)["id"]
    for kernel, values in (("6.7.0", GOOD), ("6.8.0", BAD)):
        assert submit(api_client, bisect_id, kernel, values).status_code == 201
    state = api_client.get(f"/api/v1/bisections/{bisect_id}/").json()
    assert state["good"]["n"] == 5 and state["bad"]["n"] == 5 and state["steps"] == []
    assert BisectRun.objects.filter(side="good").count() == 1


def test_commit_comes_from_the_run_or_is_refused(api_client, ends):
    bisect_id = start(api_client)["id"]
    before = Run.objects.count()
    plain = submit(api_client, bisect_id, "6.7.0-rc3+", GOOD)
    assert plain.status_code == 400 and plain.json()["field"] == "commit"
    assert "carries no commit" in plain.json()["error"] and Run.objects.count() == before
    given = submit(api_client, bisect_id, "6.7.0-rc3+", GOOD, commit="feedface1234")
    assert given.status_code == 201 and given.json()["bisect"]["commit"] == "feedface1234"
    recorded = submit(api_client, bisect_id, "6.7.0-rc4+", BAD,
                      environment={"kernel_commit": "0badc0de5678", "kernel_dirty": True})
    assert recorded.json()["bisect"]["commit"] == "0badc0de5678"
    steps = api_client.get(f"/api/v1/bisections/{bisect_id}/").json()["steps"]
    assert [(s["commit"], s["dirty"]) for s in steps] == [("feedface1234", False),
                                                          ("0badc0de5678", True)]


def test_bulk_and_upload_join_too(api_client, ends):
    bisect_id = start(api_client)["id"]
    run = {"benchmark": "threadtest", "machine": "core2-laptop", "metrics": {"time_ms": GOOD},
           "kernel": "6.7.0-00001-g1111111aaaaa", "bisect": bisect_id}
    bulk = post(api_client, "/api/v1/runs/bulk/", [run, {**run, "metrics": {"time_ms": BAD},
                                                         "kernel": "6.7.0-00002-g2222222bbbbb"}])
    assert bulk.status_code == 201, bulk.content
    upload = api_client.post("/api/v1/uploads/", {
        "text": "".join(f"time {v} ms\n" for v in BAD), "benchmark": "threadtest",
        "kernel": "6.7.0-00003-g3333333ccccc", "machine": "core2-laptop",
        "bisect": str(bisect_id)})
    assert upload.status_code == 201, upload.content
    assert upload.json()["bisect"]["verdict"] == "bad"
    steps = api_client.get(f"/api/v1/bisections/{bisect_id}/").json()["steps"]
    assert [s["verdict"] for s in steps] == ["good", "bad", "bad"]
    # NDJSON: the line that cannot join is named.
    lines = json.dumps(run) + "\n" + json.dumps({**run, "kernel": "6.9.0+"}) + "\n"
    refused = api_client.post("/api/v1/runs/bulk/", lines, content_type="application/x-ndjson")
    assert refused.status_code == 400 and refused.json()["line"] == 2
    assert refused.json()["field"] == "commit"


def test_pasted_log_continues_and_its_first_bad_commit_ends_it(api_client):
    log = ("git bisect start 'v6.8' 'v6.7'\n"
           "# status: waiting for both good and bad commits\n"
           "# bad: [e8f897f4afef0031fe618a8e94127a0934896aba] Linux 6.8\n"
           "git bisect bad e8f897f4afef0031fe618a8e94127a0934896aba\n"
           "# status: waiting for good commit(s), bad commit known\n"
           "# good: [0dd3ee31125508cd67f7e7172247f05b7fd1753a] Linux 6.7\n"
           "git bisect good 0dd3ee31125508cd67f7e7172247f05b7fd1753a\n"
           "# good: [aaaa1111bbbb2222cccc3333dddd4444eeee5555] sched: one\n"
           "git bisect good aaaa1111bbbb2222cccc3333dddd4444eeee5555\n")
    created = start(api_client, log=log)
    assert created["bad"]["commit"] == "e8f897f4afef0031fe618a8e94127a0934896aba"
    assert [(s["commit"][:8], s["verdict"], s["marked"]) for s in created["steps"]] == [
        ("aaaa1111", "good", "log")]
    ended = start(api_client, log=log + "# first bad commit: [aaaa1111bbbb2222cccc3333dddd4444"
                  "eeee5555] sched: one\n")
    assert ended["first_bad"].startswith("aaaa1111") and ended["ended"]
    assert ended["first_bad_subject"] == "sched: one"


@pytest.mark.parametrize("body, field, words", [
    ({"good": "6.8.0", "bad": "6.7.0"}, "good", "not older"),
    ({"good": "6.8.0", "bad": "6.8.0"}, "good", "not older"),
    ({"good": "6.7.0"}, "bad", "give"),
    ({"good": "6.7.0", "bad": "6.8.0", "log": "git bisect start\nhello\n"}, "log", "line 2"),
    ({"good": "6.7.0", "bad": "6.8.0", "machine": "nope"}, "machine", "no machine"),
    ({"good": "6.7.0", "bad": "6.8.0", "benchmark": "--"}, "benchmark", "no letters"),
    ({"good": "6.7.0", "bad": "6.8.0", "steps_left": "soon"}, "steps_left", "number"),
    ({"good": "6.7.0", "bad": "6.8.0", "colour": "red"}, "colour", "unknown field"),
    ({"good": "6.7.0", "bad": "6.8.0", "steps_left": True}, "steps_left", "number"),
    ({"good": "6.7.0", "bad": "x y"}, "bad", "neither"),
    ({"regression": 999999}, "regression", "no finding"),
])
def test_bad_input_is_a_400_naming_the_problem(api_client, body, field, words):
    response = post(api_client, "/api/v1/bisections/", body)
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field and words in response.json()["error"]
    assert Bisection.objects.count() == 0


def test_log_error_names_its_line(api_client):
    body = {"good": "6.7.0", "bad": "6.8.0",
            "log": "git bisect start\n# good: [abc1234] x\ngit bisect good abc1234\n"
                   "git bisect frobnicate 12345678\n"}
    answer = post(api_client, "/api/v1/bisections/", body).json()
    assert answer["line"] == 4 and "frobnicate" in answer["error"] and answer["field"] == "log"


def test_only_the_creator_or_staff_changes_a_session(api_client, django_user_model, ends):
    bisect_id = start(api_client)["id"]
    stranger = django_user_model.objects.create_user("stranger")
    _, key = token_create(user=stranger, name="t")
    other = Client(HTTP_AUTHORIZATION=f"Token {key}")
    refused = [submit(other, bisect_id, "6.7.0-00001-g1234567abcde", GOOD),
               post(other, f"/api/v1/bisections/{bisect_id}/steps/", {"commit": "1234567abc",
                                                                      "verdict": "bad"}),
               post(other, f"/api/v1/bisections/{bisect_id}/", {"first_bad": "1234567abc"},
                    method="patch")]
    assert [r.status_code for r in refused] == [403, 403, 403]
    assert Run.objects.filter(submitter=stranger).count() == 0
    anonymous = post(Client(), "/api/v1/bisections/", {"good": "6.7.0", "bad": "6.8.0"})
    assert anonymous.status_code in (401, 403)
    assert Client().get(f"/api/v1/bisections/{bisect_id}/").status_code == 200  # reads: open
    stranger.is_staff = True
    stranger.save()
    marked = post(other, f"/api/v1/bisections/{bisect_id}/steps/",
                  {"commit": "1234567abc", "verdict": "bad"})
    assert marked.status_code == 200 and marked.json()["next"] == "git bisect bad 1234567abc"


def test_marking_by_hand_and_ending_with_gits_own_line(api_client):
    bisect_id = start(api_client)["id"]
    url = f"/api/v1/bisections/{bisect_id}/"
    state = post(api_client, url + "steps/", {"commit": "abcdef123456", "verdict": "skip"}).json()
    assert state["next"] == "git bisect skip abcdef123456" and state["steps"][0]["skipped"]
    ended = post(api_client, url, {"first_bad": "abcdef123456 is the first bad commit"},
                 method="patch").json()
    assert ended["first_bad"] == "abcdef123456" and ended["next"] is None
    again = post(api_client, url + "steps/", {"commit": "1234567aaa", "verdict": "good"})
    assert again.status_code == 400 and "has ended" in again.json()["error"]


def make_finding(good_runs, bad_runs):
    from regressions.models import Regression

    first = good_runs[0]
    finding = Regression.objects.create(
        benchmark=first.benchmark, machine=first.machine, metric=first.benchmark.metrics.get(),
        params=first.params, series_key="k" * 64, good=first.kernel, bad=bad_runs[0].kernel,
        change=1.3, p_value=0.001)
    finding.runs_good.set(good_runs)
    finding.runs_bad.set(bad_runs)
    return finding


def test_a_finding_gives_the_ends_and_its_runs_are_the_sides(api_client):
    good = [make_run("6.7.0", [v + s for v in GOOD]) for s in (0, 0.2)]
    bad = [make_run("6.8.0", [v + s for v in BAD]) for s in (0, 0.2)]
    make_run("6.7.0", [500.0, 501.0], params={"loops": 1})  # another series: not a side
    finding = make_finding(good, bad)
    created = post(api_client, "/api/v1/bisections/", {"regression": finding.pk}).json()
    assert (created["good"]["kernel"], created["bad"]["kernel"]) == ("6.7.0", "6.8.0")
    assert created["regression"] == finding.pk and created["metric"] == "time_ms"
    assert sorted(created["good"]["runs"]) == sorted(r.pk for r in good)
    answer = submit(api_client, created["id"], "6.7.0-00007-g7777777abcde", BAD).json()
    assert answer["bisect"]["verdict"] == "bad"
    ended = post(api_client, f"/api/v1/bisections/{created['id']}/",
                 {"first_bad": "7777777abcde"}, method="patch").json()
    assert ended["first_bad"] == "7777777abcde"
    assert finding.bisections.get().first_bad == "7777777abcde"  # attached to the finding
    mixed = post(api_client, "/api/v1/bisections/", {"regression": finding.pk, "good": "6.1"})
    assert mixed.status_code == 400 and mixed.json()["field"] == "regression"


def test_empty_bodies_are_400s(api_client):
    bisect_id = start(api_client)["id"]
    # No body at all (Django's client would send an empty multipart form, which these JSON-only
    # endpoints answer with 415, as docs/api.md says bodies are JSON).
    for path in (f"/api/v1/bisections/{bisect_id}/steps/", "/api/v1/bisections/"):
        response = api_client.post(path, "", content_type="application/json")
        assert response.status_code == 400, (path, response.content)
        assert response.json()["field"] in ("commit", "good")
    assert api_client.patch(f"/api/v1/bisections/{bisect_id}/").status_code == 200
    assert api_client.post("/api/v1/bisections/").status_code == 415


def test_a_pasted_terminal_session_sets_steps_left(api_client):
    log = ("git bisect start 'v6.8' 'v6.7'\n"
           "Bisecting: 12 revisions left to test after this (roughly 4 steps)\n"
           "[1111111111111111111111111111111111111111] one\n"
           "git bisect good 1111111111111111111111111111111111111111\n"
           "Bisecting: 6 revisions left to test after this (roughly 3 steps)\n"
           "[2222222222222222222222222222222222222222] two\n")
    created = start(api_client, log=log)
    assert created["revisions_left"] == 6 and created["steps_left"] == 4
    assert created["steps"][0]["verdict"] == "good" and created["next"] is None


def test_list_filters_by_finding_and_end(api_client):
    good = [make_run("6.7.0", GOOD)]
    bad = [make_run("6.8.0", BAD)]
    finding = make_finding(good, bad)
    of_finding = post(api_client, "/api/v1/bisections/", {"regression": finding.pk}).json()["id"]
    other = start(api_client)["id"]
    post(api_client, f"/api/v1/bisections/{other}/", {"first_bad": "abc1234"}, method="patch")

    def ids(query):
        return [b["id"] for b in api_client.get(f"/api/v1/bisections/{query}").json()["results"]]

    assert ids("") == [other, of_finding]
    assert ids(f"?regression={finding.pk}") == [of_finding]
    assert ids("?ended=true") == [other] and ids("?ended=false") == [of_finding]
    assert ids("?regression=x") == [] and ids("?regression=99999999999999999999999") == []


def test_a_rough_estimate_reaching_zero_only_suggests_the_first_bad_commit(api_client, ends):
    bisect_id = start(api_client, steps_left=1)["id"]
    submit(api_client, bisect_id, "6.7.0-00001-g1234567abcde", BAD)
    state = api_client.get(f"/api/v1/bisections/{bisect_id}/").json()
    assert state["steps_left"] == 0 and state["suggested_first_bad"] == "1234567abcde"
    assert state["first_bad"] is None and state["ended"] is None
    assert state["next"] == "git bisect bad 1234567abcde"

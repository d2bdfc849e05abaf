"""A finding has one identity for life: later uploads, bisect steps, a withdrawal and a
restore update it in place; findings that one change continues merge and the younger URL
redirects; bisect runs never enter the release-ordered series."""

import numpy as np
import pytest

from benchmarks.services.ownership import run_restore, run_withdraw
from bisection.models import Bisection, BisectRun
from regressions.models import Regression, Status
from regressions.services import regression_status_set, regressions_detect_runs
from tests.factories import make_run

pytestmark = pytest.mark.django_db
LOW, HIGH = 1000.0, 1300.0


def values(level, seed, repeats=5):
    return np.random.default_rng(seed).normal(level, level * 0.01, repeats).round(3).tolist()


def detect_after(*runs):
    regressions_detect_runs(run_ids=[run.pk for run in runs])


def test_a_finding_keeps_its_id_through_uploads_steps_withdrawal_and_restore(stepped, client):
    owner, runs = stepped
    finding = Regression.objects.get()
    assert (finding.good.version, finding.bad.version) == ("2.6.23", "2.6.24")
    regression_status_set(regression=finding, user=owner, status=Status.CONFIRMED)
    bisection = Bisection.objects.create(owner=owner, good="2.6.23", bad="2.6.24",
                                         good_ref="v2.6.23", bad_ref="v2.6.24",
                                         regression=finding)

    later = make_run("2.6.26", values(HIGH, 7), submitter=owner)  # more data on the bad side
    detect_after(later)
    same = Regression.objects.get()
    assert same.pk == finding.pk and same.status == Status.CONFIRMED
    assert same.n_bad > finding.n_bad and same.seen

    # Bisect steps: a commit between the releases (kernel from `git describe`) and a release
    # kernel's run that joined the bisection, both far off; neither moves the finding.
    step = make_run("2.6.24-rc1-00042-gabcdef123456", values(HIGH * 3, 8))
    joined = make_run("2.6.21", values(HIGH * 3, 9))
    BisectRun.objects.create(bisection=bisection, run=joined, commit="v2.6.21", side="good")
    detect_after(step, joined)
    same = Regression.objects.select_related("good", "bad").get()
    assert same.pk == finding.pk
    assert (same.good.version, same.bad.version) == ("2.6.23", "2.6.24")
    assert step.pk not in {r.pk for r in same.runs_bad.all()} | {
        r.pk for r in same.runs_good.all()}
    assert joined.pk not in {r.pk for r in same.runs_good.all()}

    bad_side = [run for run in runs if run.kernel.version in ("2.6.24", "2.6.25")] + [later]
    for run in bad_side:
        run_withdraw(run=run, user=owner)
    detect_after(*bad_side)
    gone = Regression.objects.get()
    assert gone.pk == finding.pk and not gone.seen
    reply = client.get(f"/api/v1/regressions/{finding.pk}/")
    assert reply.status_code == 200 and reply.json()["seen"] == "not_since 2.6.26"
    page = client.get(f"/regressions/{finding.pk}/")
    assert page.status_code == 200 and b"Not seen since" in page.content

    staff = type(owner).objects.create_user("staff", is_staff=True)
    for run in bad_side:
        run_restore(run=run, user=staff)
    detect_after(*bad_side)
    back = Regression.objects.select_related("good", "bad").get()
    assert back.pk == finding.pk and back.seen and back.status == Status.CONFIRMED
    assert (back.good.version, back.bad.version) == ("2.6.23", "2.6.24")
    bisection.refresh_from_db()
    assert bisection.regression_id == finding.pk
    page = client.get(f"/regressions/{finding.pk}/").content.decode()
    assert "What the verdict rests on" in page and back.test in page
    assert f"n={back.n_bad}" in page and "History" in page and "seen again" in page
    assert f"/regressions/{finding.pk}/compare/" in page
    assert "2.6.24-rc1-00042" not in page  # the step is in no chart or window
    body = client.get(f"/api/v1/regressions/{finding.pk}/").json()
    assert body["seen"] == "current" and body["test"] == back.test
    assert body["inputs"]["bad_kernels"][0] == "2.6.24"
    assert [e["event"] for e in body["history"]] == [
        "first_seen", "updated", "not_seen", "seen_again"]


def test_a_change_that_moves_by_a_kernel_keeps_its_finding(stepped):
    _, runs = stepped
    finding = Regression.objects.get()
    # A stable release between good and bad measures like the bad side: the change is
    # narrowed to 2.6.23 -> 2.6.23.9.
    between = [make_run("2.6.23.9", values(HIGH, seed)) for seed in (21, 22)]
    detect_after(*between)
    moved = Regression.objects.select_related("good", "bad").get()
    assert moved.pk == finding.pk
    assert (moved.good.version, moved.bad.version) == ("2.6.23", "2.6.23.9")
    entry = moved.history.last()
    assert entry.event == "moved" and entry.note == "was 2.6.23 -> 2.6.24"


def test_two_findings_one_change_continues_merge_and_the_younger_redirects(stepped, client):
    _, runs = stepped
    finding = Regression.objects.get()
    kernels = {run.kernel.version: run.kernel for run in runs}
    # Two findings either side of the change, as earlier passes over less data could leave.
    Regression.objects.filter(pk=finding.pk).update(good=kernels["2.6.22"],
                                                    bad=kernels["2.6.23"])
    younger = Regression.objects.create(
        benchmark=finding.benchmark, machine=finding.machine, metric=finding.metric,
        params=finding.params, series_key=finding.series_key, good=kernels["2.6.24"],
        bad=kernels["2.6.25"], change=1.3)
    detect_after(runs[-1])
    survivor = Regression.objects.live().select_related("good", "bad").get()
    assert survivor.pk == finding.pk
    assert (survivor.good.version, survivor.bad.version) == ("2.6.23", "2.6.24")
    younger.refresh_from_db()
    assert younger.merged_into_id == finding.pk
    page = client.get(f"/regressions/{younger.pk}/")
    assert page.status_code == 301 and page["Location"] == f"/regressions/{finding.pk}/"
    api = client.get(f"/api/v1/regressions/{younger.pk}/")
    assert api.status_code == 301 and api["Location"].endswith(f"/regressions/{finding.pk}/")
    listed = client.get("/api/v1/regressions/").json()
    assert [item["id"] for item in listed["results"]] == [finding.pk]


def test_one_value_per_kernel_is_needs_repeats_never_a_regression(db, client):
    for n, kernel in enumerate(("3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6")):
        make_run(kernel, [LOW + n] if kernel < "3.4" else [HIGH * 2 + n])
    from benchmarks.models import Run
    detect_after(Run.objects.latest("id"))
    finding = Regression.objects.get()
    assert finding.needs_repeats and finding.verdict == "needs repeats"
    item = client.get(f"/api/v1/regressions/{finding.pk}/").json()
    assert item["verdict"] == "needs repeats" and item["inputs"]["thresholds"]["min_repeats"] == 2

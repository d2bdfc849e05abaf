"""Detection stored per series: idempotent, touching only the changed series, keeping status."""

import pytest
from django.core import mail
from django.core.management import call_command

from benchmarks.models import Run
from regressions.models import Follow, Regression, Status
from regressions.notifications import new_findings_mail
from regressions.series import series_of_runs
from regressions.services import (
    regression_status_set,
    regressions_detect_runs,
    series_detect,
)
from tests.factories import make_run
from tests.regressions.conftest import step_series

pytestmark = pytest.mark.django_db


def test_a_step_becomes_one_regression_with_its_runs(stepped):
    _, runs = stepped
    finding = Regression.objects.get()
    assert finding.kind == "regression"
    assert (finding.good.version, finding.bad.version) == ("2.6.23", "2.6.24")
    assert finding.change == pytest.approx(1.3, rel=0.03)
    assert finding.ci95_low < finding.change < finding.ci95_high
    assert finding.p_value < 0.01 and not finding.needs_repeats
    assert runs[3] in finding.runs_good.all() and runs[4] in finding.runs_bad.all()
    assert finding.params == {"loops": 10000, "iterations": 500}


def test_higher_is_better_metric_makes_it_an_improvement(db):
    runs = step_series(metric="throughput", params={"clients": 4})
    from benchmarks.models import Metric
    Metric.objects.filter(name="throughput").update(higher_is_better=True)
    regressions_detect_runs(run_ids=[runs[0].pk])
    assert Regression.objects.get().kind == "improvement"


def test_detection_again_keeps_the_finding_and_a_human_status(stepped):
    owner, runs = stepped
    finding = Regression.objects.get()
    regression_status_set(regression=finding, user=owner, status=Status.CONFIRMED)
    regressions_detect_runs(run_ids=[runs[0].pk])
    again = Regression.objects.get()
    assert again.pk == finding.pk and again.status == Status.CONFIRMED
    assert again.status_changed_by == owner


def test_a_finding_that_no_longer_holds_stays_as_not_seen(stepped, client):
    _, runs = stepped
    finding = Regression.objects.get()
    for run in runs[4:]:
        run.delete()
    for _ in range(3):  # the later kernels now look like the earlier ones
        make_run("2.6.26", [1000.0, 1001.0, 999.0, 1000.5, 999.5])
    regressions_detect_runs(run_ids=[Run.objects.latest("id").pk])
    kept = Regression.objects.get()
    assert kept.pk == finding.pk and not kept.seen
    assert kept.seen_text == "not_since 2.6.25"  # the newest kernel when it was last seen
    assert [e.event for e in kept.history.all()] == ["first_seen", "not_seen"]
    reply = client.get(f"/api/v1/regressions/{finding.pk}/")
    assert reply.status_code == 200 and reply.json()["seen"] == "not_since 2.6.25"
    assert client.get(f"/regressions/{finding.pk}/").status_code == 200


def test_only_the_series_of_the_runs_is_touched(stepped):
    _, runs = stepped
    other = step_series(params={"loops": 1000000, "iterations": 500}, seed=2)
    assert Regression.objects.count() == 1  # the second series was not detected yet
    regressions_detect_runs(run_ids=[other[0].pk])
    assert Regression.objects.count() == 2
    assert len(series_of_runs([other[0].pk])) == 1


def test_rescan_command_finds_every_series(db, capsys):
    step_series()
    step_series(params={"loops": 1000000, "iterations": 500}, seed=2)
    call_command("detect_regressions")
    assert Regression.objects.count() == 2
    assert "2 series scanned, 2 new" in capsys.readouterr().out
    call_command("detect_regressions")
    assert Regression.objects.count() == 2


def test_followers_get_mail_for_a_new_finding(stepped, django_user_model):
    finding = Regression.objects.get()
    fan = django_user_model.objects.create_user("fan", email="fan@example.org")
    quiet = django_user_model.objects.create_user("quiet", email="quiet@example.org")
    Follow.objects.create(user=fan, benchmark=finding.benchmark)
    Follow.objects.create(user=quiet, benchmark=make_run(benchmark="hackbench").benchmark)
    assert new_findings_mail(regression_ids=[finding.pk]) == 1
    assert [m.to for m in mail.outbox] == [["fan@example.org"]]
    assert "2.6.23 -> 2.6.24" in mail.outbox[0].body
    assert finding.get_absolute_url() in mail.outbox[0].body


def test_lkml_demo_shows_the_slowdown_at_small_loop_counts(db):
    call_command("load_demo", stdout=None)
    call_command("detect_regressions")
    small = [r for r in Regression.objects.select_related("good", "bad", "machine")
             if r.params.get("loops") == 10000 and r.machine.name == "core2-duo-laptop"]
    assert len(small) == 1
    finding = small[0]
    assert finding.kind == "regression" and finding.needs_repeats
    assert finding.good.version in ("2.6.22", "2.6.23") and finding.bad.version == "2.6.24"
    assert finding.change > 1.5


def test_series_detect_tolerates_a_deleted_metric_series(stepped):
    _, runs = stepped
    series = next(iter(series_of_runs([runs[0].pk])))
    Run.objects.all().delete()
    assert series_detect(series=series) == []
    finding = Regression.objects.get()  # kept, with its history: no longer seen
    assert not finding.seen and finding.history.last().event == "not_seen"


def test_stored_runs_queue_detection_on_commit_in_chunks(db, django_capture_on_commit_callbacks,
                                                          monkeypatch):
    from regressions import services

    monkeypatch.setattr(services, "TASK_CHUNK", 2)
    with django_capture_on_commit_callbacks() as stored:
        make_run("2.6.20", [1.0, 2.0])
    # run_create's runs_stored signal queued one detection (beside the run counts' renewal)
    from benchmarks.selectors import RunCounts

    assert len([callback for callback in stored if callback is not RunCounts.renew]) == 1
    with django_capture_on_commit_callbacks() as queued:
        services.detect_on_commit(run_ids=[1, 2, 3, None])
    assert len(queued) == 2  # three ids in chunks of two


def test_a_thread_can_be_attached_to_a_finding(stepped, api_client):
    finding = Regression.objects.get()
    reply = api_client.post("/api/v1/threads/", {
        "subject": "bisecting this", "body": "on it",
        "attach_to": {"type": "regression", "id": str(finding.pk)}},
        content_type="application/json")
    assert reply.status_code == 201, reply.content
    from discussions.models import Thread
    assert Thread.objects.attached_to("regression", finding.pk).count() == 1

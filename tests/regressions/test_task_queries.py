"""The incremental detection task keeps a finding's runs exactly the runs of its windows, reading
and writing only the link table: a fixed number of queries however many runs the finding has."""

import pytest
from django.db import connection

from benchmarks.services.ownership import run_withdraw
from regressions.models import Regression
from regressions.services import regressions_detect_runs
from tests.regressions.conftest import step_series

pytestmark = pytest.mark.django_db

KERNELS = ("2.6.20", "2.6.21", "2.6.22", "2.6.23", "2.6.24", "2.6.25")


def linked(finding: Regression) -> tuple[set, set]:
    return ({run.pk for run in finding.runs_good.all()},
            {run.pk for run in finding.runs_bad.all()})


def test_links_follow_the_windows_when_runs_come_and_go(django_user_model):
    owner = django_user_model.objects.create_user("owner")
    runs = step_series(submitter=owner)
    regressions_detect_runs(run_ids=[runs[-1].pk])
    finding = Regression.objects.get()
    assert linked(finding) == ({r.pk for r in runs[:4]}, {r.pk for r in runs[4:]})

    later = step_series(kernels=("2.6.24", "2.6.26"), change_at="2.6.24", seed=3)
    regressions_detect_runs(run_ids=[later[-1].pk])
    finding.refresh_from_db()
    assert linked(finding) == ({r.pk for r in runs[:4]},
                               {r.pk for r in runs[4:] + later})  # a new bad run joins
    run_withdraw(run=runs[5], user=owner)
    regressions_detect_runs(run_ids=[runs[4].pk])
    assert linked(Regression.objects.get(pk=finding.pk)) == (
        {r.pk for r in runs[:4]}, {r.pk for r in [runs[4], *later]})  # a withdrawn run leaves


@pytest.mark.parametrize("runs_per_kernel", [1, 6])
def test_a_pass_that_changes_nothing_costs_the_same_queries(django_assert_num_queries,
                                                            runs_per_kernel):
    runs = []
    for seed in range(runs_per_kernel):
        runs += step_series(kernels=KERNELS, seed=seed)
    regressions_detect_runs(run_ids=[runs[-1].pk])
    finding = Regression.objects.get()
    assert sum(map(len, linked(finding))) == len(runs)
    # series of the run, metric, the series' runs by kernel, their values, thresholds;
    # savepoint, live findings locked, update (not read back), links good, links bad, release;
    # SQLite reads the candidate runs' params first (JSON text is compared canonically there)
    with django_assert_num_queries(11 + (connection.vendor != "postgresql")):
        regressions_detect_runs(run_ids=[runs[0].pk])
    assert sum(map(len, linked(Regression.objects.get(pk=finding.pk)))) == len(runs)


def test_a_moved_finding_records_its_new_kernels(django_user_model):
    """The finding is updated in memory, not read back: its history entry must name the kernels
    it moved to, not the ones cached before."""
    runs = step_series()
    regressions_detect_runs(run_ids=[runs[-1].pk])
    between = [*step_series(kernels=("2.6.23.9",), change_at="2.6.23.9", seed=21),
               *step_series(kernels=("2.6.23.9",), change_at="2.6.23.9", seed=22)]
    regressions_detect_runs(run_ids=[between[-1].pk])
    entry = Regression.objects.get().history.last()
    assert (entry.event, entry.good, entry.bad) == ("moved", "2.6.23", "2.6.23.9")
    assert entry.note == "was 2.6.23 -> 2.6.24"

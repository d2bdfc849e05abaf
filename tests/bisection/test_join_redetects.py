"""A run stored (and placed in a release-ordered series) before it joins a bisection leaves that
series as soon as it joins: the join announces it (runs_visibility_changed), regressions queues
detection for it, and the finding is redone without it."""

import pytest

from bisection import services
from regressions.models import DetectionJob, Regression
from regressions.services import regressions_detect_runs
from tests.factories import make_run
from tests.regressions.conftest import step_series

pytestmark = pytest.mark.django_db


def test_a_run_joining_a_bisection_later_leaves_the_release_series(django_user_model):
    owner = django_user_model.objects.create_user("owner")
    runs = step_series(submitter=owner)
    late = make_run("2.6.25", [1305.0, 1299.0, 1302.0, 1296.0, 1301.0], submitter=owner)
    regressions_detect_runs(run_ids=[run.pk for run in [*runs, late]])
    finding = Regression.objects.get()
    assert late.pk in set(finding.runs_bad.values_list("pk", flat=True))
    bisection = services.bisection_create(owner=owner, good="2.6.23", bad="2.6.25",
                                          benchmark="threadtest")
    queued = set(DetectionJob.objects.values_list("pk", flat=True))

    claim = services.bisect_claim(value=bisection.pk, user=owner)
    services.bisect_join(claim=claim, runs=[late])
    jobs = DetectionJob.objects.exclude(pk__in=queued)
    assert [job.run_ids for job in jobs] == [[late.pk]]
    services.bisect_join(claim=claim, runs=[late])  # joined already: nothing more to redo
    assert DetectionJob.objects.exclude(pk__in=queued).count() == 1

    regressions_detect_runs(run_ids=jobs.get().run_ids)  # what the worker does with the job
    same = Regression.objects.get()
    assert same.pk == finding.pk
    assert late.pk not in set(same.runs_bad.values_list("pk", flat=True))
    assert same.runs_bad.exists()

"""Bisecting a merged finding bisects the finding it merged into (its URL redirects there)."""

import pytest

from bisection import services
from tests.bisection.test_api import BAD, GOOD, make_finding
from tests.factories import make_run

pytestmark = pytest.mark.django_db


def test_a_merged_finding_is_followed_to_the_one_it_lives_in(django_user_model):
    owner = django_user_model.objects.create_user("owner")
    good = [make_run("6.7.0", GOOD), make_run("6.6.0", GOOD)]
    bad = [make_run("6.8.0", BAD), make_run("6.9.0", BAD)]
    older = make_finding(good[:1], bad[:1])
    middle = make_finding(good[1:], bad[1:])
    newest = make_finding(good[:1], bad[1:])
    for finding, into in ((older, middle), (middle, newest)):  # a merge of a merge
        finding.merged_into = into
        finding.save(update_fields=["merged_into"])

    bisection = services.bisection_create(owner=owner, regression=str(older.pk))
    assert bisection.regression_id == newest.pk
    assert (bisection.good, bisection.bad) == ("6.7.0", "6.9.0")
    direct = services.bisection_create(owner=owner, regression=newest.pk)
    assert direct.regression_id == newest.pk

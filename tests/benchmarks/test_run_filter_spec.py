"""run_filter takes a query string or a comparison spec's plain dict of filters."""

import pytest
from django.http import QueryDict

from benchmarks.selectors import run_filter
from tests.factories import make_run

pytestmark = pytest.mark.django_db


def test_a_spec_dict_and_a_query_string_filter_alike():
    wanted = make_run("2.6.24", [1.0])
    make_run("2.6.22", [2.0])
    assert list(run_filter({"kernel": "2.6.24"}).runs) == [wanted]
    assert list(run_filter(QueryDict("kernel=2.6.24")).runs) == [wanted]
    refused = run_filter({"kernel": "2.6.24\x00"})
    assert refused.problems and not refused.runs.exists()

"""The home page's recent runs are written by pages/rows.py from selectors.recent_runs_listed(),
as the run list's are: the same runs in the same order as selectors.recent_runs(), and the same
table the template writes for those (hostile names, withdrawn runs left out, more runs than
shown)."""

import pytest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from benchmarks import selectors
from benchmarks.models import Run
from tests.benchmarks.test_page_rows import varied_runs  # noqa: F401 (a fixture)
from tests.factories import make_run

pytestmark = pytest.mark.django_db


def _template_rows() -> str:
    return render_to_string("benchmarks/_run_rows.html", {"runs": selectors.recent_runs()})


def test_recent_rows_are_the_templates(client, varied_runs):  # noqa: F811 (the fixture)
    extra = [make_run("6.6.0", [float(i), i + 1.0]) for i in range(10)]
    Run.objects.filter(pk=extra[-1].pk).update(withdrawn=timezone.now())
    listed = selectors.recent_runs_listed()
    assert [run.pk for run in listed] == [run.pk for run in selectors.recent_runs()]
    assert len(listed) == 10 and extra[-1].pk not in {run.pk for run in listed}
    html = client.get(reverse("home")).content.decode()
    assert _template_rows() in html

    Run.objects.filter(pk__in=[run.pk for run in extra]).delete()  # the hostile runs shown
    html = client.get(reverse("home")).content.decode()
    assert _template_rows() in html and html.count("&lt;script&gt;") >= 6


def test_no_runs_says_so(client):
    html = client.get(reverse("home")).content.decode()
    assert "No runs yet." in html and 'class="data runs"' not in html

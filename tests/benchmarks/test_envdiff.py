import pytest
from django.urls import reverse

from benchmarks.analysis.envdiff import environment_diff
from tests.factories import CORE2, make_run

pytestmark = pytest.mark.django_db


def test_diff_names_what_differs_besides_the_kernel():
    a = make_run("2.6.22", tunables={"sched_child_runs_first": 1})
    b = make_run("2.6.24", tunables={"sched_child_runs_first": 0, "sched_compat_yield": 1},
                 machine={**CORE2, "threads_per_core": 2})
    differing = {(row.section, row.key): row.values for row in environment_diff([a, b])
                 if row.differs}
    assert differing[("kernel", "version")] == ("2.6.22", "2.6.24")
    assert differing[("kernel", "family")] == ("o1", "cfs")
    assert differing[("tunables", "sched_child_runs_first")] == (1, 0)
    assert differing[("tunables", "sched_compat_yield")] == (None, 1)
    assert differing[("machine", "topology")] == ("1x2x1", "1x2x2")
    assert ("params", "loops") not in differing


def test_diff_page_shows_differences_escaped(client):
    a = make_run("2.6.22", tunables={"note": "<i>x</i>"})
    b = make_run("2.6.24")
    html = client.get(reverse("run-diff", args=[a.pk, b.pk])).content.decode()
    assert "&lt;i&gt;x&lt;/i&gt;" in html and "<i>x</i>" not in html
    assert "not recorded" in html
    assert client.get(reverse("run-diff", args=[a.pk, 999999])).status_code == 404


def test_diff_picker_redirects_or_explains(client):
    a, b = make_run("2.6.22"), make_run("2.6.24")
    response = client.get(reverse("run-diff-pick", args=[a.pk]), {"other": f"#{b.pk}"})
    assert response.status_code == 302 and response["Location"].endswith(f"/diff/{b.pk}/")
    response = client.get(reverse("run-diff-pick", args=[a.pk]), {"other": "abc"}, follow=True)
    assert "Give the number of the run" in response.content.decode()

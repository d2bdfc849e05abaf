"""The run list's filter choices: the names visible runs use (kernels, policies, param names), the
benchmarks and machines not used only by withdrawn runs, read without counting every run, in a
fixed number of queries however many runs and names there are."""

import re

import pytest
from django.urls import reverse

from benchmarks import selectors
from benchmarks.services.catalog import kernel_get_or_create, machine_get_or_create
from benchmarks.services.ownership import run_withdraw
from tests.factories import CORE2, make_run

pytestmark = pytest.mark.django_db

OTHER = {**CORE2, "name": "other box", "cpu_model": "Other CPU"}


def options(html: str, name: str) -> list[str]:
    """The option labels of the run list's <select name=...>, "any" left out."""
    select = re.search(rf'<select name="{name}">(.*?)</select>', html, re.S).group(1)
    return [label for label in re.findall(r"<option [^>]*>([^<]*)</option>", select)
            if label != "any"]


def assert_choices_are_the_querysets():
    """The run list's raw choices (selectors.*_choices) are the querysets' rows, in order."""
    assert selectors.kernel_choices() == list(
        selectors.kernels_in_use().values_list("version", flat=True))
    assert selectors.benchmark_choices() == list(
        selectors.benchmarks_listed().values_list("slug", "name"))
    assert selectors.machine_choices() == list(
        selectors.machines_listed().values_list("pk", "name"))


def test_choices_are_what_visible_runs_use(client, django_user_model):
    owner = django_user_model.objects.create_user("owner")
    make_run("2.6.24", policy="SCHED_OTHER", params={"loops": 1}, submitter=owner)
    make_run("2.6.9", policy="SCHED_BATCH", params={"loops": 2, "threads": 4}, submitter=owner)
    make_run("2.6.22", policy="", params={"loops": 3}, submitter=owner)
    # Names only withdrawn runs use leave every choice.
    gone = make_run("2.6.30", benchmark="misread", machine=OTHER, policy="SCHED_FIFO",
                    params={"typo": 1}, submitter=owner)
    run_withdraw(run=gone, user=owner)
    kernel_get_or_create(version="2.6.25")  # no run: nothing to filter by
    machine_get_or_create(spec={**CORE2, "name": "calibrated only", "cpu_model": "Cal"})

    assert [k.version for k in selectors.kernels_in_use()] == ["2.6.9", "2.6.22", "2.6.24"]
    assert_choices_are_the_querysets()
    assert len(selectors.machine_choices()) == 2  # the withdrawn-only machine left, one kept
    assert selectors.policies_in_use() == ["SCHED_BATCH", "SCHED_OTHER"]
    assert selectors.param_names_in_use() == ["loops", "threads"]
    html = client.get(reverse("run-list")).content.decode()
    assert options(html, "kernel") == ["2.6.9", "2.6.22", "2.6.24"]
    assert options(html, "policy") == ["SCHED_BATCH", "SCHED_OTHER"]
    assert options(html, "benchmark") == ["threadtest"]
    # A machine no run uses yet (calibrated only) stays, as on the home page.
    assert options(html, "machine") == ["calibrated only", CORE2["name"]]
    assert 'name="param.loops"' in html and 'name="param.threads"' in html
    assert 'name="param.typo"' not in html
    # Names are escaped, and the filter applied is the option selected.
    machine_get_or_create(spec={**CORE2, "name": "<b>lab</b> & co", "cpu_model": "Esc"})
    html = client.get(reverse("run-list"), {"kernel": "2.6.22", "policy": "SCHED_BATCH"}
                      ).content.decode()
    assert "&lt;b&gt;lab&lt;/b&gt; &amp; co</option>" in html and "<b>lab" not in html
    assert '<option value="2.6.22" selected>2.6.22</option>' in html
    assert '<option value="SCHED_BATCH" selected>SCHED_BATCH</option>' in html
    assert html.count(" selected>") == 2

    run_withdraw(run=make_run("2.6.24", policy="SCHED_OTHER", params={"loops": 9},
                              submitter=owner), user=owner)  # a withdrawn twin changes nothing
    assert selectors.policies_in_use() == ["SCHED_BATCH", "SCHED_OTHER"]
    # A name some visible run still uses stays although another of its runs is withdrawn.
    make_run("2.6.30", benchmark="misread", machine=OTHER, policy="SCHED_FIFO",
             params={"typo": 2})
    assert selectors.policies_in_use() == ["SCHED_BATCH", "SCHED_FIFO", "SCHED_OTHER"]
    assert selectors.param_names_in_use() == ["loops", "threads", "typo"]
    assert "2.6.30" in [k.version for k in selectors.kernels_in_use()]
    assert [b.slug for b in selectors.benchmarks_listed()] == ["misread", "threadtest"]
    assert_choices_are_the_querysets()
    assert [slug for slug, _ in selectors.benchmark_choices()] == ["misread", "threadtest"]


@pytest.mark.parametrize("count", [1, 12])
def test_run_list_query_count_does_not_grow_with_runs_or_names(client, django_assert_num_queries,
                                                             count):
    for i in range(count):
        make_run(f"2.6.{i}", benchmark=f"bench{i % 4}", policy=f"policy{i % 3}",
                 params={f"p{i % 5}": i},
                 machine={**CORE2, "name": f"box{i % 6}", "cpu_model": f"CPU {i % 6}"})
    # count, page, its summaries; benchmarks, kernels, machines, policies and param names in
    # one query (selectors.read_run_list_choices)
    with django_assert_num_queries(4):
        response = client.get(reverse("run-list"))
    assert response.status_code == 200
    assert len(options(response.content.decode(), "kernel")) == count

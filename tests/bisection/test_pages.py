"""The session's page, its log export, the start form, and "Bisect this" on other pages."""

import json
import re

import pytest
from django.db import connection
from django.template import Context, Template
from django.test import Client
from django.test.utils import CaptureQueriesContext

from benchmarks.comparisons.spec import parse_spec
from benchmarks.services.comparisons import comparison_create
from bisection import selectors, services
from tests.bisection.test_api import BAD, GOOD, make_finding
from tests.factories import make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user("owner", password="pw-for-tests-only")


@pytest.fixture
def owner_client(owner):
    client = Client()
    client.force_login(owner)
    return client


def session_with_steps(owner, steps: int):
    for shift in (0.0, 0.2):
        make_run("6.7.0", [v + shift for v in GOOD])
        make_run("6.8.0", [v + shift for v in BAD])
    bisection = services.bisection_create(owner=owner, good="6.7.0", bad="6.8.0",
                                          benchmark="threadtest")
    for number in range(steps):
        claim = services.bisect_claim(value=bisection.pk, user=owner)
        run = make_run(f"6.7.0-{number:05d}-g{number:07d}abcde",
                       BAD if number % 2 else GOOD, submitter=owner)
        services.bisect_join(claim=claim, runs=[run])
    return bisection


def test_state_reads_take_the_same_queries_whatever_the_number_of_steps(owner):
    counts = []
    for steps in (1, 6):
        bisection = session_with_steps(owner, steps)
        with CaptureQueriesContext(connection) as queries:
            state = selectors.bisection_state(selectors.bisection_get(bisection.pk))
        assert len(state.steps) == steps
        counts.append(len(queries))
    assert counts[0] == counts[1] <= 6


def test_page_shows_steps_verdicts_chart_command_and_run_links(owner, owner_client):
    bisection = session_with_steps(owner, 2)
    html = owner_client.get(f"/bisect/{bisection.pk}/").content.decode()
    assert html.count('class="step"') == 2
    assert 'data-verdict="good"' in html and 'data-verdict="bad"' in html
    assert "git bisect bad 0000001abcde" in html  # the last step's line
    figure = json.loads(re.search(r'<script id="bisect-figure" type="application/json">(.*?)'
                                  r"</script>", html, re.S).group(1))
    assert len(figure["layout"]["shapes"]) == 2  # the good and bad bands
    assert len(figure["data"]) == 4  # the two ends and two steps
    runs = bisection.joined.values_list("run_id", flat=True)
    assert all(f'href="/runs/{pk}/"' in html for pk in runs)
    assert 'id="steps-left-form"' in html  # the owner may change it


def test_subjects_from_a_pasted_log_are_escaped(owner, owner_client):
    log = ("git bisect start\ngit bisect bad v6.8\ngit bisect good v6.7\n"
           "# bad: [abcdef1] <script>alert(1)</script>\ngit bisect bad abcdef1\n")
    bisection = services.bisection_create(owner=owner, good="6.7.0", bad="6.8.0", log=log)
    html = Client().get(f"/bisect/{bisection.pk}/").content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)" in html
    assert 'id="steps-left-form"' not in html  # anonymous: read only


def test_log_export_is_plain_text_git_replays(owner):
    bisection = session_with_steps(owner, 2)
    response = Client().get(f"/bisect/{bisection.pk}/log")
    assert response["Content-Type"].startswith("text/plain")
    lines = response.content.decode().splitlines()
    assert lines[0] == "git bisect start 'v6.8' 'v6.7'"
    assert lines[-2:] == ["# bad: [0000001abcde]", "git bisect bad 0000001abcde"]


def test_start_form_prefills_creates_and_reports_errors(owner_client):
    form = owner_client.get("/bisect/new/?good=6.7.0&bad=6.8.0").content.decode()
    assert 'value="6.7.0"' in form and 'value="6.8.0"' in form
    created = owner_client.post("/bisect/new/", {"start": "1", "good": "6.7.0", "bad": "6.8.0"})
    assert created.status_code == 302 and re.match(r"/bisect/\d+/$", created["Location"])
    refused = owner_client.post("/bisect/new/", {"start": "1", "good": "6.8.0", "bad": "6.7.0"})
    assert refused.status_code == 400 and b"not older" in refused.content
    assert Client().get("/bisect/new/").status_code == 302  # sign in first


def test_mark_buttons_only_for_the_owner(owner, owner_client, django_user_model):
    bisection = session_with_steps(owner, 1)
    stranger = django_user_model.objects.create_user("stranger")
    other = Client()
    other.force_login(stranger)
    other.post(f"/bisect/{bisection.pk}/mark/", {"first_bad": "0000000abcde"})
    bisection.refresh_from_db()
    assert not bisection.is_ended
    owner_client.post(f"/bisect/{bisection.pk}/mark/", {"commit": "0000000abcde",
                                                        "verdict": "bad"})
    assert selectors.bisection_state(bisection).next == "git bisect bad 0000000abcde"
    assert 'id="add-step-form"' in owner_client.get(f"/bisect/{bisection.pk}/").content.decode()
    owner_client.post(f"/bisect/{bisection.pk}/mark/", {"commit": "feed1234", "verdict": ""})
    assert selectors.bisection_state(bisection).steps[-1].step.commit == "feed1234"
    owner_client.post(f"/bisect/{bisection.pk}/mark/", {"first_bad": "0000000abcde"})
    bisection.refresh_from_db()
    assert bisection.first_bad == "0000000abcde"
    html = owner_client.get(f"/bisect/{bisection.pk}/").content.decode()
    assert 'id="first-bad"' in html and "0000000abcde" in html


def test_comparison_of_two_kernels_offers_bisect_this(owner):
    for kernel, values in (("2.6.22", [3300.0, 3320.0]), ("2.6.24", [8900.0, 8950.0])):
        make_run(kernel, values)
    comparison = comparison_create(spec=parse_spec({"filters": {"benchmark": "threadtest"},
                                                    "x": "kernel"}), author=owner)
    html = Client().get(f"/c/{comparison.slug}/").content.decode()
    link = re.search(r'id="bisect-this" href="([^"]+)"', html).group(1).replace("&amp;", "&")
    assert link.startswith("/bisect/new/?good=2.6.22&bad=2.6.24&benchmark=threadtest")


def test_finding_snippet_lists_its_bisections_and_links_the_start_form(owner):
    good = [make_run("6.7.0", GOOD)]
    bad = [make_run("6.8.0", BAD)]
    finding = make_finding(good, bad)
    bisection = services.bisection_create(owner=owner, regression=finding.pk)
    services.bisection_update(bisection=bisection, user=owner, first_bad="abc1234")
    html = Template('{% include "bisect/_finding_bisections.html" %}').render(
        Context({"finding": finding}))
    assert f'href="/bisect/{bisection.pk}/"' in html and "abc1234" in html
    assert f'href="/bisect/new/?regression={finding.pk}"' in html


def test_upload_page_carries_the_bisection_from_its_link(owner, owner_client):
    bisection = session_with_steps(owner, 0)
    page = owner_client.get(f"/bisect/{bisection.pk}/").content.decode()
    assert f'href="/upload/?bisect={bisection.pk}"' in page
    upload = owner_client.get(f"/upload/?bisect={bisection.pk}").content.decode()
    assert re.search(rf'name="bisect"[^>]*value="{bisection.pk}"', upload)
    assert 'name="commit"' in upload


def test_page_suggests_the_first_bad_commit_when_no_steps_are_left(owner, owner_client):
    bisection = session_with_steps(owner, 2)
    services.bisection_update(bisection=bisection, user=owner, steps_left=0)
    html = owner_client.get(f"/bisect/{bisection.pk}/").content.decode()
    assert 'id="conclusion"' in html and "<code>0000001abcde</code>" in html
    owner_client.post(f"/bisect/{bisection.pk}/mark/", {"first_bad": "0000001abcde"})
    bisection.refresh_from_db()
    assert bisection.first_bad == "0000001abcde"

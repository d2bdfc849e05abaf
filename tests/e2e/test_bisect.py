"""From a finding (and from a comparison of two kernels) to a bisection page: start it, watch
runs judged between the good and bad bands, type the line it prints, end it."""

import re

import pytest

from benchmarks.comparisons.spec import parse_spec
from benchmarks.services.comparisons import comparison_create
from bisection import services
from bisection.models import Bisection
from tests.bisection.test_api import BAD, GOOD, make_finding
from tests.factories import make_run

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def join(bisection, user, kernel, values):
    claim = services.bisect_claim(value=bisection.pk, user=user)
    services.bisect_join(claim=claim, runs=[make_run(kernel, values, submitter=user)])


def test_from_a_finding_to_its_bisection_page_and_to_the_first_bad_commit(signed_in):
    page = signed_in
    good = [make_run("6.7.0", [v + s for v in GOOD]) for s in (0, 0.2)]
    bad = [make_run("6.8.0", [v + s for v in BAD]) for s in (0, 0.2)]
    finding = make_finding(good, bad)
    page.goto(f"/regressions/{finding.pk}/")
    assert page.text_content("#finding-bisections").count("Not bisected yet") == 1
    page.click("#bisect-this")
    page.click("#bisect-start")
    page.wait_for_url(re.compile(r".*/bisect/\d+/$"))
    bisection = Bisection.objects.get()
    assert bisection.regression_id == finding.pk
    page.wait_for_selector("#bisect-chart[data-rendered='1']")
    assert page.locator("#bisect-chart .shapelayer path").count() == 2  # good and bad bands
    assert page.text_content("#no-steps") == "No steps yet."

    join(bisection, page.user, "6.7.0-00010-g1010101abcde", GOOD)
    join(bisection, page.user, "6.7.0-00020-g2020202abcde", [112.0, 118.0])
    page.reload()
    page.wait_for_selector("#bisect-chart[data-rendered='1']")
    verdicts = page.locator("#bisect-steps tr.step").evaluate_all(
        "rows => rows.map(r => r.dataset.verdict)")
    assert verdicts == ["good", "unknown"]
    assert "can't tell" in page.text_content("#next-hint")
    # Points for both ends and both steps.
    assert page.locator("#bisect-chart .scatterlayer .trace").count() == 4
    # The user decides the inconclusive step by hand; the page prints the line to type.
    page.locator("tr.step[data-commit='2020202abcde'] button[value='bad']").click()
    page.wait_for_selector("#next-command")
    assert page.text_content("#next-command") == "git bisect bad 2020202abcde"
    page.locator("tr.step[data-commit='2020202abcde'] .first-bad-button").click()
    page.wait_for_selector("#first-bad")
    assert "2020202abcde" in page.text_content("#first-bad")
    assert page.text_content("#bisect-status") == "ended"
    page.click("#log-link")
    body = page.text_content("body")
    assert "git bisect good 1010101abcde" in body
    assert "# first bad commit: [2020202abcde]" in body
    # Back on the finding: its first bad commit, linked to the session.
    page.goto(f"/regressions/{finding.pk}/")
    assert page.text_content("#finding-bisections .first-bad") == "2020202abcde"
    page.click("#finding-bisections a[href^='/bisect/']")
    page.wait_for_url(re.compile(rf".*/bisect/{bisection.pk}/$"))
    assert page.get_attribute("#finding-link", "href") == f"/regressions/{finding.pk}/"
    assert page.js_errors == []


def test_bisect_this_from_a_comparison_of_two_kernels(signed_in):
    page = signed_in
    for kernel, values in (("2.6.22", [3300.0, 3320.0]), ("2.6.24", [8900.0, 8950.0])):
        make_run(kernel, values)
    comparison = comparison_create(spec=parse_spec({"filters": {"benchmark": "threadtest"},
                                                    "x": "kernel"}), author=page.user)
    page.goto(f"/c/{comparison.slug}/")
    page.click("#bisect-this")
    assert page.input_value("#bisect-good") == "2.6.22"
    assert page.input_value("#bisect-bad") == "2.6.24"
    page.click("#bisect-start")
    page.wait_for_url(re.compile(r".*/bisect/\d+/$"))
    assert "good 2.6.22 (v2.6.22)" in page.text_content(".subtitle")
    assert page.js_errors == []

"""The /regressions/ pages, follow toggles, the ready comparison and the Atom feeds."""

import json
import re
from xml.etree import ElementTree

import pytest

from benchmarks.models import Comparison
from regressions.models import Follow, Regression

pytestmark = pytest.mark.django_db
ATOM = "{http://www.w3.org/2005/Atom}"


def test_list_page_shows_open_findings_with_a_marked_chart(stepped, client):
    finding = Regression.objects.get()
    page = client.get("/regressions/")
    assert page.status_code == 200
    html = page.content.decode()
    assert f'href="/regressions/{finding.pk}/"' in html
    figure = json.loads(re.search(
        r'<script id="finding-figure-\d+" type="application/json">(.*?)</script>', html,
        re.S).group(1))
    assert figure["data"][0]["x"] == ["2.6.20", "2.6.21", "2.6.22", "2.6.23", "2.6.24",
                                      "2.6.25"]
    (band,) = figure["layout"]["shapes"]
    assert (band["x0"], band["x1"]) == (3, 4)
    assert 'href="/regressions/"' in html and ">Regressions<" in html  # the menu link


def test_list_page_filters(stepped, client):
    html = client.get("/regressions/", {"benchmark": "hackbench"}).content.decode()
    assert 'id="no-findings"' in html
    html = client.get("/regressions/", {"from": "2.6.24"}).content.decode()
    assert 'id="no-findings"' in html
    assert client.get("/regressions/", {"status": "nope"}).status_code == 400


def test_detail_page_has_numbers_and_thread_box(stepped, client):
    finding = Regression.objects.get()
    html = client.get(f"/regressions/{finding.pk}/").content.decode()
    assert "2.6.23" in html and "2.6.24" in html and 'id="threads"' in html
    assert f"target_type=regression&amp;target_id={finding.pk}" in html


def test_compare_button_freezes_a_comparison_with_the_good_kernel_as_baseline(stepped, client):
    finding = Regression.objects.get()
    reply = client.post(f"/regressions/{finding.pk}/compare/")
    assert reply.status_code == 302
    comparison = Comparison.objects.get()
    assert reply["Location"] == comparison.get_absolute_url()
    assert comparison.spec["baseline"] == {"dim": "kernel", "value": "2.6.23"}
    expected = {r.pk for r in finding.runs_good.all()} | {r.pk for r in finding.runs_bad.all()}
    assert set(comparison.run_ids) == expected


def test_status_form_and_follow_need_sign_in(stepped, client):
    finding = Regression.objects.get()
    assert client.post(f"/regressions/{finding.pk}/status/",
                       {"status": "fixed"}).status_code == 302  # to the login page
    finding.refresh_from_db()
    assert finding.status == "open"
    owner, _ = stepped
    client.force_login(owner)
    client.post(f"/regressions/{finding.pk}/status/", {"status": "fixed"})
    finding.refresh_from_db()
    assert finding.status == "fixed" and finding.status_changed_by == owner


def test_follow_toggles(stepped, client):
    owner, _ = stepped
    finding = Regression.objects.get()
    client.force_login(owner)
    client.post("/regressions/follow/", {"machine": finding.machine_id})
    assert Follow.objects.filter(user=owner, machine=finding.machine).exists()
    client.post("/regressions/follow/", {"machine": finding.machine_id})
    assert not Follow.objects.exists()
    assert client.post("/regressions/follow/", {}).status_code == 400


def test_atom_feeds(stepped, client):
    finding = Regression.objects.get()
    feed = ElementTree.fromstring(client.get("/feeds/regressions.atom").content)
    entries = feed.findall(f"{ATOM}entry")
    assert len(entries) == 1
    assert "2.6.23" in entries[0].find(f"{ATOM}title").text
    link = entries[0].find(f"{ATOM}link").get("href")
    assert link.endswith(finding.get_absolute_url())
    runs = ElementTree.fromstring(client.get("/feeds/runs.atom").content)
    assert len(runs.findall(f"{ATOM}entry")) == 6


def test_runs_feed_leaves_withdrawn_runs_out(stepped, client):
    from benchmarks.services.ownership import run_withdraw

    owner, runs = stepped
    run_withdraw(run=runs[0], user=owner)
    feed = ElementTree.fromstring(client.get("/feeds/runs.atom").content)
    links = [entry.find(f"{ATOM}link").get("href") for entry in feed.findall(f"{ATOM}entry")]
    assert len(links) == 5
    assert not [link for link in links if link.endswith(f"/runs/{runs[0].pk}/")]


def test_feed_escapes_user_text(db, client):
    from tests.regressions.conftest import step_series
    step_series(policy="<script>alert(1)</script>")
    from regressions.services import regressions_detect_all
    regressions_detect_all()
    body = client.get("/feeds/runs.atom").content.decode()
    assert "<script>alert" not in body
    html = client.get("/regressions/").content.decode()
    assert "<script>alert" not in html


def test_machine_page_has_a_follow_toggle_for_signed_in_users(stepped, client):
    owner, runs = stepped
    url = runs[0].machine.get_absolute_url()
    assert "Follow regressions" not in client.get(url).content.decode()
    client.force_login(owner)
    assert "Follow regressions" in client.get(url).content.decode()
    client.post("/regressions/follow/", {"machine": runs[0].machine_id, "next": url})
    assert "Unfollow regressions" in client.get(url).content.decode()

"""Two machines side by side, and the harness page."""

import pytest
from django.test import Client

from benchmarks.analysis.envdiff import machine_diff
from benchmarks.services.ownership import run_withdraw
from tests.factories import CORE2, make_run

pytestmark = pytest.mark.django_db

P4 = {**CORE2, "name": "p4-<ht>", "cpu_model": "Intel Pentium 4 HT", "cores_per_socket": 1,
      "threads_per_core": 2, "caches": {"L1d": "16K", "L2": "1M", "numa": {"nodes": 1}}}


@pytest.fixture
def pair(django_user_model):
    owner = django_user_model.objects.create_user("owner")
    core2 = make_run("2.6.22", [1.0], tunables={"sched_compat_yield": 0})
    make_run("2.6.24", [2.0], tunables={"sched_compat_yield": 1})
    p4 = make_run("2.6.24", [3.0], machine=P4, tunables={"sched_compat_yield": 1})
    hidden = make_run("2.6.9", [4.0], machine=P4, submitter=owner)
    run_withdraw(run=hidden, user=owner)
    return core2.machine, p4.machine


def rows_by_key(rows):
    return {(row.section, row.key): row for row in rows}


def test_machine_diff_rows(pair, django_assert_max_num_queries):
    with django_assert_max_num_queries(4):
        rows = rows_by_key(machine_diff(list(pair)))
    assert rows[("machine", "threads per core")].values == (1, 2)
    assert rows[("machine", "CPUs")].values == (2, 2) and not rows[("machine", "CPUs")].differs
    assert rows[("caches", "L2")].values == ("2M", "1M")
    assert rows[("caches", "numa.nodes")].values == (None, 1)  # nested keys flattened
    assert rows[("kernels", "2.6.22")].values == ("1 run", None)
    assert rows[("kernels", "2.6.24")].values == ("1 run", "1 run")
    assert ("kernels", "2.6.9") not in rows  # withdrawn runs are left out
    assert rows[("tunables", "sched_compat_yield")].values == ("0, 1", "1")
    kernels = [key for section, key in rows if section == "kernels"]
    assert kernels == ["2.6.22", "2.6.24"]  # version order


def test_machine_diff_page_and_picker(pair):
    a, b = pair
    client = Client()
    detail = client.get(f"/machines/{a.pk}/").content.decode()
    assert f'action="/machines/{a.pk}/diff/"' in detail and f'value="{b.pk}"' in detail
    picked = client.get(f"/machines/{a.pk}/diff/", {"other": b.pk})
    assert picked.status_code == 302 and picked["Location"] == f"/machines/{a.pk}/diff/{b.pk}/"
    page = client.get(f"/machines/{a.pk}/diff/{b.pk}/").content.decode()
    assert "p4-&lt;ht&gt;" in page and "p4-<ht>" not in page
    assert "threads per core" in page and "sched_compat_yield" in page
    assert "{'" not in page and "&#x27;" not in page  # tables, never a dict's repr
    assert "L1d" in page and 'id="machine-diff-count"' in page
    same = client.get(f"/machines/{a.pk}/diff/{b.pk}/?all=1").content.decode()
    assert "memory (MB)" in same  # identical rows only with ?all=1
    assert "memory (MB)" not in page
    assert client.get(f"/machines/{a.pk}/diff/99999/").status_code == 404
    assert client.get(f"/machines/{a.pk}/diff/", {"other": "x"}).status_code == 302


def test_harness_page(settings):
    settings.ALLOWED_HOSTS = ["bench.example.org", "testserver"]
    client = Client()
    page = client.get("/harness/", HTTP_HOST="bench.example.org")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'href="/harness/schedbench.py"' in html
    assert "export SCHEDBENCH_URL=http://bench.example.org" in html
    assert "SCHEDBENCH_TOKEN=YOUR_TOKEN" in html and 'href="/settings/"' in html
    for command in ("schedbench.py build --url http://bench.example.org", "schedbench.py flush",
                    "schedbench.py calibrate --url http://bench.example.org"):
        assert command in html, command
    assert 'href="/harness/src/threadtest.c"' in html
    assert 'href="/harness/"' in client.get("/").content.decode()  # the menu goes here
    script = (settings.BASE_DIR / "harness" / "schedbench.py").read_text()
    for flag, section in (("--trace", "harness-trace"), ("--bisect", "harness-bisect")):
        described = html.split(f'id="{section}">', 1)[1].split("</dd>", 1)[0]
        assert described.startswith("coming") != (f'"{flag}"' in script), flag

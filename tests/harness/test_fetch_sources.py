"""The downloaded harness alone (no src/ beside it) fetches the C sources the portal serves
and builds them; the portal serves only the allowlisted sources."""

import hashlib
import shutil
import subprocess
import sys

import pytest
from django.test import Client

from tests.harness.conftest import REPO, SCRIPT

pytestmark = pytest.mark.django_db


def test_the_portal_serves_the_sources_and_nothing_else():
    client = Client()
    index = client.get("/harness/src/").json()["files"]
    names = {entry["name"] for entry in index}
    assert {"threadtest.c", "calibrate.c", "pipeline.sh"} <= names
    for entry in index:
        body = b"".join(client.get(f"/harness/src/{entry['name']}").streaming_content)
        assert hashlib.sha256(body).hexdigest() == entry["sha256"]
        assert body == (REPO / "harness" / "src" / entry["name"]).read_bytes()
        assert entry["url"] == f"http://testserver/harness/src/{entry['name']}"
    for name in ("../schedbench.py", "..%2Fschedbench.py", "schedbench.py", "x.c", ".c"):
        assert client.get(f"/harness/src/{name}").status_code == 404, name
    download = client.get("/harness/schedbench.py")  # the contract URL still downloads
    assert download.status_code == 200 and "attachment" in download["Content-Disposition"]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_a_lone_downloaded_harness_fetches_its_sources_and_builds(live_server, tmp_path):
    alone = tmp_path / "download"
    alone.mkdir()
    shutil.copy(SCRIPT, alone / "schedbench.py")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    without_url = subprocess.run(
        [sys.executable, str(alone / "schedbench.py"), "build", "--out", str(tmp_path / "bin")],
        capture_output=True, text=True, timeout=120, env=env)
    assert without_url.returncode == 1 and "--url" in without_url.stderr
    built = subprocess.run(
        [sys.executable, str(alone / "schedbench.py"), "build", "--url", live_server.url,
         "--out", str(tmp_path / "bin")], capture_output=True, text=True, timeout=300, env=env)
    assert built.returncode == 0, built.stderr
    assert (alone / "src" / "threadtest.c").read_bytes() == \
        (REPO / "harness" / "src" / "threadtest.c").read_bytes()
    ran = subprocess.run([str(tmp_path / "bin" / "threadtest"), "-n", "2", "-l", "1000"],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and ran.stdout.strip()
    assert (tmp_path / "bin" / "calibrate").exists()

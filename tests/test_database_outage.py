"""The database goes away under a running gunicorn: the API answers 503 JSON with Retry-After,
pages a short 503 page, frozen permalinks and their exports are still served, and the site
recovers by itself when the database returns.

The database is a throw-away PostgreSQL cluster this test creates with initdb and starts and
stops with pg_ctl (never the machine's service)."""

import contextlib
import glob
import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import free_port, wait_until

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
PG_BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin"))


class Cluster:
    def __init__(self, folder: Path):
        self.folder, self.port = folder, free_port()
        self.data = folder / "data"
        self.bin = Path(PG_BIN[-1])
        # initdb refuses to run as root: run the cluster as the postgres system user then.
        self.as_owner = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def run(self, tool: str, *args: str) -> None:
        subprocess.run([*self.as_owner, str(self.bin / tool), *args], check=True,
                       capture_output=True, cwd="/")

    def create(self) -> "Cluster":
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.as_owner:
            shutil.chown(self.folder, "postgres", "postgres")
        self.run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        return self

    def start(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-w", "-l", str(self.folder / "log"),
                 "-o", f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1", "start")

    def stop(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-w", "-m", "fast", "stop")

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"


def fetch(url: str, data: dict | None = None, token: str | None = None):
    """(status, headers, body) without raising on 4xx/5xx."""
    request = urllib.request.Request(url, data=json.dumps(data).encode() if data else None)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Token {token}")
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


@pytest.fixture
def site(tmp_path):
    if not PG_BIN:
        pytest.fail("PostgreSQL server binaries are missing (/usr/lib/postgresql/*/bin)")
    cluster = Cluster(Path(f"/tmp/sb-outage-{os.getpid()}-{free_port()}")).create()
    cluster.start()
    port = free_port()
    env = {**os.environ, "DATABASE_URL": cluster.url, "DEBUG": "0", "SECRET_KEY": "t" * 50,
           "ALLOWED_HOSTS": "127.0.0.1", "SCHEDBENCH_DATA_DIR": str(tmp_path / "data"),
           "SESSION_COOKIE_SECURE": "0", "CSRF_COOKIE_SECURE": "0",
           "SCHEDBENCH_OUTAGE_RETRY_AFTER": "7", "DJANGO_SETTINGS_MODULE": "portal.settings"}
    manage = [sys.executable, "manage.py"]
    for command in (["migrate", "--noinput", "-v0"], ["collectstatic", "--noinput", "-v0"]):
        subprocess.run(manage + command, cwd=ROOT, env=env, check=True, capture_output=True)
    token = subprocess.run(manage + ["create_api_token", "outage", "--create-user"], cwd=ROOT,
                           env=env, check=True, capture_output=True, text=True).stdout.strip()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "portal.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--timeout", "60", "--log-level", "warning"],
        cwd=ROOT, env=env, stderr=(tmp_path / "gunicorn.log").open("wb"))
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _answers(base), timeout=60, what="gunicorn")
        yield base, token, cluster
    finally:
        server.terminate()
        server.wait(timeout=30)
        with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
            cluster.stop()
        shutil.rmtree(cluster.folder, ignore_errors=True)


def _answers(base: str) -> bool:
    try:
        return fetch(base + "/api/v1/benchmarks/")[0] == 200
    except OSError:
        return False


def test_outage_answers_503_serves_permalinks_and_recovers(site):
    base, token, cluster = site
    runs = [fetch(base + "/api/v1/runs/", {
        "benchmark": "threadtest", "kernel": kernel, "machine": "outage-box",
        "params": {"loops": 1000}, "metrics": {"time_ms": [value, value + 1, value + 2]}},
        token)[2] for kernel, value in (("2.6.22", 3300.0), ("2.6.24", 8900.0))]
    run_ids = [json.loads(body)["id"] for body in runs]
    status, _, body = fetch(base + "/api/v1/comparisons/",
                            {"title": "before the outage", "runs": run_ids, "x": "kernel"}, token)
    assert status == 201, body
    slug = json.loads(body)["slug"]
    permalink = {suffix: fetch(f"{base}/c/{slug}{suffix}") for suffix in
                 ("/", ".json", ".csv", ".txt")}
    assert {suffix: answer[0] for suffix, answer in permalink.items()} == {
        "/": 200, ".json": 200, ".csv": 200, ".txt": 200}

    cluster.stop()
    status, headers, body = fetch(base + "/api/v1/runs/")
    assert status == 503 and headers["Retry-After"] == "7"
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body) == {"error": "the database is unavailable; try again in a moment",
                                "field": None, "line": None, "retry_after": 7}
    status, headers, body = fetch(base + "/api/v1/runs/", {"benchmark": "x"}, token)
    assert status == 503 and headers["Retry-After"] == "7"  # a write too, before parsing
    status, headers, body = fetch(base + "/runs/")
    assert status == 503 and headers["Retry-After"] == "7"
    assert headers["Content-Type"].startswith("text/html") and b"Back in a moment" in body
    for suffix, (_, before_headers, before_body) in permalink.items():
        status, headers, body = fetch(f"{base}/c/{slug}{suffix}")
        assert status == 200, suffix
        assert body == before_body, suffix  # the same bytes as with the database up
        assert headers["Content-Type"] == before_headers["Content-Type"], suffix
    assert fetch(f"{base}/c/no-such-slug/")[0] == 503  # unknown: cannot say 404 honestly

    cluster.start()
    wait_until(lambda: fetch(base + "/api/v1/runs/")[0] == 200, timeout=30,
               what="the site to recover")
    assert json.loads(fetch(base + "/api/v1/runs/")[2])["count"] == 2
    assert fetch(base + "/runs/")[0] == 200
    assert fetch(f"{base}/c/no-such-slug/")[0] == 404

"""The embedded default (`make run`: SQLite, filesystem broker) under load: two Celery workers
store simulation points while clients upload through gunicorn, and nobody sees `database is
locked`. It runs on a SQLite file of its own whatever DATABASE_URL the suite uses."""

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import free_port, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.worker]
ROOT = Path(__file__).resolve().parent.parent
UPLOADS = 48


def post(url: str, body: dict, token: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={
        "Content-Type": "application/json", "Authorization": f"Token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


@pytest.fixture
def embedded_site(tmp_path):
    env = {key: value for key, value in os.environ.items()
           if key not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update({"SCHEDBENCH_DATA_DIR": str(tmp_path / "data"), "DEBUG": "1",
                "ALLOWED_HOSTS": "127.0.0.1", "SCHEDBENCH_CELERY_QUEUE": "schedbench",
                "DJANGO_SETTINGS_MODULE": "portal.settings", "PYTHONUNBUFFERED": "1"})
    manage = [sys.executable, "manage.py"]
    subprocess.run(manage + ["migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True,
                   capture_output=True)
    token = subprocess.run(manage + ["create_api_token", "loaded", "--create-user"], cwd=ROOT,
                           env=env, check=True, capture_output=True, text=True).stdout.strip()
    log = tmp_path / "processes.log"
    port = free_port()
    processes = [subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "portal", "worker", "--pool=solo",
         "--loglevel=INFO", "-n", f"w{n}@%h", "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT) for n in (1, 2)]
    processes.append(subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "portal.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "3", "--timeout", "120"],
        cwd=ROOT, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT))
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _answers(base), timeout=60, what="gunicorn")
        yield base, token, log
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def _answers(base: str) -> bool:
    try:
        return bool(get_json(base + "/api/v1/benchmarks/"))
    except OSError:
        return False


def test_two_workers_and_concurrent_uploads_never_lock(embedded_site):
    base, token, log = embedded_site
    spec = {"workload": "threadtest", "params": {"iterations": 20}, "repeat": 2, "seed": 11,
            "kernels": ["2.6.22", "2.6.24"], "topology": "1x2x1",
            "sweep": {"loops": [1000 * n for n in range(1, 16)]}}
    status, body = post(base + "/api/v1/simulations/", spec, token)
    assert status == 202, body
    job_url = json.loads(body)["url"]

    def upload(n: int) -> tuple[int, bytes]:
        text = "".join(f"2.6.{20 + n % 5}: {1000 + n * 7 + i} ms\n" for i in range(20))
        return post(base + "/api/v1/uploads/", {"text": text, "benchmark": "threadtest",
                                                "machine": f"box-{n % 3}"}, token)

    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(pool.map(upload, range(UPLOADS)))
    assert [status for status, _ in answers] == [201] * UPLOADS, [
        body[:300] for status, body in answers if status != 201]
    job = wait_until(lambda: (job := get_json(job_url))["status"] not in ("queued", "running")
                     and job, timeout=240, interval=1, what="the simulation to finish")
    assert job["status"] == "succeeded", job["error"]
    assert job["progress"] == {"done": 30, "total": 30} and len(job["runs"]) == 30
    uploaded = {run["id"] for _, body in answers for run in json.loads(body)["runs"]}
    assert len(uploaded) == UPLOADS  # one kernel per upload: one run each
    everything = get_json(base + "/api/v1/runs/?page_size=1")["count"]
    assert everything == UPLOADS + 30
    text = log.read_text(errors="replace")
    assert "database is locked" not in text
    assert "Traceback" not in text

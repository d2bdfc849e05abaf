"""A request body sent with `Transfer-Encoding: chunked` and no Content-Length (curl -T -, a
streaming client) is read by the real servers, not taken as empty."""

import http.client
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.models import Run
from benchmarks.services.tokens import token_create
from tests.conftest import database_url_for_test_db, free_port, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parent.parent


def serve(command: list[str], port: int, log: Path):
    env = {**os.environ, "DATABASE_URL": database_url_for_test_db(), "DEBUG": "0",
           "ALLOWED_HOSTS": "127.0.0.1", "SECRET_KEY": "chunked-test", "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("ab"),
                               stderr=subprocess.STDOUT)
    wait_until(lambda: _answers(port), timeout=60, what=" ".join(command[:3]))
    return process


def _answers(port: int) -> bool:
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        connection.request("GET", "/api/v1/benchmarks/")
        return connection.getresponse().status == 200
    except OSError:
        return False


def send_chunked(port: int, path: str, body: bytes, token: str) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    pieces = (body[i:i + 100] for i in range(0, len(body), 100))  # several chunks
    connection.request("POST", path, body=pieces, encode_chunked=True, headers={
        "Content-Type": "application/json", "Authorization": f"Token {token}",
        "Transfer-Encoding": "chunked"})
    response = connection.getresponse()
    return response.status, json.loads(response.read())


@pytest.fixture
def token(django_user_model):
    return token_create(user=django_user_model.objects.create_user("streamer"), name="t")[1]


UPLOAD = {"text": "".join(f"2.6.24: {5200 + i} ms\n" for i in range(30)),
          "benchmark": "threadtest", "machine": "chunked-box"}


def test_gunicorn_reads_a_chunked_upload(token, tmp_path):
    port = free_port()
    server = serve([sys.executable, "-m", "gunicorn", "portal.wsgi", "--bind",
                    f"127.0.0.1:{port}", "--workers", "1"], port, tmp_path / "gunicorn.log")
    try:
        status, body = send_chunked(port, "/api/v1/uploads/", json.dumps(UPLOAD).encode(),
                                    token)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert status == 201, body
    [run] = Run.objects.all()
    assert run.machine.name == "chunked-box"
    assert run.samples.count() == 30


def test_runserver_refuses_a_chunked_body_it_cannot_read_with_411(token, tmp_path):
    port = free_port()
    server = serve([sys.executable, "manage.py", "runserver", "--noreload", "--skip-checks",
                    f"127.0.0.1:{port}"], port, tmp_path / "runserver.log")
    try:
        status, body = send_chunked(port, "/api/v1/uploads/", json.dumps(UPLOAD).encode(),
                                    token)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert status == 411 and "Content-Length" in body["error"]
    assert not Run.objects.exists()

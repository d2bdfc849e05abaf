"""Shared pieces of the portal benchmarks: a PostgreSQL database, a token, a gunicorn server."""

import http.client
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/schedbench_bench"


def bench_env(**extra) -> dict:
    env = dict(os.environ)
    env.setdefault("DATABASE_URL", DEFAULT_DB)
    env.setdefault("SECRET_KEY", "bench-only")
    env["DJANGO_SETTINGS_MODULE"] = "portal.settings"
    env["DEBUG"] = "0"
    env["ALLOWED_HOSTS"] = "127.0.0.1,localhost"
    env["SESSION_COOKIE_SECURE"] = "0"
    env["CSRF_COOKIE_SECURE"] = "0"
    env.update(extra)
    return env


def prepare_database(env: dict) -> None:
    """Create (if needed) and migrate the benchmark database, then empty the run tables."""
    name = env["DATABASE_URL"].rsplit("/", 1)[1]
    exists = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-tAc",
         f"SELECT 1 FROM pg_database WHERE datname = '{name}'"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    if exists != "1":
        subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", name], check=True)
    manage("migrate", "--noinput", "-v0", env=env)
    manage("collectstatic", "--noinput", "-v0", env=env)  # DEBUG=0: WhiteNoise serves these
    manage("shell", "-c", "from benchmarks.models import Run, Artifact; "
           "Run.objects.all().delete(); Artifact.objects.all().delete()", env=env)


def manage(*args: str, env: dict) -> str:
    result = subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True,
                            capture_output=True, text=True)
    return result.stdout


def api_token(env: dict, username: str = "bench") -> str:
    return manage("create_api_token", username, "--create-user", env=env).strip()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Gunicorn:
    """A real gunicorn serving the portal on loopback, with its worker pids for RSS readings."""

    def __init__(self, env: dict, workers: int = 1, extra: tuple = ()):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [PYTHON, "-m", "gunicorn", "portal.wsgi", "--bind", f"127.0.0.1:{self.port}",
             "--workers", str(workers), "--timeout", "900", "--log-level", "warning", *extra],
            cwd=ROOT, env=env,
        )
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(self.url + "/api/v1/benchmarks/", timeout=2).read()
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError("gunicorn did not answer within 60 s")

    def worker_pids(self) -> list[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in children.read_text().split()]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def http_request(url: str, method: str = "GET", path: str = "/", body=None, headers=None,
                 timeout: float = 120) -> tuple[int, bytes]:
    """One request on a fresh loopback connection: (status, body). `body` may be bytes or an
    iterable of chunks (give Content-Length in `headers` then)."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def peak_rss_mb(pid: int) -> float:
    """VmHWM: the most resident memory this process has ever had, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for pid {pid}")


def current_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")

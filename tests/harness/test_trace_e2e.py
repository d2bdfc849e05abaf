"""--trace end to end as root: record threadtest, submit run + trace to a live portal; and the
same while the portal is away: spooled with its trace, delivered by `flush`."""

import os
import socket
import subprocess
import sys

import pytest

from benchmarks.models import Run
from benchmarks.services.tokens import token_create
from tests.harness.conftest import SCRIPT
from traces.models import Trace

pytestmark = [
    pytest.mark.django_db(transaction=True), pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/sys/kernel/tracing/instances"),
                       reason="needs root and tracefs"),
]
FAST = ["--retries", "1", "--backoff", "0.01", "--timeout", "10"]


@pytest.fixture
def token(django_user_model):
    user = django_user_model.objects.create_user("tracer")
    return token_create(user=user, name="e2e")[1]


@pytest.fixture(scope="module")
def threadtest(tmp_path_factory):
    out = tmp_path_factory.mktemp("bin")
    subprocess.run([sys.executable, str(SCRIPT), "build", "--out", str(out)], check=True,
                   capture_output=True, timeout=180)
    return [str(out / "threadtest"), "-n", "30", "-l", "100000"]


def harness(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=300)


def check_trace(run):
    trace = Trace.objects.get(run=run)
    tasks = {t.pid: t for t in trace.tasks.all()}
    threads = [t for t in tasks.values() if t.comm == "threadtest"]
    assert len(threads) >= 31  # the process and its 30 threads, each forked and followed
    assert trace.events > 100 and trace.cpus >= 1
    assert all(t.comm in ("threadtest", "python3", "other") or t.pid == 0
               for t in tasks.values()), {t.comm for t in tasks.values()}
    return trace


def test_run_with_trace_lands_beside_the_run(live_server, token, threadtest, tmp_path):
    result = harness("run", "--url", live_server.url, "--token", token, "--benchmark",
                     "threadtest", "--trace", "--spool-dir", str(tmp_path), *FAST, "--",
                     *threadtest)
    assert result.returncode == 0, result.stderr
    urls = result.stdout.split()
    assert len(urls) == 2 and "/runs/" in urls[0] and "/traces/" in urls[1]
    trace = check_trace(Run.objects.get())
    assert urls[1].rstrip("/").endswith(f"/traces/{trace.pk}")
    assert not list(tmp_path.glob("**/*.trace.gz"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_offline_run_spools_its_trace_and_flush_delivers_both(live_server, token, threadtest,
                                                               tmp_path):
    spool = tmp_path / "spool"
    result = harness("run", "--url", f"http://127.0.0.1:{free_port()}", "--token", token,
                     "--benchmark", "threadtest", "--trace", "--spool-dir", str(spool), *FAST,
                     "--", *threadtest)
    assert result.returncode == 75, result.stderr
    assert len(list(spool.glob("*.json"))) == 1 and len(list(spool.glob("*.trace.gz"))) == 1
    flushed = harness("flush", "--url", live_server.url, "--token", token, "--spool-dir",
                      str(spool), *FAST)
    assert flushed.returncode == 0, flushed.stderr
    check_trace(Run.objects.get())
    assert not list(spool.glob("*.json")) and not list(spool.glob("*.trace.gz"))

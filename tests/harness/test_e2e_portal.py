"""The harness end to end: compile threadtest, run it, submit to a live portal, read it back."""

import json
import subprocess
import sys

import pytest

from benchmarks.models import Run
from benchmarks.services.tokens import token_create
from tests.harness.conftest import SCRIPT

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def token(django_user_model):
    user = django_user_model.objects.create_user("harness")
    return token_create(user=user, name="e2e")[1]


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    out = tmp_path_factory.mktemp("bin")
    subprocess.run([sys.executable, str(SCRIPT), "build", "--out", str(out)], check=True,
                   capture_output=True, timeout=180)
    return out


def harness(*args, timeout=180):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=timeout)


def test_run_submit_and_read_back(live_server, token, binaries, tmp_path):
    result = harness(
        "run", "--url", live_server.url, "--token", token, "--benchmark", "threadtest",
        "--param", "loops=10k", "--param", "iterations=20", "--repeat", "3", "--vmstat", "1",
        "--spool-dir", str(tmp_path / "spool"), "--",
        str(binaries / "threadtest"), "-n", "20", "-l", "10000",
    )
    assert result.returncode == 0, result.stderr
    urls = [line for line in result.stdout.splitlines() if line.startswith("http")]
    assert len(urls) == 1 and "/runs/" in urls[0]
    run = Run.objects.get()
    values = list(run.samples.values_list("value", flat=True))
    assert len(values) == 3 and all(v >= 0 for v in values)
    # What was given, and threadtest's own options at their defaults, named as the simulator's
    # params (the harness built it -O2: the counter lives in a register), so a twin can match.
    assert run.params == {"loops": 10000, "iterations": 20, "yield_in_spin": 0, "pin": 0,
                          "head_start_us": 0, "counter": "register"}
    assert run.source == "api" and run.parser_name == "time-ms"
    uname = subprocess.run(["uname", "-r"], capture_output=True, text=True).stdout.strip()
    assert run.kernel.version == uname
    assert run.machine.cpus and run.machine.cpus >= 1
    assert any(name.startswith("sched") for name in run.tunables) or run.tunables == {}
    assert "cmdline" in run.environment
    assert run.artifact.size > 0 and run.artifact.filename.startswith("threadtest")
    assert not any((tmp_path / "spool").glob("*.json"))


def test_dry_run_sends_nothing(live_server, token, binaries):
    result = harness("run", "--url", live_server.url, "--token", token, "--benchmark",
                     "threadtest", "--dry-run", "--", str(binaries / "threadtest"), "-n", "5")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["benchmark"] == "threadtest" and "time" in payload["text"]
    assert Run.objects.count() == 0


def test_bad_token_is_refused_before_running(live_server, binaries, tmp_path):
    result = harness("run", "--url", live_server.url, "--token", "sbt_wrong", "--benchmark",
                     "threadtest", "--spool-dir", str(tmp_path), "--",
                     str(binaries / "threadtest"), "-n", "5")
    assert result.returncode != 0
    assert "token" in (result.stderr + result.stdout).lower()
    assert Run.objects.count() == 0


def test_vmstat_sampled_while_running_lands_as_a_series(live_server, token, tmp_path):
    result = harness(
        "run", "--url", live_server.url, "--token", token, "--benchmark", "sleeper",
        "--vmstat", "1", "--spool-dir", str(tmp_path), "--",
        "sh", "-c", "sleep 3.2; echo 'time 3200 ms'",
    )
    assert result.returncode == 0, result.stderr
    series = Run.objects.get().series.get(kind="vmstat")
    assert {"r", "cs", "us", "sy", "id"} <= set(series.columns)
    assert len(series.rows) >= 2

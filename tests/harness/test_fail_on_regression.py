"""`run --fail-on-regression` against a live portal: exit 3 when the verdict against the
previous kernel is a regression, 0 otherwise (docs/harness.md, "A CI gate")."""

import shutil
import subprocess
import sys

import pytest

from benchmarks.models import Run
from benchmarks.services.tokens import token_create
from tests.harness.conftest import FIXTURES, SCRIPT

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def token(django_user_model):
    user = django_user_model.objects.create_user("ci")
    return token_create(user=user, name="ci")[1]


def run(url, token, root, ms, *extra):
    """Five repeats printing `time <ms> ms` on the box under `root` (its kernel is its
    osrelease)."""
    return subprocess.run(
        [sys.executable, str(SCRIPT), "run", "--url", url, "--token", token, "--root", root,
         "--benchmark", "sleeper", "--repeat", "5", *extra, "--",
         "echo", f"time {ms} ms"],
        capture_output=True, text=True, timeout=120)


def test_exit_3_on_a_regression_against_the_previous_kernel(live_server, token, tmp_path):
    root = tmp_path / "box"
    shutil.copytree(FIXTURES / "oldbox", root, symlinks=True)
    release = root / "proc" / "sys" / "kernel" / "osrelease"

    release.write_text("2.6.23\n")
    first = run(live_server.url, token, str(root), 100, "--fail-on-regression")
    assert first.returncode == 0, first.stderr  # nothing older: no verdict, no gate

    release.write_text("2.6.24\n")
    slower = run(live_server.url, token, str(root), 200, "--fail-on-regression")
    assert slower.returncode == 3, slower.stdout + slower.stderr
    assert "vs 2.6.23" in slower.stdout and ": regression" in slower.stdout
    assert "--fail-on-regression" in slower.stderr
    assert Run.objects.filter(kernel__version="2.6.24").count() == 1  # stored all the same

    release.write_text("2.6.25\n")
    same = run(live_server.url, token, str(root), 200, "--fail-on-regression")
    assert same.returncode == 0, same.stdout + same.stderr  # like 2.6.24, its previous kernel

    release.write_text("2.6.26\n")
    ungated = run(live_server.url, token, str(root), 600)
    assert ungated.returncode == 0 and ": regression" in ungated.stdout  # without the flag


def test_which_verdicts_count_as_the_previous_kernels(sb):
    def verdict(run, role, regression):
        return {"run": run, "metric": "time_ms", "role": role, "regression": regression}

    body = {"verdicts": [
        verdict(1, "baseline", True), verdict(1, "previous", False),  # older, not previous
        verdict(2, "baseline", True),  # the only older kernel: it is the previous one
        verdict(3, "baseline", False), verdict(3, "previous", True),
        "not a verdict"]}
    assert [(v["run"], v["role"]) for v in sb.previous_regressions(body)] == [
        (2, "baseline"), (3, "previous")]

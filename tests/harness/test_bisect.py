"""`run --bisect ID`: the kernel's commit id is recorded and sent, and the portal's answer (the
`git bisect` line to type) is printed."""

import json
import shutil
import subprocess
import sys

import pytest

from benchmarks.identity import commits
from tests.harness.conftest import SCRIPT

RELEASES = [
    "6.8.0-rc3-00042-gabcdef123456", "6.8.0-rc3-00042-gabcdef123456-dirty", "6.1.0-gdeadbeef",
    "2.6.24-rc1-g1234567", "2.6.24", "6.8.0-rc3+", "6.8.0-generic", "5.15.0-g0123abc+",
    "6.9.0-rc1-next-20240401-g1a2b3c4d5e6f",
]
PRINT = "print('time 100 ms'); print('time 101 ms')"


@pytest.mark.parametrize("release", RELEASES)
def test_harness_and_portal_read_the_same_commit(sb, release):
    assert sb.kernel_commit(release) == (commits.kernel_commit(release),
                                         commits.kernel_dirty(release))


def test_proc_version_is_the_fallback(sb):
    version = "Linux version 6.8.0-rc3-00042-gabcdef123456 (me@box) (gcc 13.2) #7 SMP"
    assert sb.kernel_commit("6.8.0-custom", version) == ("abcdef123456", False)
    assert sb.kernel_commit("6.8.0", "garbage") == (None, False)


@pytest.fixture
def gitbox(oldbox, tmp_path):
    """The old box booted into a kernel built from git at abcdef123456, with local changes."""
    return booted(oldbox, tmp_path, "6.8.0-rc3-00042-gabcdef123456-dirty")


def dry_run(sb, capsys, root, *extra):
    argv = ["run", "--benchmark", "threadtest", "--root", root, "--dry-run", "-q", *extra,
            "--", sys.executable, "-c", PRINT]
    assert sb.main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_bisect_sends_the_id_and_the_commit(sb, capsys, gitbox):
    payload = dry_run(sb, capsys, gitbox, "--bisect", "7")
    assert payload["bisect"] == 7 and payload["commit"] == "abcdef123456"
    assert payload["kernel"] == "6.8.0-rc3-00042-gabcdef123456-dirty"
    assert payload["environment"]["kernel_commit"] == "abcdef123456"
    assert payload["environment"]["kernel_dirty"] is True


def test_commit_option_wins_and_no_bisect_sends_neither(sb, capsys, gitbox, oldbox):
    assert dry_run(sb, capsys, gitbox, "--bisect", "7", "--commit", "feed123")["commit"] == \
        "feed123"
    plain = dry_run(sb, capsys, gitbox)
    assert "bisect" not in plain and "commit" not in plain
    old = dry_run(sb, capsys, oldbox, "--bisect", "3")  # 2.6.24.1-smp names no commit
    assert old["bisect"] == 3 and "commit" not in old
    assert "kernel_commit" not in old["environment"]


def booted(oldbox, tmp_path, release):
    root = tmp_path / release
    shutil.copytree(oldbox, root)
    (root / "proc/sys/kernel/osrelease").write_text(release + "\n")
    return str(root)


@pytest.mark.django_db(transaction=True)
def test_run_bisect_against_a_live_portal_prints_the_line_to_type(live_server, oldbox,
                                                                    django_user_model, tmp_path):
    """The real routine: run the good kernel, the bad kernel, then the commit git checked out,
    each with --bisect; the last answer is the line to type."""
    from benchmarks.services.tokens import token_create
    from bisection.services import bisection_create

    user = django_user_model.objects.create_user("bisector")
    token = token_create(user=user, name="t")[1]
    bisection = bisection_create(owner=user, good="6.7.0", bad="6.8.0", benchmark="threadtest")

    def run(release, centre):
        values = [centre + delta for delta in (0.1, 0.3, -0.1, 0.0, -0.3)]
        command = f"for v in {values!r}: print(f'time {{v}} ms')"
        return subprocess.run(
            [sys.executable, str(SCRIPT), "run", "--url", live_server.url, "--token", token,
             "--benchmark", "threadtest", "--root", booted(oldbox, tmp_path, release),
             "--bisect", str(bisection.pk), "--spool-dir", str(tmp_path / "spool"), "-q",
             "--", sys.executable, "-c", command], capture_output=True, text=True, timeout=120)

    assert "the good end is good" in run("6.7.0", 100).stderr
    assert "the bad end is bad" in run("6.8.0", 150).stderr
    result = run("6.8.0-rc3-00042-gabcdef123456-dirty", 150)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(live_server.url + "/runs/")
    # After the run (and the regression verdicts' lines), the line to type comes last.
    assert lines[-1] == "git bisect bad abcdef123456", result.stdout + result.stderr
    assert "commit abcdef123456 is bad" in result.stderr

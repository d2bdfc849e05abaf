"""Our C benchmarks: `build` compiles them warning-free, and each prints what it promises."""

import ast
import glob
import os
import re
import shutil
import subprocess
import sys

import pytest

from .conftest import FIXTURES, SCRIPT

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
CPUS = os.cpu_count() or 1
STRICT = "-O2 -Wall -Wextra -Werror"


@pytest.fixture(scope="module")
def bindir(tmp_path_factory):
    from .conftest import load_harness

    out = tmp_path_factory.mktemp("bin")
    # -Werror: a warning is a failed build here.
    assert load_harness().main(["build", "--out", str(out), "--cflags=" + STRICT]) == 0
    return out


def execute(path, *args, timeout=30):
    proc = subprocess.run([str(path), *args], capture_output=True, text=True, timeout=timeout,
                          check=True)
    return proc.stdout


def test_build_makes_every_binary(bindir):
    names = sorted(os.listdir(str(bindir)))
    assert names == ["calibrate", "pipeline.sh", "rqfill", "threadtest", "threadtest-O0",
                     "threadtest_burn", "yieldloop"]
    assert all(os.access(str(bindir / n), os.X_OK) for n in names)
    # The README's harness example says what `build` makes (it named four of the seven).
    readme = (SCRIPT.parent.parent / "README.md").read_text()
    said = readme.split("python3 schedbench.py build", 1)[1].split("schedbench.py run", 1)[0]
    assert [n for n in names if n not in said] == []


def test_build_without_sources_says_where_to_get_them(tmp_path):
    lonely = tmp_path / "schedbench.py"
    shutil.copy(str(SCRIPT), str(lonely))  # downloaded alone, no src/ beside it
    proc = subprocess.run([sys.executable, str(lonely), "build", "--out", str(tmp_path / "b")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert "harness/src/" in proc.stderr
    assert "--src DIR" in proc.stderr


def test_threadtest_prints_one_time_line(bindir):
    out = execute(bindir / "threadtest", "-n", "20", "-l", "10000")
    assert re.fullmatch(r"time \d+ ms\n", out)


@pytest.mark.parametrize("flags", [["-y"], ["-s"], ["-y", "-s"]])
def test_threadtest_variants(bindir, flags):
    assert re.fullmatch(r"time \d+ ms\n", execute(bindir / "threadtest", "-n", "5", *flags))


@pytest.mark.skipif(CPUS < 2, reason="pinning needs CPU 1")
def test_threadtest_pinned(bindir):
    assert re.fullmatch(r"time \d+ ms\n", execute(bindir / "threadtest", "-n", "5", "-a"))


def test_threadtest_unoptimised_and_suffixes(bindir):
    assert re.fullmatch(r"time \d+ ms\n", execute(bindir / "threadtest-O0", "-n", "3", "-l",
                                                  "10k"))


def test_threadtest_rejects_bad_options(bindir):
    proc = subprocess.run([str(bindir / "threadtest"), "-l", "lots"], capture_output=True,
                          check=False)
    assert proc.returncode == 2


def test_burn_line_and_sane_idx(bindir):
    out = execute(bindir / "threadtest_burn", "-n", "20", "-b", "200")
    m = re.fullmatch(r"time: (\d+) \(us\)  work: (\d+)  wait: (\d+)  idx: (\d+\.\d\d)\n", out)
    assert m, out
    wall, work, wait, idx = int(m[1]), int(m[2]), int(m[3]), float(m[4])
    assert work >= 2 * 20 * 200  # both threads burned at least what was asked
    assert 0 < idx <= CPUS + 0.2
    assert abs(idx - work / wall) < 0.01
    assert wait >= 0


def test_yieldloop_counts_yields_and_switches(bindir):
    out = execute(bindir / "yieldloop", "-t", "2", "-d", "0.2")
    fields = dict(re.findall(r"(\w+(?:/s)?): ([\d.]+)", out))
    assert int(fields["tasks"]) == 2
    assert int(fields["cpus"]) == CPUS
    assert int(fields["yields"]) > 0
    assert float(fields["yields/s"]) > 0
    assert int(fields["context_switches"]) == int(fields["voluntary"]) + int(
        fields["involuntary"])


def test_rqfill_table_has_increasing_lengths(bindir):
    out = execute(bindir / "rqfill", "-L", "0,1,2,4", "-i", "500")
    lines = out.splitlines()
    assert lines[0] == "runqueue length  microseconds"
    rows = [line.split() for line in lines[1:]]
    lengths = [int(r[0]) for r in rows]
    assert lengths == [1, 2, 3, 5]
    assert all(float(r[1]) > 0 for r in rows)
    # The loopers are killed on exit, not left spinning.
    assert not subprocess.run(["pgrep", "-f", str(bindir / "rqfill")], capture_output=True,
                              check=False).stdout


def test_rqfill_default_steps_double(bindir):
    out = execute(bindir / "rqfill", "-m", "4", "-i", "200")
    assert [int(line.split()[0]) for line in out.splitlines()[1:]] == [1, 2, 3, 5]


@pytest.mark.skipif(shutil.which("gzip") is None, reason="gzip not installed")
def test_pipeline_demo(bindir):
    out = execute(bindir / "pipeline.sh", "-n", "2", "-m", "1", "-c", "gzip")
    m = re.fullmatch(r"time: (\d+) \(ms\)  cpu_utilization: (\d+\.\d\d)  stages: 2  "
                     r"input_mb: 1  compressor: gzip\n", out)
    assert m, out
    assert 0 < float(m[2]) <= CPUS + 0.5


def test_sources_compile_cleanly_one_by_one(tmp_path):
    for source in glob.glob(str(SCRIPT.parent / "src" / "*.c")):
        for opt in ("-O0", "-O2"):
            subprocess.run(["gcc", opt, "-Wall", "-Werror", "-pthread", "-o",
                            str(tmp_path / "a.out"), source], check=True)


def test_script_is_python38_syntax():
    ast.parse(SCRIPT.read_text(), feature_version=(3, 8))


def find_python38():
    candidates = [shutil.which("python3.8")] + sorted(
        glob.glob(os.path.expanduser("~/.pyenv/versions/3.8*/bin/python3.8")))
    for candidate in filter(None, candidates):
        proc = subprocess.run([candidate, "--version"], capture_output=True, text=True,
                              check=False)
        if proc.returncode == 0 and proc.stdout.startswith("Python 3.8"):
            return candidate
    return None


def test_script_runs_on_python38(tmp_path):
    python = find_python38()
    if python is None:
        pytest.skip("no Python 3.8 interpreter here")
    argv = [python, str(SCRIPT), "run", "--benchmark", "b", "--dry-run", "-q", "--root",
            str(FIXTURES / "oldbox"), "--vmstat", "0.05", "--param", "loops=1M", "--",
            "sh", "-c", "sleep 0.2; echo time 1 ms"]
    proc = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert '"kernel": "2.6.24.1-smp"' in proc.stdout
    proc = subprocess.run([python, str(SCRIPT), "flush", "--spool-dir", str(tmp_path)],
                          capture_output=True, text=True, check=True)
    assert "nothing to flush" in proc.stderr

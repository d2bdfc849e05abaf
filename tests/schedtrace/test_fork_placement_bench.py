"""bench/fork_placement.py: its table is the library's summary, and --record refuses cleanly
where it cannot record."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from schedtrace.forks import CLASSES, fork_placements

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "fork_placement.py"
RECORDINGS = sorted((ROOT / "tests" / "fixtures" / "traces" / "fork_placement")
                    .glob("*.trace.gz"))


def bench(*args, **kwargs):
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True,
                          timeout=300, check=False, cwd=ROOT, **kwargs)


def test_the_default_table_is_every_fixture_with_the_librarys_counts():
    done = bench()
    assert done.returncode == 0, done.stderr
    tables = done.stdout.split(str(RECORDINGS[0].parent))[1:]
    assert len(tables) == len(RECORDINGS) == 4
    for path, printed in zip(RECORDINGS, tables, strict=True):
        assert printed.startswith(f"/{path.name}: ftrace, ")
        rows = {line.split()[0]: line.split() for line in printed.splitlines()[2:]}
        _, found = fork_placements(path)
        for name, row in found.summary().items():
            if row["count"]:
                assert (int(rows[name][1]), int(rows[name][2])) == (row["count"], row["timed"])
                assert rows[name][3] == f"{row['median_ms']:.3f}"
            else:
                assert name not in rows
        assert set(rows) <= set(CLASSES)


# The interpreter lives under root's home, which another user cannot read: the child loads
# the script as root, then gives root up for good before running it.
AS_NOBODY = f"""
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("fork_placement", {str(BENCH)!r})
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)
os.setgroups([])
os.setgid(65534)
os.setuid(65534)
sys.exit(script.main(["--record", "1"]))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="gives root up: needs it first")
def test_record_without_root_refuses_in_one_line():
    done = subprocess.run([sys.executable, "-c", AS_NOBODY], capture_output=True, text=True,
                          timeout=120, check=False, cwd="/")
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == ["fork_placement: --record needs root (tracefs instances)"]


def test_record_needs_a_positive_count():
    done = bench("--record", "0")
    assert done.returncode == 2
    assert "--record takes a count of at least 1" in done.stderr

""".ci/run installs, on a fresh machine, the real tools the tests run: only those missing."""

import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = (ROOT / ".ci" / "run").read_text()


def tools() -> dict[str, str]:
    listed = re.search(r'^REAL_TOOLS="([^"]*)"', SCRIPT, re.M).group(1).split()
    return dict(pair.split(":") for pair in listed)


def missing(tmp_path: Path, present: list[str]) -> list[str]:
    """missing_packages from .ci/run, with only `present` (and bash's own tools) on PATH."""
    bin_dir = tmp_path / f"bin{len(list(tmp_path.iterdir()))}"
    bin_dir.mkdir()
    for name in [*present, "sort"]:
        (bin_dir / name).symlink_to(shutil.which(name) or "/bin/true")
    definitions = re.search(r'^REAL_TOOLS=.*?^}\n', SCRIPT, re.M | re.S).group(0)
    result = subprocess.run(["/bin/bash", "-c", definitions + "missing_packages"],
                            env={**os.environ, "PATH": str(bin_dir)},
                            capture_output=True, text=True, check=True)
    return result.stdout.split()


def test_every_recorded_tool_is_installed_by_ci():
    recorded = {path.name for path in (ROOT / "tests/fixtures/real").iterdir() if path.is_dir()}
    recorded -= {"schbench"}  # not packaged by Debian: its fixtures are written, not recorded
    assert recorded <= set(tools())
    assert set(tools().values()) == {"rt-tests", "linux-perf", "sysbench", "stress-ng", "dbench",
                                     "hyperfine"}


def test_only_missing_tools_are_installed(tmp_path):
    assert missing(tmp_path, []) == sorted(set(tools().values()))
    # dbench's package is still needed while tbench is missing; hackbench alone is not rt-tests
    assert missing(tmp_path, ["hackbench", "dbench", "perf", "sysbench", "stress-ng",
                              "hyperfine"]) == ["dbench", "rt-tests"]


def test_nothing_is_installed_when_every_tool_is_there(tmp_path):
    assert missing(tmp_path, list(tools())) == []
    assert re.search(r'if \[ -n "\$\{packages//\[\[:space:\]\]/\}" \]; then\n\s+apt-get update',
                     SCRIPT)

"""schedtrace's optional compiled build (schedtrace/build.py): chosen only when current, and the
same events, figures, segments and wakeups as the pure-Python sources.

The build runs on a copy of the package in a temporary directory, so the checkout (and other
test processes importing it) never sees half-written extension modules."""

import importlib.machinery
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import schedtrace
from schedtrace import build

REPO = pathlib.Path(schedtrace.__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "traces"
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]

# run in the copy: everything a trace gives, for every fixture trace
OUTPUTS = """
import hashlib, json, pathlib, sys
sys.path.insert(0, sys.argv[1])
import schedtrace, schedtrace._compiled, schedtrace.stats
out = {"compiled": schedtrace.COMPILED, "stats_file": schedtrace.stats.__file__,
       "state": schedtrace._compiled.STATE, "traces": {}}
for path in sorted(pathlib.Path(sys.argv[2]).rglob("*")):
    if not path.is_file() or path.suffix in (".md", ".json", ".sh", ".awk"):
        continue
    for window in (20000, 3):
        found = []
        stream = schedtrace.open_events(path, reorder_window=window)
        stats = schedtrace.TraceStats(
            on_segment=lambda c, t, s, e, st: found.append(("seg", c, t.index, s, e, st)),
            on_wakeup=lambda f, to, t, at: found.append(("wake", f, to, t.index, at)))
        digest = hashlib.sha256()
        for event in stream:
            digest.update(repr((event.ts, event.cpu, event.kind, event.pid, event.comm,
                                event.line, sorted(event.fields().items()))).encode())
            stats.add(event)
        stats.finish()
        digest.update(repr(found).encode())
        out["traces"][f"{path.name} {window}"] = [
            digest.hexdigest(), stream.format, stream.lines, stream.events, stream.skipped,
            stream.lost_events, stream.late_events, stream.warnings, stats.summary(),
            [task.as_dict() for task in stats.tasks],
            [cpu.as_dict() for _, cpu in sorted(stats.cpus.items())], stats.warnings()]
print(json.dumps(out))
"""


def _copy_package(root: pathlib.Path) -> None:
    shutil.copytree(REPO / "schedtrace", root / "schedtrace",
                    ignore=shutil.ignore_patterns("*.so", "_compiled.manifest", "__pycache__"))


def _outputs(root: pathlib.Path, pure: str) -> dict:
    run = subprocess.run([sys.executable, "-c", OUTPUTS, str(root), str(FIXTURES)],
                         capture_output=True, text=True,
                         env={**os.environ, "SCHEDBENCH_PURE_PYTHON": pure})
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


@pytest.mark.slow
@pytest.mark.skipif(build.build_problem() is not None, reason="needs mypy and a C compiler")
def test_compiled_build_gives_the_same_results_and_is_left_when_stale(tmp_path):
    _copy_package(tmp_path)
    made = subprocess.run([sys.executable, "-m", "schedtrace.build"], cwd=tmp_path,
                          capture_output=True, text=True,
                          env={**os.environ, "SCHEDBENCH_PURE_PYTHON": ""})
    assert made.returncode == 0, made.stdout[-2000:] + made.stderr[-2000:]
    compiled, pure = _outputs(tmp_path, ""), _outputs(tmp_path, "1")
    assert compiled.pop("compiled") is True and compiled.pop("stats_file").endswith(SUFFIX)
    assert pure.pop("compiled") is False and pure.pop("stats_file").endswith("stats.py")
    assert "compiled with mypyc" in compiled.pop("state")
    assert "SCHEDBENCH_PURE_PYTHON" in pure.pop("state")
    assert len(compiled["traces"]) >= 18
    burn = compiled["traces"]["ftrace_burn.trace 20000"]
    assert burn[3] == 1342 and burn[8]["events"] == 1342  # the trace was really read
    assert compiled == pure
    # an edited source makes the build stale: the sources run, never the old build
    source = tmp_path / "schedtrace" / "stats.py"
    source.write_text(source.read_text() + "\n# edited\n")
    stale = _outputs(tmp_path, "")
    assert stale["compiled"] is False and "older than the sources" in stale["state"]


def test_without_a_build_the_package_is_pure_python(tmp_path):
    _copy_package(tmp_path)
    outputs = _outputs(tmp_path, "")
    assert outputs["compiled"] is False and outputs["stats_file"].endswith("stats.py")
    assert outputs["state"] == "pure Python (no compiled build)"

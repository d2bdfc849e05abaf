"""The optional compiled build (simulator/build.py): chosen only when current, same results.

The build itself is exercised on a copy of the package in a temporary directory, so the
checkout (and other test processes importing it) never sees half-written extension modules.
"""

import configparser
import importlib.machinery
import json
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

import pytest

import simulator

REPO = pathlib.Path(simulator.__file__).resolve().parent.parent
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]
BURN_TRACE = REPO / "tests" / "fixtures" / "traces" / "ftrace_burn.trace"

PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import simulator, simulator.engine, simulator._compiled
print(json.dumps([simulator.COMPILED, simulator.engine.__file__, simulator._compiled.STATE]))
"""

# run in the copy: every golden spec must give its golden JSON, and a spread of workloads
# and kernels must give identical results on the fast path and in reference mode
CHECK = """
import importlib.util, json, sys
sys.path.insert(0, sys.argv[1])
import simulator
spec = importlib.util.spec_from_file_location("golden", sys.argv[2])
golden = importlib.util.module_from_spec(spec)
spec.loader.exec_module(golden)
bad = [name for name, s in sorted(golden.SPECS.items())
       if golden.golden_result(s) != json.loads(golden.path_for(name).read_text())]
for kernel in ("2.4", "2.6.22", "2.6.24", "rsdl-0.31", "6.6-eevdf"):
    for workload, params in (("chatroom", {"rooms": 2, "clients": 4, "messages": 20}),
                             ("threadtest", {"iterations": 4, "loops": 30000,
                                             "yield_in_spin": True}),
                             ("periodic", {"duration_ms": 100})):
        s = {"workload": workload, "kernel": kernel, "topology": "2x2x2", "params": params}
        fast, plain = simulator.run(s), simulator.run(s, reference=True)
        fast.pop("wall_seconds"), plain.pop("wall_seconds")
        if fast != plain:
            bad.append(f"reference mode {workload} {kernel}")
print(json.dumps({"compiled": simulator.COMPILED, "mismatches": bad}))
"""

# run in the copy with and without the compiled build: the paths the goldens do not take (the
# ftrace writer's hooks, replay's hand-built tasks) must work compiled and give the same output
OUTPUTS = """
import io, json, sys
sys.path.insert(0, sys.argv[1])
import simulator
from simulator.replay import replay
traced = io.StringIO()
simulator.run({"workload": "wake-pingpong", "kernel": "6.6-eevdf", "cpus": 2,
               "params": {"pairs": 2, "roundtrips": 30}}, trace=traced, trace_format="ftrace")
replayed = replay(sys.argv[2], "2.6.22")
replayed.pop("wall_seconds")
print(json.dumps({"compiled": simulator.COMPILED, "ftrace": traced.getvalue(),
                  "replay": replayed}, sort_keys=True, default=str))
"""


def _copy_package(dest):
    shutil.copytree(REPO / "simulator", dest / "simulator",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__",
                                                  "_compiled.manifest"))


def _probe(root, **env):
    out = subprocess.run([sys.executable, "-c", PROBE, str(root)], capture_output=True,
                         text=True, check=True, env={**os.environ, **env})
    assert out.stderr == ""
    return json.loads(out.stdout)


def test_pure_python_can_be_forced(tmp_path):
    _copy_package(tmp_path)
    compiled, engine_file, state = _probe(tmp_path, SCHEDBENCH_PURE_PYTHON="1")
    assert compiled is False and engine_file.endswith("engine.py")
    assert "pure Python" in state


def test_a_stale_build_is_never_imported(tmp_path):
    """An extension module whose source changed since the build is skipped: the sources run
    (this one is not even a valid library, so importing it would fail loudly)."""
    _copy_package(tmp_path)
    (tmp_path / "simulator" / f"engine{SUFFIX}").write_bytes(b"not a shared library")
    (tmp_path / "simulator" / "_compiled.manifest").write_text("engine 0000\n")
    compiled, engine_file, state = _probe(tmp_path, SCHEDBENCH_PURE_PYTHON="")
    assert compiled is False and engine_file.endswith("engine.py")
    assert "older than the sources" in state


def test_the_build_type_checks_as_lint_does():
    """mypyc's front end runs the checks `make lint` runs (mypy.ini), with no error code
    disabled, so what is compiled is what lint passed.  (Lint's warn_unused_ignores and
    warn_redundant_casts are hygiene of the sources, not checks on what is compiled.)"""
    from simulator import build

    config = configparser.ConfigParser()
    assert config.read(REPO / "mypy.ini")
    options = config["mypy"]
    checks = {f"--{name.replace('_', '-')}" for name, value in options.items()
              if value == "True" and name not in ("warn_unused_ignores", "warn_redundant_casts")}
    assert checks and checks <= set(build.MYPY_FLAGS)
    assert f"--follow-imports={options['follow_imports']}" in build.MYPY_FLAGS
    assert not [flag for flag in build.MYPY_FLAGS if flag.startswith(("--disable", "--no-"))]


def _can_compile():
    try:
        import mypyc  # noqa: F401
    except ImportError:
        return False
    return shutil.which(sysconfig.get_config_var("CC").split()[0] or "cc") is not None


@pytest.mark.skipif(not _can_compile(), reason="needs mypy (requirements-dev) and a C compiler")
def test_speed_flags_are_only_those_the_compiler_accepts(monkeypatch):
    """The build's code-generation flags (SPEED_FLAGS) go to a compiler that takes them (gcc,
    clang); a flag it refuses, or a compiler that fails, adds nothing."""
    from simulator import build

    assert build._speed_flags() == list(build.SPEED_FLAGS)  # gcc and clang take them all
    monkeypatch.setattr(build, "SPEED_FLAGS",
                        ("-fno-semantic-interposition", "-fno-such-option-schedbench"))
    assert build._speed_flags() == ["-fno-semantic-interposition"]
    monkeypatch.setenv("CC", "false")
    assert build._speed_flags() == []


@pytest.mark.slow
@pytest.mark.skipif(not _can_compile(), reason="needs mypy (requirements-dev) and a C compiler")
def test_compiled_build_gives_the_golden_results(tmp_path):
    _copy_package(tmp_path)
    build = subprocess.run([sys.executable, "-m", "simulator.build"], cwd=tmp_path,
                           capture_output=True, text=True,
                           env={**os.environ, "SCHEDBENCH_PURE_PYTHON": ""})
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    assert list((tmp_path / "simulator").glob(f"engine{SUFFIX}"))
    assert not _instrumented(tmp_path)  # the profile-guided build's final one, with gcc
    compiled, engine_file, _state = _probe(tmp_path, SCHEDBENCH_PURE_PYTHON="")
    assert compiled is True and engine_file.endswith(SUFFIX)
    check = subprocess.run([sys.executable, "-c", CHECK, str(tmp_path),
                            str(REPO / "tests" / "simulator" / "golden.py")],
                           capture_output=True, text=True, check=True,
                           env={**os.environ, "SCHEDBENCH_PURE_PYTHON": ""})
    assert json.loads(check.stdout) == {"compiled": True, "mismatches": []}
    outputs = {}
    for pure in ("", "1"):
        out = subprocess.run([sys.executable, "-c", OUTPUTS, str(tmp_path), str(BURN_TRACE)],
                             capture_output=True, text=True,
                             env={**os.environ, "SCHEDBENCH_PURE_PYTHON": pure})
        assert out.returncode == 0, out.stderr[-2000:]
        outputs[pure] = json.loads(out.stdout)
    assert (outputs[""].pop("compiled"), outputs["1"].pop("compiled")) == (True, False)
    assert outputs[""]["ftrace"].count("sched_switch") > 50
    assert outputs[""] == outputs["1"]


def _instrumented(root):
    """Whether any compiled module of the copy carries gcc's profiling runtime (libgcov, linked
    into a -fprofile-generate build): such a build writes profile files at every exit."""
    return any(b"__gcov_" in path.read_bytes()
               for path in (root / "simulator").rglob(f"*{SUFFIX}"))


def _gcc():
    from simulator import build

    return _can_compile() and build.pgo_problem() is None


def test_the_profile_guided_build_needs_gcc(monkeypatch, tmp_path):
    """gcc's -fprofile-generate / -fprofile-use need no merge step; any other compiler (clang's
    profiles would), or one whose preprocessor does not run, gets the plain build."""
    from simulator import build

    fake_clang = tmp_path / "clang"
    fake_clang.write_text("#!/bin/sh\necho '#define __GNUC__ 4'; echo '#define __clang__ 1'\n")
    fake_clang.chmod(0o755)
    monkeypatch.setenv("CC", str(fake_clang))
    assert build.pgo_problem() == "the C compiler is not gcc"
    monkeypatch.setenv("CC", "false")
    assert build.pgo_problem() == "the C compiler's preprocessor did not run"
    monkeypatch.setenv("CC", "/nonexistent/cc")
    assert build.pgo_problem() == "the C compiler's preprocessor did not run"
    monkeypatch.setenv("CC", "gcc")
    if shutil.which("gcc"):
        assert build.pgo_problem() is None


@pytest.mark.slow
@pytest.mark.skipif(not _gcc(), reason="needs mypy (requirements-dev) and gcc")
def test_a_failed_training_run_leaves_the_plain_build(tmp_path):
    """The profile-guided build never leaves its instrumented build installed: when the
    training run fails, the modules are compiled again without profiling."""
    _copy_package(tmp_path)
    build_py = tmp_path / "simulator" / "build.py"
    source = build_py.read_text()
    assert source.count('TRAINING = """\n') == 1
    build_py.write_text(source.replace('TRAINING = """\n', 'TRAINING = """\nraise SystemExit(3)\n'))
    done = subprocess.run([sys.executable, "-m", "simulator.build", "--progress"], cwd=tmp_path,
                          capture_output=True, text=True,
                          env={**os.environ, "SCHEDBENCH_PURE_PYTHON": ""})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "the instrumented build first" in done.stdout
    assert "the training run failed, building without it" in done.stdout
    assert "the build with the profile" not in done.stdout
    assert list((tmp_path / "simulator").glob(f"engine{SUFFIX}"))
    assert not _instrumented(tmp_path)
    compiled, _engine_file, _state = _probe(tmp_path, SCHEDBENCH_PURE_PYTHON="")
    assert compiled is True


def _build_if_possible(root, **env):
    return subprocess.run([sys.executable, "-m", "simulator.build", "--if-possible"], cwd=root,
                          capture_output=True, text=True, env={**os.environ, **env})


def test_make_runs_build_says_why_it_did_not_compile_without_a_compiler(tmp_path):
    """`make run` builds with --if-possible: no compiler is a line of explanation and exit 0,
    and the package stays pure Python."""
    _copy_package(tmp_path)
    done = _build_if_possible(tmp_path, CC="/nonexistent/cc")
    assert done.returncode == 0 and done.stderr == ""
    assert "not compiled (no C compiler (/nonexistent/cc))" in done.stdout
    assert not list((tmp_path / "simulator").rglob(f"*{SUFFIX}"))
    assert not (tmp_path / "simulator" / "_compiled.manifest").exists()
    compiled, _engine_file, _state = _probe(tmp_path, SCHEDBENCH_PURE_PYTHON="")
    assert compiled is False


@pytest.mark.slow
@pytest.mark.skipif(not _can_compile(), reason="needs mypy (requirements-dev)")
def test_make_runs_build_survives_a_compiler_that_fails(tmp_path):
    _copy_package(tmp_path)
    done = _build_if_possible(tmp_path, CC="false")  # found on PATH, fails every compile
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "not compiled (compilation failed)" in done.stdout
    assert not list((tmp_path / "simulator").rglob(f"*{SUFFIX}"))
    assert not (tmp_path / "simulator" / "_compiled.manifest").exists()

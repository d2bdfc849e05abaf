"""Optional compiled build of the simulator's hot modules with mypyc.

    python -m simulator.build               compile them in place (needs mypy and a C compiler;
                                            with gcc profile-guided: built twice around a
                                            training run)
    python -m simulator.build --no-pgo      the same, compiled once without a profile
    python -m simulator.build --if-possible the same where this machine can, else say why and
                                            leave the package pure Python (what `make run` does)
    python -m simulator.build --clean       remove the compiled modules again

The compiled modules are only an accelerator: they are extension modules beside the .py files,
which Python imports in preference to the sources.  Without them (no compiler, or never built)
the package runs as pure Python, with identical results (tests/simulator checks both).  The
build records a hash of each source; once a module is edited the build is stale and the package
runs the pure-Python sources again (simulator/_compiled.py), so an edit never runs old code.
SCHEDBENCH_PURE_PYTHON=1 forces the pure-Python sources.
"""

import argparse
import importlib.machinery
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time

from ._compiled import GROUP, HOT_MODULES, MANIFEST, PACKAGE_DIR, compiled_files, source_hashes

# mypy options for the build: the checks of `make lint` (mypy.ini at the repository root, which
# mypy also reads when it is there), none disabled; given here as well so that a copy of the
# package alone builds with the same ones
MYPY_FLAGS = ["--check-untyped-defs", "--warn-unreachable", "--strict-equality",
              "--follow-imports=silent"]

SETUP_PY = """
import sys
from setuptools import setup
from mypyc.build import mypycify
paths, group = sys.argv[1:-4], sys.argv[-4]
target = sys.argv[-3]
tmp = sys.argv[-1]
sys.argv = [sys.argv[0], "build_ext", "--inplace", "--build-temp", tmp, "--build-lib", tmp]
setup(name="simulator-hot", packages=[], py_modules=[],
      ext_modules=mypycify(paths, group_name=group, target_dir=target, opt_level="3"))
"""


def clean():
    """Remove every compiled module and the manifest: the package is pure Python again."""
    removed = 0
    for path in compiled_files():
        path.unlink()
        removed += 1
    if MANIFEST.exists():
        MANIFEST.unlink()
    return removed


def c_compiler() -> list[str]:
    """The C compiler setuptools will call, as argv words: $CC, else the one Python was built
    with."""
    return (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()


def build_problem() -> str | None:
    """Why this machine cannot build the compiled modules (no mypy, no C compiler, no Python
    headers), or None when it can."""
    try:
        import mypyc  # noqa: F401
    except ImportError:
        return "mypy is not installed (pip install -r requirements-compile.txt)"
    compiler = c_compiler()
    if not compiler or shutil.which(compiler[0]) is None:
        return f"no C compiler ({compiler[0] if compiler else 'CC is empty'})"
    if not (pathlib.Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "no Python headers (Python.h)"
    return None

# setuptools' own lines that start each phase after mypyc's translation (which prints nothing), in
# order: what a progress line can say without parsing the compiler's output
PHASES = (("running build_ext", "compiling the C code (the longest step)"),
          (" -shared ", "linking the extension modules"))
HEARTBEAT = 20.0  # seconds between "still ..." lines during one long phase


def _run_with_progress(cmd, *, cwd, env, say):
    """Run the build, telling `say` each phase and, every HEARTBEAT seconds, that it goes on:
    the first start of `make run` compiles for a minute or more, never silently."""
    started = time.monotonic()
    # The phase being run, shared with the heartbeat thread: [its name], and the next to spot.
    current = [f"translating {len(HOT_MODULES)} modules to C with mypyc"]
    upcoming = list(PHASES)
    say(f"{current[0]} ...")
    done = threading.Event()

    def heartbeat():
        while not done.wait(HEARTBEAT):
            say(f"still {current[0]} ({time.monotonic() - started:.0f} s so far)")

    threading.Thread(target=heartbeat, daemon=True).start()
    lines = []
    with subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as proc:
        assert proc.stdout is not None  # stdout=PIPE
        for line in proc.stdout:
            lines.append(line)
            if upcoming and upcoming[0][0] in line:
                current[0] = upcoming.pop(0)[1]
                say(f"{current[0]} ({time.monotonic() - started:.0f} s so far) ...")
        returncode = proc.wait()
    done.set()
    return returncode, "".join(lines)


# mypyc #includes its runtime (CPyList_GetItem, CPyTagged_* ...) into the one C file of the
# group, but as global functions of a -fPIC shared object: without this flag the compiler must
# assume another library may interpose them, so it neither inlines them into the modules' code
# nor calls them directly (each call went through the PLT).  CPython itself is built with it.
# -falign-functions=64: each function starts on a cache line, so where its hot loops fall
# against 32- and 64-byte boundaries no longer shifts with edits to unrelated code in the group
# (an edit to taskheap.py alone made EventQueue._sift_down and run_actions 7 % slower on 3.3's
# chatroom; aligned, the two builds read the same).  Code generation only: the same C
# semantics, so the same results (the goldens check it).
SPEED_FLAGS = ("-fno-semantic-interposition", "-falign-functions=64")


def _speed_flags() -> list[str]:
    """SPEED_FLAGS that this machine's C compiler accepts (an older or other one may not)."""
    compiler = c_compiler()
    accepted = []
    with tempfile.TemporaryDirectory(prefix="simulator-flags-") as tmp:
        probe = pathlib.Path(tmp) / "probe.c"
        probe.write_text("int probe(void) { return 0; }\n")
        for flag in SPEED_FLAGS:
            proc = subprocess.run([*compiler, flag, "-Werror", "-fPIC", "-c", str(probe), "-o",
                                   str(pathlib.Path(tmp) / "probe.o")], capture_output=True)
            if proc.returncode == 0:
                accepted.append(flag)
    return accepted


# The profile-guided build's training run (gcc only, see build()): every workload at its
# default size on every profile, and the chatroom and the yielders at the speed bench's shapes
# (smaller), so that the branches and calls the compiler lays out for are the simulator's own.
# Which code is hot does not depend on a workload's figures, and the C semantics do not
# change, so the results are the same as without it (the goldens and tests/simulator check).
TRAINING = """
import sys
sys.path.insert(0, sys.argv[1])
import simulator
from simulator.errors import SimulatorError
assert simulator.COMPILED, "the training run must run the instrumented build"
catalog = simulator.catalog()
for kernel in catalog["kernels"]:
    for workload in catalog["workloads"]:
        try:
            simulator.run({"workload": workload, "kernel": kernel, "cpus": 4,
                           "max_events": 200000})
        except SimulatorError:
            pass  # a default size beyond the budget (the chatroom)
    simulator.run({"workload": "chatroom", "kernel": kernel, "cpus": 8,
                   "params": {"rooms": 10, "clients": 20, "messages": 100}})
    simulator.run({"workload": "yield-loop", "kernel": kernel, "cpus": 8,
                   "params": {"tasks": 1000, "duration_ms": 20, "warmup_ms": 0}})
"""


def pgo_problem() -> str | None:
    """Why the build cannot be profile-guided here (gcc's -fprofile-generate / -use, whose
    profile files need no merge step; clang's would), or None when it can: the compiler's
    predefined macros say which it is (clang defines __GNUC__ too)."""
    compiler = c_compiler()
    try:
        proc = subprocess.run([*compiler, "-dM", "-E", "-x", "c", os.devnull],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        proc = None
    if proc is None or proc.returncode != 0:
        return "the C compiler's preprocessor did not run"
    if "__clang__" in proc.stdout or "#define __GNUC__ " not in proc.stdout:
        return "the C compiler is not gcc"
    return None


def _compile(cmd, *, root, env, verbose, progress):
    if progress is None:
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=not verbose, text=True)
        return proc.returncode, "" if verbose else (proc.stdout + proc.stderr)
    return _run_with_progress(cmd, cwd=root, env=env, say=progress)


def _write_manifest(package_dir=PACKAGE_DIR):
    (package_dir / MANIFEST.name).write_text(
        "".join(f"{name} {digest}\n" for name, digest in sorted(source_hashes().items())))


def _forget_objects(tmp):
    """Delete the build's objects and modules (the profile data stays): setuptools would
    otherwise find them newer than the sources and compile nothing."""
    for path in pathlib.Path(tmp, "o").rglob("*"):
        if path.suffix == ".o" or path.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            path.unlink()


def profile_guided(compile_with, say, tmp) -> bool:
    """The profile-guided build (see build()); False when a step failed and nothing is built
    (the plain build is then the caller's)."""
    say("profile-guided build: the instrumented build first (of a copy)")
    copy = pathlib.Path(tmp) / "train"
    shutil.copytree(PACKAGE_DIR, copy / PACKAGE_DIR.name, ignore=shutil.ignore_patterns(
        "*.so", "*.pyd", "__pycache__", MANIFEST.name))
    root = PACKAGE_DIR.parent
    if (root / "mypy.ini").exists():  # the same options, so the same C
        shutil.copy(root / "mypy.ini", copy / "mypy.ini")
    if not compile_with(["-fprofile-generate", "-fprofile-update=single"], cwd=copy,
                        fallible=True):
        say("profile-guided build: the instrumented build failed, building without a profile")
        return False
    _write_manifest(copy / PACKAGE_DIR.name)  # the copy's modules match its sources
    say("profile-guided build: the training run")
    trained = subprocess.run([sys.executable, "-c", TRAINING, str(copy)], cwd=copy,
                             capture_output=True, text=True,
                             env=dict(os.environ, SCHEDBENCH_PURE_PYTHON=""))
    _forget_objects(tmp)
    if trained.returncode != 0:
        say("profile-guided build: the training run failed, building without it")
        return False
    say("profile-guided build: the build with the profile")
    # gcc refuses a profile whose code no longer matches (-Werror=coverage-mismatch)
    if not compile_with(["-fprofile-use", "-fprofile-correction", "-fprofile-partial-training",
                         "-Wno-missing-profile"],
                        fallible=True):
        say("profile-guided build: the profile was refused, building without it")
        return False
    return True


def build(verbose=False, progress=None, pgo=True):
    """Compile HOT_MODULES in place; returns the number of extension modules written.
    Exits with the reason when the machine cannot (build_problem()) or the compilation fails.
    progress, a function of one line, hears each phase as it starts and how long it has run.
    pgo: with gcc, a profile-guided build: an instrumented build of a copy of the package in
    the build directory (never in place, where `make run`'s worker would load it), the
    TRAINING run there, then the build in place with the profile (each object at the same
    path in both builds, which gcc requires); without gcc, or when a step of it fails, the
    plain build."""
    problem = build_problem()
    if problem is not None:
        raise SystemExit(f"simulator.build: {problem}")
    clean()
    root = PACKAGE_DIR.parent
    sources = [str(PACKAGE_DIR.relative_to(root) / f"{m.replace('.', '/')}.py")
               for m in HOT_MODULES]
    pgo = pgo and pgo_problem() is None
    say = progress if progress is not None else (lambda line: None)
    with tempfile.TemporaryDirectory(prefix="simulator-build-") as tmp:
        setup_py = pathlib.Path(tmp) / "setup_hot.py"
        setup_py.write_text(SETUP_PY)
        # no fused multiply-add: the jitter's float arithmetic must round as CPython's does
        flags = [os.environ.get("CFLAGS", ""), "-ffp-contract=off", *_speed_flags()]
        # the same relative sources and output directories from either root, so the objects
        # (and their profile files) have the same paths in both builds
        cmd = [sys.executable, str(setup_py), *MYPY_FLAGS, *sources, GROUP,
               str(pathlib.Path(tmp) / "c"), "--", str(pathlib.Path(tmp) / "o")]

        def compile_with(extra, cwd=root, fallible=False):
            """Compile with the flags plus ``extra``; False if that failed and ``fallible``."""
            env = dict(os.environ, MYPY_FORCE_COLOR="0", CFLAGS=" ".join([*flags, *extra]).strip())
            returncode, out = _compile(cmd, root=cwd, env=env, verbose=verbose,
                                       progress=progress)
            if returncode != 0:
                clean()
                if fallible:
                    _forget_objects(tmp)
                    return False
                raise SystemExit(f"simulator.build: compilation failed\n{out[-4000:]}")
            return True

        if not (pgo and profile_guided(compile_with, say, tmp)):
            compile_with([])
    _write_manifest()
    return len(compiled_files())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clean", action="store_true", help="remove the compiled modules")
    parser.add_argument("--verbose", action="store_true", help="show the compiler's output")
    parser.add_argument("--if-possible", action="store_true",
                        help="where the machine cannot compile, or the build fails, say why and "
                             "exit 0 with the package pure Python")
    parser.add_argument("--no-pgo", action="store_true",
                        help="the plain build, not profile-guided (with gcc, the default "
                             "build compiles twice around a training run: ~2.5x as long)")
    parser.add_argument("--progress", action="store_true",
                        help="print a line as each phase starts and every 20 s during one")
    args = parser.parse_args(argv)
    if args.clean:
        print(f"removed {clean()} compiled modules; the simulator is pure Python")
        return
    try:
        started = time.monotonic()
        count = build(verbose=args.verbose, progress=_say if args.progress else None,
                      pgo=not args.no_pgo)
    except SystemExit as failed:  # build() never leaves a partial build behind
        if not args.if_possible:
            raise
        problem = str(failed).splitlines()[0].removeprefix("simulator.build: ")
        print(f"simulator.build: not compiled ({problem}); the simulator runs as pure Python, "
              "with identical results")
        return
    print(f"simulator.build: compiled {count} extension modules in {PACKAGE_DIR} "
          f"in {time.monotonic() - started:.0f} s ({', '.join(HOT_MODULES)}); "
          "`python -m simulator.build --clean` removes them", flush=True)


def _say(line):
    print(f"simulator.build: {line}", flush=True)


if __name__ == "__main__":
    main()

"""Optional compiled build of the simulator's hot modules with mypyc.

    python -m simulator.build               compile them in place (needs mypy and a C compiler)
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


def build_problem() -> str | None:
    """Why this machine cannot build the compiled modules (no mypy, no C compiler, no Python
    headers), or None when it can."""
    try:
        import mypyc  # noqa: F401
    except ImportError:
        return "mypy is not installed (pip install -r requirements-compile.txt)"
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
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
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
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


def build(verbose=False, progress=None):
    """Compile HOT_MODULES in place; returns the number of extension modules written.
    Exits with the reason when the machine cannot (build_problem()) or the compilation fails.
    progress, a function of one line, hears each phase as it starts and how long it has run."""
    problem = build_problem()
    if problem is not None:
        raise SystemExit(f"simulator.build: {problem}")
    clean()
    root = PACKAGE_DIR.parent
    sources = [str(PACKAGE_DIR.relative_to(root) / f"{m.replace('.', '/')}.py")
               for m in HOT_MODULES]
    with tempfile.TemporaryDirectory(prefix="simulator-build-") as tmp:
        setup_py = pathlib.Path(tmp) / "setup_hot.py"
        setup_py.write_text(SETUP_PY)
        # no fused multiply-add: the jitter's float arithmetic must round as CPython's does
        cflags = " ".join([os.environ.get("CFLAGS", ""), "-ffp-contract=off",
                           *_speed_flags()]).strip()
        env = dict(os.environ, MYPY_FORCE_COLOR="0", CFLAGS=cflags)
        cmd = [sys.executable, str(setup_py), *MYPY_FLAGS, *sources, GROUP,
               str(pathlib.Path(tmp) / "c"), "--", str(pathlib.Path(tmp) / "o")]
        if progress is None:
            proc = subprocess.run(cmd, cwd=root, env=env, capture_output=not verbose, text=True)
            returncode, out = proc.returncode, "" if verbose else (proc.stdout + proc.stderr)
        else:
            returncode, out = _run_with_progress(cmd, cwd=root, env=env, say=progress)
        if returncode != 0:
            clean()
            raise SystemExit(f"simulator.build: compilation failed\n{out[-4000:]}")
    MANIFEST.write_text("".join(f"{name} {digest}\n"
                                for name, digest in sorted(source_hashes().items())))
    return len(compiled_files())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clean", action="store_true", help="remove the compiled modules")
    parser.add_argument("--verbose", action="store_true", help="show the compiler's output")
    parser.add_argument("--if-possible", action="store_true",
                        help="where the machine cannot compile, or the build fails, say why and "
                             "exit 0 with the package pure Python")
    parser.add_argument("--progress", action="store_true",
                        help="print a line as each phase starts and every 20 s during one")
    args = parser.parse_args(argv)
    if args.clean:
        print(f"removed {clean()} compiled modules; the simulator is pure Python")
        return
    try:
        started = time.monotonic()
        count = build(verbose=args.verbose, progress=_say if args.progress else None)
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

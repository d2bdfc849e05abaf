"""Optional compiled build of schedtrace's hot modules with mypyc (trace parsing several times
faster; the portal's trace ingest and the simulator's replay both use them).

    python -m schedtrace.build               compile them in place (needs mypy and a C compiler)
    python -m schedtrace.build --if-possible the same where this machine can, else say why and
                                             leave the package pure Python (what `make` does)
    python -m schedtrace.build --clean       remove the compiled modules again

Without them the package runs as pure Python with identical results (tests/schedtrace/
test_compiled.py compares both). The recipe is the simulator's (simulator/build.py).
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time

from ._compiled import GROUP, HOT_MODULES, MANIFEST, PACKAGE_DIR, compiled_files, source_hashes

# the checks of `make lint` (mypy.ini), also given here so the package alone builds the same way
MYPY_FLAGS = ["--check-untyped-defs", "--warn-unreachable", "--strict-equality",
              "--follow-imports=silent"]

SETUP_PY = """
import sys
from setuptools import setup
from mypyc.build import mypycify
paths, group, target, tmp = sys.argv[1:-4], sys.argv[-4], sys.argv[-3], sys.argv[-1]
sys.argv = [sys.argv[0], "build_ext", "--inplace", "--build-temp", tmp, "--build-lib", tmp]
setup(name="schedtrace-hot", packages=[], py_modules=[],
      ext_modules=mypycify(paths, group_name=group, target_dir=target, opt_level="3"))
"""


def clean() -> int:
    """Remove every compiled module and the manifest: the package is pure Python again."""
    removed = 0
    for path in compiled_files():
        path.unlink()
        removed += 1
    MANIFEST.unlink(missing_ok=True)
    return removed


def build_problem() -> str | None:
    """Why this machine cannot build (no mypy, no C compiler, no Python headers), or None."""
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


def build(verbose: bool = False) -> int:
    """Compile HOT_MODULES in place; the number of extension modules written. Exits with the
    reason when the machine cannot or the compilation fails (leaving no partial build)."""
    problem = build_problem()
    if problem is not None:
        raise SystemExit(f"schedtrace.build: {problem}")
    clean()
    root = PACKAGE_DIR.parent
    sources = [str(PACKAGE_DIR.relative_to(root) / f"{name}.py") for name in HOT_MODULES]
    with tempfile.TemporaryDirectory(prefix="schedtrace-build-") as tmp:
        setup_py = pathlib.Path(tmp) / "setup_hot.py"
        setup_py.write_text(SETUP_PY)
        cmd = [sys.executable, str(setup_py), *MYPY_FLAGS, *sources, GROUP,
               str(pathlib.Path(tmp) / "c"), "--", str(pathlib.Path(tmp) / "o")]
        proc = subprocess.run(cmd, cwd=root, capture_output=not verbose, text=True)
        if proc.returncode != 0:
            clean()
            out = "" if verbose else proc.stdout + proc.stderr
            raise SystemExit(f"schedtrace.build: compilation failed\n{out[-4000:]}")
    MANIFEST.write_text("".join(f"{name} {digest}\n"
                                for name, digest in sorted(source_hashes().items())))
    return len(compiled_files())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clean", action="store_true", help="remove the compiled modules")
    parser.add_argument("--verbose", action="store_true", help="show the compiler's output")
    parser.add_argument("--if-possible", action="store_true",
                        help="where the machine cannot compile, or the build fails, say why and "
                             "exit 0 with the package pure Python")
    args = parser.parse_args(argv)
    if args.clean:
        print(f"removed {clean()} compiled modules; schedtrace is pure Python")
        return
    started = time.monotonic()
    print(f"schedtrace.build: compiling {len(HOT_MODULES)} modules with mypyc ...", flush=True)
    try:
        count = build(verbose=args.verbose)
    except SystemExit as failed:
        if not args.if_possible:
            raise
        problem = str(failed).splitlines()[0].removeprefix("schedtrace.build: ")
        print(f"schedtrace.build: not compiled ({problem}); trace parsing runs as pure Python, "
              "with identical results")
        return
    print(f"schedtrace.build: compiled {count} extension modules in {PACKAGE_DIR} in "
          f"{time.monotonic() - started:.0f} s; `python -m schedtrace.build --clean` removes "
          "them", flush=True)


if __name__ == "__main__":
    main()

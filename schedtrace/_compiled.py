"""Which build of schedtrace's hot modules runs: the mypyc-compiled one (schedtrace/build.py) or
the sources. The same rules as the simulator's (simulator/_compiled.py): an extension module
beside a .py file wins the import, so ``select()`` (called by the package's __init__ before any
hot module is imported) routes them to their sources when SCHEDBENCH_PURE_PYTHON=1 is set or a
source no longer matches the hash the build recorded; an edit never runs old code.
"""

import hashlib
import importlib.machinery
import importlib.util
import os
import pathlib
import sys

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent
# what an event passes through, in dependency order (what the build compiles); errors.py stays
# Python: its exceptions are subclassed and raised by code outside the package
HOT_MODULES = ("event", "fields", "lines", "ftrace", "perf", "reader", "stats", "runs")
GROUP = "schedtrace._hot"  # the compiled modules' shared runtime: schedtrace/_hot__mypyc*.so
MANIFEST = PACKAGE_DIR / "_compiled.manifest"


def _source(name):
    return PACKAGE_DIR / f"{name}.py"


def source_hashes():
    return {name: hashlib.sha256(_source(name).read_bytes()).hexdigest() for name in HOT_MODULES}


def compiled_files():
    """Every extension module the build wrote into the package."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return sorted(p for p in PACKAGE_DIR.glob("*") if p.name.endswith(suffixes))


def _recorded_hashes():
    try:
        lines = MANIFEST.read_text().splitlines()
    except OSError:
        return None
    return dict(line.split(" ", 1) for line in lines if " " in line)


class _SourceFinder:
    """A meta-path finder that loads the hot modules from their .py files."""

    def find_spec(self, fullname, path=None, target=None):
        name = fullname.removeprefix("schedtrace.")
        if fullname == name or name not in HOT_MODULES:
            return None
        source = str(_source(name))
        loader = importlib.machinery.SourceFileLoader(fullname, source)
        return importlib.util.spec_from_file_location(fullname, source, loader=loader)


STATE = "pure Python (no compiled build)"  # what select() found, for bench/trace_ingest.py


def select():
    """True when the compiled hot modules will be used, False for the sources; STATE says why."""
    global STATE
    if not compiled_files():
        return False
    if os.environ.get("SCHEDBENCH_PURE_PYTHON", "") not in ("", "0"):
        STATE = "pure Python (SCHEDBENCH_PURE_PYTHON is set)"
    elif _recorded_hashes() != source_hashes():
        STATE = ("pure Python (the compiled build is older than the sources: "
                 "rebuild with `python -m schedtrace.build`)")
    else:
        STATE = "compiled with mypyc (python -m schedtrace.build)"
        return True
    if not any(isinstance(f, _SourceFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _SourceFinder())
    return False

"""Which build of the hot modules runs: the mypyc-compiled one (simulator/build.py) or the sources.

Python imports an extension module in preference to the .py beside it.  That is what makes the
compiled build a drop-in accelerator, but it would also run an old build after its source was
edited.  ``select()`` (called by the package's __init__ before anything imports a hot module)
therefore routes the hot modules to their sources when the user asks for pure Python
(SCHEDBENCH_PURE_PYTHON=1) or when a source no longer matches the hash the build recorded.
"""

import hashlib
import importlib.machinery
import importlib.util
import os
import pathlib
import sys

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent
# the modules an event passes through, in dependency order (what the build compiles)
HOT_MODULES = ("events", "eventq", "program", "policies.base", "policies.taskheap",
               "policies.cfs", "policies.cfs_buddies", "policies.eevdf", "policies.globalq",
               "policies.o1", "policies.rsdl", "domains", "pelt", "balance", "balance66",
               "interp", "engine")
GROUP = "simulator._hot"  # the compiled modules' shared runtime: simulator/_hot__mypyc*.so
MANIFEST = PACKAGE_DIR / "_compiled.manifest"


def _source(name):
    return PACKAGE_DIR / f"{name.replace('.', '/')}.py"


def source_hashes():
    return {name: hashlib.sha256(_source(name).read_bytes()).hexdigest() for name in HOT_MODULES}


def compiled_files():
    """Every extension module the build wrote into the package."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return sorted(p for p in PACKAGE_DIR.rglob("*") if p.name.endswith(suffixes))


def _recorded_hashes():
    try:
        lines = MANIFEST.read_text().splitlines()
    except OSError:
        return None
    return dict(line.split(" ", 1) for line in lines if " " in line)


class _SourceFinder:
    """A meta-path finder that loads the hot modules from their .py files."""

    def find_spec(self, fullname, path=None, target=None):
        name = fullname.removeprefix("simulator.")
        if fullname == name or name not in HOT_MODULES:
            return None
        source = str(_source(name))
        loader = importlib.machinery.SourceFileLoader(fullname, source)
        return importlib.util.spec_from_file_location(fullname, source, loader=loader)


# what select() found, for reports such as bench/simulator_speed.py
STATE = "pure Python (no compiled build)"


def select():
    """Returns True when the compiled hot modules will be used, False for the sources.

    A stale build is skipped silently (the CLI's stderr is part of its contract); STATE says
    which build runs and why."""
    global STATE
    if not compiled_files():
        return False
    if os.environ.get("SCHEDBENCH_PURE_PYTHON", "") not in ("", "0"):
        STATE = "pure Python (SCHEDBENCH_PURE_PYTHON is set)"
    elif _recorded_hashes() != source_hashes():
        STATE = ("pure Python (the compiled build is older than the sources: "
                 "rebuild with `python -m simulator.build`)")
    else:
        STATE = "compiled with mypyc (python -m simulator.build)"
        return True
    if not any(isinstance(f, _SourceFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _SourceFinder())
    return False

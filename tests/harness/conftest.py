"""Shared fixtures for the harness tests.

The harness is a standalone script, not a package, so it is loaded by path; it must stay
importable without side effects (no work at import time).
"""

import importlib.util
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "harness" / "schedbench.py"
FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"


def load_harness():
    spec = importlib.util.spec_from_file_location("schedbench_harness", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("schedbench_harness", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def sb():
    return load_harness()


@pytest.fixture()
def oldbox():
    return str(FIXTURES / "oldbox")


@pytest.fixture()
def modernvm():
    return str(FIXTURES / "modernvm")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    # Never touch the developer's real spool, portal or proxy while testing.
    for name in ("SCHEDBENCH_URL", "SCHEDBENCH_TOKEN", "http_proxy", "HTTP_PROXY",
                 "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SCHEDBENCH_SPOOL", str(tmp_path / "spool"))

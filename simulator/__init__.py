"""schedbench's scheduler simulator: a discrete-event model of how Linux schedulers (2.4 goodness,
O(1), CFS, RSDL, EEVDF, SCHED_DEADLINE) run the benchmarks of the field notes.

Public API (used by the portal): ``__version__``, ``catalog()``, ``validate(spec)``,
``run(spec, trace=None, progress=None)``, ``render_text(result)`` and the exception types.
Pure standard library; no Django import anywhere in this package.
"""

import copy
import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__version__ = "0.2.0"  # results changed with issue 12: cached points of 0.1.0 are not reused

from . import _compiled  # noqa: E402

# True when the mypyc-compiled hot modules run (python -m simulator.build), False for the sources
COMPILED = _compiled.select()

from .api import run, validate  # noqa: E402
from .errors import (  # noqa: E402
    CpuBudgetExceeded,
    EventBudgetExceeded,
    InvalidValueError,
    SimulatorError,
    SpecError,
    UnknownNameError,
)
from .profiles import catalog_kernels  # noqa: E402
from .render import render_text  # noqa: E402
from .workloads import catalog_workloads  # noqa: E402


def catalog():
    """Workloads (params, metrics) and kernel profiles (tunables): `list --format json`.

    A fresh deep copy each call, so a caller may modify it freely."""
    return copy.deepcopy({"workloads": catalog_workloads(), "kernels": catalog_kernels()})


def _read_only(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({key: _read_only(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(_read_only(item) for item in value)
    return value


@functools.cache
def catalog_view() -> Mapping[str, Any]:
    """The same catalog as a read-only view (mappings and tuples), built once per process: it
    is fixed for a given build, and a lookup should not pay for a deep copy (~1 ms)."""
    view: Mapping[str, Any] = _read_only(catalog())
    return view


__all__ = ["__version__", "COMPILED", "catalog", "catalog_view", "validate", "run", "render_text",
           "SimulatorError", "SpecError", "UnknownNameError", "InvalidValueError",
           "EventBudgetExceeded", "CpuBudgetExceeded"]

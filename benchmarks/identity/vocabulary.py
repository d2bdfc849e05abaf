"""One vocabulary for the dimensions runs are compared along (see docs/formats.md, Vocabulary).

Every way a run comes in (uploads, the runs API, bulk, mail import, simulations) passes its
params and tunables through `canonical_params` / `canonical_tunables`, so a sysctl pasted as
`echo 0 > /proc/sys/kernel/sched_compat_yield`, a harness reading the same file and a simulator
profile saying `false` all store `sched_compat_yield: 0`, and one chart axis has one category
per value. Names here are the ones the sysctl, the parsers and the harness use; the aliases
are what other tools (and older versions of ours) called the same thing.
"""

import re
from collections.abc import Mapping

# Meaning -> name, for every benchmark.
PARAM_ALIASES = {
    "loop": "loops",
    "loop_size": "loops",
    "nr_loops": "loops",
    "iters": "iterations",
    "nr_iterations": "iterations",
    "burn": "burn_us",
    "burn_time_us": "burn_us",
    "nr_tasks": "tasks",
    "nr_clients": "clients",
    "nr_threads": "threads",
}

# Names whose meaning depends on the benchmark: the simulator's runqueue-cost workload calls
# its runqueue length `tasks`, the schedule()-cost tables people paste say "runqueue length".
BENCHMARK_PARAM_ALIASES = {
    "runqueue-cost": {
        "tasks": "runqueue_length",
        "nr_running": "runqueue_length",
        "runqueue": "runqueue_length",
        "rq_length": "runqueue_length",
        "rq_len": "runqueue_length",
    },
}

# Prefixes people write before a sysctl's own name.
TUNABLE_PREFIXES = ("/proc/sys/kernel/", "proc/sys/kernel/", "kernel.", "kernel/")

TRUE_WORDS = {"true", "yes", "on", "y"}
FALSE_WORDS = {"false", "no", "off", "n"}
NUMBER_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def canonical_value(value):
    """A value as the sysctl takes it: booleans are 0/1, numbers are numbers (integers when
    whole), words that mean true/false are 0/1; any other text is kept, trimmed."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 2**63 else value
    if isinstance(value, str):
        text = value.strip()
        lowered = text.lower()
        if lowered in TRUE_WORDS:
            return 1
        if lowered in FALSE_WORDS:
            return 0
        if NUMBER_RE.match(text):
            number = float(text)
            if "." not in text and "e" not in lowered:
                return int(text)
            return canonical_value(number)
        return text
    return value


def canonical_param_name(name: str, benchmark: str = "") -> str:
    name = str(name).strip()
    specific = BENCHMARK_PARAM_ALIASES.get(benchmark, {})
    return specific.get(name) or PARAM_ALIASES.get(name) or name


def canonical_tunable_name(name: str) -> str:
    name = str(name).strip()
    for prefix in TUNABLE_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _renamed(mapping: Mapping | None, rename) -> dict:
    """Canonical names and values; when an alias and its name are both given, the name wins."""
    result: dict = {}
    for name, value in (mapping or {}).items():
        canonical = rename(name)
        if canonical in result and canonical != name:
            continue
        result[canonical] = canonical_value(value)
    return result


def canonical_params(params: Mapping | None, *, benchmark: str = "") -> dict:
    """`benchmark` is the benchmark's slug (`runqueue-cost`)."""
    return _renamed(params, lambda name: canonical_param_name(name, benchmark))


def canonical_tunables(tunables: Mapping | None) -> dict:
    return _renamed(tunables, canonical_tunable_name)

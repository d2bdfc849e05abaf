"""What a metric's name says about its unit and direction, and which names are params."""

from __future__ import annotations

# Checked in order: the longest suffix first so "_per_s" wins over "_s".
UNIT_SUFFIXES: list[tuple[str, str, bool]] = [
    ("_per_s", "1/s", True),
    ("_pct", "%", False),
    ("_ns", "ns", False),
    ("_us", "us", False),
    ("_ms", "ms", False),
    ("_s", "s", False),
]

# Metrics whose names carry no unit suffix: (unit, higher_is_better).
KNOWN_METRICS: dict[str, tuple[str, bool]] = {
    "idx": ("", True),
    "normalized": ("", True),
    "throughput": ("1/s", True),
    "cpu_utilization": ("", True),
    "context_switches": ("", False),
    "deadline_misses": ("", False),
    "preemptions": ("", False),
    "migrations": ("", False),
    "jobs": ("", True),
    "events": ("", True),
    "runnable": ("tasks", False),
}

# Setup knobs that happen to end in a unit suffix ("burn_us") but are inputs, not results.
KNOWN_PARAMS = {
    "loops", "iterations", "cpus", "burn_us", "clients", "threads", "tasks", "groups", "fds",
    "runqueue_length", "runtime_s", "messages", "message_bytes", "ops", "rooms", "seed",
    "stages", "input_mb", "blocks", "pairs",
}


def metric_info(name: str) -> tuple[str, bool]:
    """(unit, higher_is_better) implied by a name; unknown names: unitless, lower-better."""
    key = name.lower()
    if key in KNOWN_METRICS:
        return KNOWN_METRICS[key]
    for suffix, unit, higher in UNIT_SUFFIXES:
        if key.endswith(suffix) and len(key) > len(suffix):
            return unit, higher
    return "", False


def looks_like_metric(name: str) -> bool:
    """True for "time_ms", "ops_per_s", "idx"; False for params such as "loops" or "burn_us"."""
    key = name.lower()
    if key in KNOWN_PARAMS:
        return False
    if key in KNOWN_METRICS:
        return True
    return any(key.endswith(suffix) and len(key) > len(suffix) for suffix, _, _ in UNIT_SUFFIXES)

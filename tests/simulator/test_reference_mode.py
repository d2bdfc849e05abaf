"""The event loop's inlined fast paths against the plain functions they copy.

Every workload x every kernel family x two topologies, at small sizes, run once through the
fast path and once in reference mode: counters, metrics, groups and vmstat must be identical.
"""

import pytest

import simulator
from simulator.policies import REGISTRY
from simulator.profiles import PROFILES
from simulator.workloads import WORKLOADS

SMALL = {
    "threadtest": {"iterations": 6, "loops": 30_000, "yield_in_spin": True},
    "threadtest-burn": {"iterations": 6, "burn_us": 200},
    "yield-loop": {"tasks": 3, "duration_ms": 15, "warmup_ms": 3},
    "runqueue-cost": {"runqueue_length": 4, "duration_ms": 30},
    "chatroom": {"rooms": 2, "clients": 4, "messages": 20},
    "pipeline": {"stages": 3, "blocks": 20},
    "wake-pingpong": {"pairs": 3, "roundtrips": 40},
    "overcommit": {"duration_ms": 20, "vcpus": 3, "hogs": 2},
    "periodic": {"duration_ms": 100},
    "rtapp": {"duration_ms": 30},
}
TOPOLOGIES = ["1x2x1", "2x2x2"]
KERNELS = sorted(PROFILES)


def test_every_family_is_covered():
    families = {PROFILES[k]["family"] for k in KERNELS} | {"edf"}  # periodic on 6.6 is EDF
    assert families == set(REGISTRY)
    assert set(SMALL) == set(WORKLOADS)


def _comparable(result):
    return {k: v for k, v in result.items() if k != "wall_seconds"}


@pytest.mark.parametrize("topology", TOPOLOGIES)
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_fast_path_equals_reference_mode(workload, kernel, topology):
    spec = {"workload": workload, "kernel": kernel, "topology": topology,
            "params": SMALL[workload], "seed": 3}
    fast = simulator.run(spec)
    plain = simulator.run(spec, reference=True)
    assert _comparable(fast) == _comparable(plain)
    assert fast["counters"]["events"] > 0

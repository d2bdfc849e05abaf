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


@pytest.mark.skipif(simulator._compiled.STATE.startswith("compiled"),
                    reason="patches module attributes, which the compiled build fixes at build")
def test_dropping_superseded_heap_entries_changes_no_result(monkeypatch):
    """Engine.drop_stale() must only remove events the loop would skip: the same run with the
    heap never compacted gives the identical result, and the compacted run did compact."""
    from simulator import engine

    spec = {"workload": "chatroom", "kernel": "rsdl-0.31", "cpus": 8, "seed": 3,
            "params": {"rooms": 10, "clients": 20, "messages": 150}}
    drops = []
    plain_drop = engine.Engine.drop_stale

    def counted(eng):
        before = len(eng.heap)
        plain_drop(eng)
        drops.append(before - len(eng.heap))

    monkeypatch.setattr(engine.Engine, "drop_stale", counted)
    compacted = simulator.run(spec)
    assert len(drops) > 10 and sum(drops) > 100
    monkeypatch.setattr(engine, "HEAP_SLACK", 10**9)
    drops.clear()
    never = simulator.run(spec)
    assert drops == []
    assert _comparable(compacted) == _comparable(never)

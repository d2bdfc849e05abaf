"""Golden outputs: the exact JSON of a fixed set of runs, so a result-changing refactor fails.

Regenerate only deliberately, when a modelled mechanism changes (and say so in the commit):
    .venv/bin/python -m tests.simulator.golden --regenerate
"""

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
GOLDEN_DIR = pathlib.Path(__file__).resolve().parent / "golden"

OVERCOMMIT_66 = {"vcpus": 8, "hog_group_sizes": "6,6", "kick": "ipi", "duration_ms": 40}
SPECS = {
    "threadtest-2.6.22": {"workload": "threadtest", "kernel": "2.6.22",
                          "params": {"iterations": 8, "loops": 200_000, "yield_in_spin": True}},
    "threadtest-2.6.23": {"workload": "threadtest", "kernel": "2.6.23",
                          "params": {"iterations": 8, "loops": 200_000, "yield_in_spin": True}},
    "threadtest-2.6.24-compat": {"workload": "threadtest", "kernel": "2.6.24",
                                 "params": {"iterations": 8, "loops": 10_000,
                                            "yield_in_spin": True},
                                 "tunables": {"sched_compat_yield": 1}},
    "threadtest-2.6.25-ht": {"workload": "threadtest", "kernel": "2.6.25", "topology": "1x1x2",
                             "params": {"iterations": 8, "loops": 10_000}},
    "burn-2.6.24": {"workload": "threadtest-burn", "kernel": "2.6.24",
                    "params": {"iterations": 10, "burn_us": 300}},
    "burn-6.6-eevdf": {"workload": "threadtest-burn", "kernel": "6.6-eevdf",
                       "params": {"iterations": 10, "burn_us": 300}},
    "chatroom-rsdl-0.31": {"workload": "chatroom", "kernel": "rsdl-0.31", "cpus": 2,
                           "params": {"rooms": 1, "clients": 6, "messages": 40}},
    "chatroom-rsdl-0.33": {"workload": "chatroom", "kernel": "rsdl-0.33", "cpus": 2,
                           "params": {"rooms": 1, "clients": 6, "messages": 40}},
    "chatroom-3.3-smp": {"workload": "chatroom", "kernel": "3.3", "topology": "2x2x2",
                         "params": {"rooms": 2, "clients": 5, "messages": 30}},
    # HotSpot's Java monitor (jvm=hotspot-monitor): spins, cxq / EntryList parks, timed parks
    "chatroom-hotspot-monitor-rsdl-0.31": {"workload": "chatroom", "kernel": "rsdl-0.31",
                                           "cpus": 2,
                                           "params": {"rooms": 2, "clients": 6, "messages": 20,
                                                      "lock": "yield", "jvm": "hotspot-monitor",
                                                      "broadcast": 1, "sock_msgs": 2,
                                                      "write_locked": 1}},
    "pipeline-2.4": {"workload": "pipeline", "kernel": "2.4", "cpus": 2,
                     "params": {"stages": 3, "blocks": 30}},
    "pingpong-2.6.24": {"workload": "wake-pingpong", "kernel": "2.6.24", "cpus": 4,
                        "params": {"pairs": 3, "roundtrips": 100}},
    "overcommit-3.3": {"workload": "overcommit", "kernel": "3.3", "cpus": 4,
                       "params": {"duration_ms": 30}},
    # issue 24's VM on 6.6 with CONFIG_FAIR_GROUP_SCHED's hierarchy (the profile's default)
    # and without it (the flattening, as before the hierarchy was modelled)
    "overcommit-6.6-eevdf": {"workload": "overcommit", "kernel": "6.6-eevdf",
                             "topology": "1x4x2", "params": OVERCOMMIT_66},
    "overcommit-6.6-eevdf-flat": {"workload": "overcommit", "kernel": "6.6-eevdf",
                                  "topology": "1x4x2", "params": OVERCOMMIT_66,
                                  "tunables": {"group_hierarchy": False}},
    # the flattening (group_hierarchy off): the overcommit golden from before the hierarchy
    "overcommit-3.3-flat": {"workload": "overcommit", "kernel": "3.3", "cpus": 4,
                            "params": {"duration_ms": 30},
                            "tunables": {"group_hierarchy": False}},
    # the hierarchy without 3.x's buddies (cfs_buddies off): overcommit-3.3 as it was before
    # the buddies were modelled
    "overcommit-3.3-nobuddies": {"workload": "overcommit", "kernel": "3.3", "cpus": 4,
                                 "params": {"duration_ms": 30},
                                 "tunables": {"cfs_buddies": False}},
    # the overcommit params of issue 24's ninth round: one request in flight, hogs that halt
    "overcommit-3.3-halting": {"workload": "overcommit", "kernel": "3.3", "cpus": 4,
                               "params": {"duration_ms": 30, "in_flight": 1, "hog_run_us": 1000,
                                          "hog_halt_us": 1000}},
    "yield-loop-2.6.22": {"workload": "yield-loop", "kernel": "2.6.22", "cpus": 2,
                          "params": {"tasks": 3, "duration_ms": 20, "warmup_ms": 5}},
    "runqueue-cost-2.4": {"workload": "runqueue-cost", "kernel": "2.4",
                          "params": {"duration_ms": 30}},
    "periodic-edf": {"workload": "periodic", "kernel": "6.6-eevdf", "cpus": 4,
                     "params": {"duration_ms": 200}},
    "periodic-o1": {"workload": "periodic", "kernel": "2.6.22", "cpus": 4,
                    "params": {"duration_ms": 200}},
    "rtapp-2.6.24": {"workload": "rtapp", "kernel": "2.6.24", "params": {"duration_ms": 50}},
}


def golden_result(spec):
    """The run's result without its only non-deterministic field (wall time)."""
    import simulator

    result = simulator.run(spec)
    result.pop("wall_seconds")
    return json.loads(json.dumps(result))


def path_for(name):
    return GOLDEN_DIR / f"{name}.json"


def regenerate():
    GOLDEN_DIR.mkdir(exist_ok=True)
    for stale in GOLDEN_DIR.glob("*.json"):
        if stale.stem not in SPECS:
            stale.unlink()
    for name, spec in SPECS.items():
        path_for(name).write_text(json.dumps(golden_result(spec), indent=1, sort_keys=True)
                                  + "\n")
        print(f"wrote {path_for(name).relative_to(ROOT)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit("usage: python -m tests.simulator.golden --regenerate")
    sys.path.insert(0, str(ROOT))
    regenerate()

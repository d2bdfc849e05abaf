"""Whatever a user sends, the simulator answers with a result or a SimulatorError."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simulator
from simulator import SimulatorError

CATALOG = simulator.catalog()
SMALL_INTS = st.one_of(st.integers(-3, 40), st.sampled_from(["7", "x", "", "1e3", True, 2.5]))


@st.composite
def specs(draw):
    workload = draw(st.sampled_from(sorted(CATALOG["workloads"]) + ["bogus"]))
    kernel = draw(st.sampled_from(sorted(CATALOG["kernels"])))
    params = {}
    if workload in CATALOG["workloads"]:
        for name, spec in CATALOG["workloads"][workload]["params"].items():
            if spec["type"] == "int" and draw(st.booleans()):
                params[name] = draw(SMALL_INTS)
    tunables = {}
    for name in draw(st.lists(st.sampled_from(
            sorted(CATALOG["kernels"][kernel]["tunables"]) + ["nope"]), max_size=3)):
        tunables[name] = draw(st.sampled_from([0, 1, 2, 250, "abc", -1]))
    spec = {"workload": workload, "kernel": kernel, "params": params, "tunables": tunables,
            "max_events": 20_000}
    if draw(st.booleans()):
        spec["topology"] = draw(st.sampled_from(["1x2x1", "2x2x2", "1x1x1", "0x1x1", "axb"]))
    else:
        spec["cpus"] = draw(st.sampled_from([1, 2, 3, 8, 0, -1, "4"]))
    return spec


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs())
def test_any_spec_gives_a_result_or_a_simulator_error(spec):
    try:
        result = simulator.run(spec)
    except SimulatorError as exc:
        assert str(exc)
        return
    json.dumps(result)  # the result is JSON-serialisable
    assert simulator.render_text(result)


def test_rtapp_fork_barrier_phases_and_errors():
    config = {"global": {"duration": 0.2},
              "tasks": {
                  "main": {"loop": 3, "phases": {
                      "p1": {"run": 300, "fork": "helper", "barrier": "b", "loop": 2},
                      "p2": {"sleep0": 200, "yield": "", "run1": 100}}},
                  "helper": {"instance": 0, "run": 500},
                  "other": {"loop": 6, "barrier": "b", "lock": "m", "run": 50, "unlock": "m"}}}
    result = simulator.run({"workload": "rtapp", "kernel": "2.6.24",
                            "params": {"config": json.dumps(config)}})
    assert result["counters"]["forks"] == 6
    for bad, needle in [({"tasks": {}}, "tasks"),
                        ({"tasks": {"a": {"run": 1, "fly": 2}}}, "fly"),
                        ({"tasks": {"a": {"run": 1, "fork": "zz"}}}, "zz"),
                        ({"tasks": {"a": {"run": 1, "loop": -1}}}, "duration")]:
        try:
            simulator.run({"workload": "rtapp", "kernel": "3.3",
                           "params": {"config": json.dumps(bad)}})
        except simulator.InvalidValueError as exc:
            assert exc.field == "params.config" and needle in str(exc)
        else:
            raise AssertionError(f"{bad} accepted")

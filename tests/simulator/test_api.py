"""The public library API the portal calls: catalog, validate, run, render_text, errors."""

import ast
import io
import pathlib
import re

import pytest

import simulator
from simulator import (
    EventBudgetExceeded,
    InvalidValueError,
    SimulatorError,
    SpecError,
    UnknownNameError,
)

CONTRACT_KEYS = {"simulator_version", "workload", "kernel", "params", "tunables", "topology",
                 "seed", "metrics", "counters", "groups", "vmstat", "wall_seconds"}
WORKLOADS = {"threadtest", "threadtest-burn", "yield-loop", "runqueue-cost", "chatroom",
             "pipeline", "wake-pingpong", "overcommit", "periodic", "rtapp"}
KERNELS = {"2.4", "2.6.22", "2.6.23", "2.6.24", "2.6.25", "rsdl-0.31", "rsdl-0.33", "3.3",
           "6.6-eevdf"}
TUNABLES_REQUIRED = {"sched_child_runs_first", "sched_compat_yield", "sched_latency_ns",
                     "sched_min_granularity_ns", "sched_wakeup_granularity_ns",
                     "sched_migration_cost_ns", "balance_fork", "balance_wake", "wake_affine", "HZ"}

SMALL = {"threadtest": {"iterations": 3, "loops": 100000},
         "threadtest-burn": {"iterations": 3, "burn_us": 1000},
         "yield-loop": {"duration_ms": 20, "warmup_ms": 5},
         "runqueue-cost": {"tasks": 4, "duration_ms": 50},
         "chatroom": {"rooms": 2, "clients": 4, "messages": 20},
         "pipeline": {"blocks": 10},
         "wake-pingpong": {"roundtrips": 50},
         "overcommit": {"duration_ms": 20},
         "periodic": {"duration_ms": 100},
         "rtapp": {"duration_ms": 50}}


def test_version_is_a_string():
    assert isinstance(simulator.__version__, str) and simulator.__version__


def test_catalog_lists_every_workload_and_kernel_with_specs():
    cat = simulator.catalog()
    assert set(cat["workloads"]) == WORKLOADS
    assert set(cat["kernels"]) == KERNELS
    for w in cat["workloads"].values():
        assert w["description"] and w["metrics"]
        for spec in w["params"].values():
            assert {"default", "type", "help"} <= set(spec)
        for spec in w["metrics"].values():
            assert set(spec) == {"unit", "higher_is_better"}
    for k in cat["kernels"].values():
        assert {"description", "family", "tunables"} <= set(k)
    assert set(cat["kernels"]["2.6.24"]["tunables"]) >= TUNABLES_REQUIRED
    assert "rr_interval" in cat["kernels"]["rsdl-0.31"]["tunables"]


def test_kernel_defaults_follow_the_mechanism_table():
    tun = {k: v["tunables"] for k, v in simulator.catalog()["kernels"].items()}
    assert tun["2.6.22"]["timeslice_ms"]["default"] == 100
    assert tun["2.6.23"]["sched_wakeup_granularity_ns"]["default"] == 1_000_000
    assert tun["2.6.24"]["sched_wakeup_granularity_ns"]["default"] == 10_000_000
    assert tun["2.6.24"]["sched_min_granularity_ns"]["default"] == 4_000_000
    assert tun["2.6.23"]["sched_migration_cost_ns"]["default"] == 0
    assert tun["2.6.24"]["sched_migration_cost_ns"]["default"] == 500_000
    assert tun["3.3"]["sched_latency_ns"]["default"] == 6_000_000
    assert tun["3.3"]["balance_wake"]["default"] is False
    assert tun["3.3"]["sched_child_runs_first"]["default"] == 0


def test_validate_fills_defaults():
    norm = simulator.validate({"workload": "threadtest", "kernel": "2.6.24"})
    assert norm["params"]["iterations"] == 500
    assert norm["tunables"]["sched_compat_yield"] == 0
    assert norm["cpus"] == 2 and norm["topology"] == "1x2x1"
    assert norm["seed"] == 1 and norm["repeat"] == 1 and norm["max_events"] > 0


def test_validate_coerces_cli_strings():
    norm = simulator.validate({"workload": "threadtest", "kernel": "2.6.24", "cpus": "4",
                               "params": {"loops": "2000", "yield_in_spin": "1"},
                               "tunables": {"sched_compat_yield": "true", "HZ": "1000"}})
    assert norm["params"]["loops"] == 2000 and norm["params"]["yield_in_spin"] is True
    assert norm["tunables"]["sched_compat_yield"] == 1 and norm["tunables"]["HZ"] == 1000
    assert norm["topology"] == "1x4x1"


@pytest.mark.parametrize("spec, field, listed", [
    ({"workload": "nope", "kernel": "2.6.24"}, "workload", "threadtest"),
    ({"workload": "threadtest", "kernel": "9.9"}, "kernel", "2.6.22"),
    ({"workload": "threadtest", "kernel": "2.6.24", "params": {"loopz": 1}}, "params.loopz",
     "loops"),
    ({"workload": "threadtest", "kernel": "2.6.24", "tunables": {"rr_interval": 1}},
     "tunables.rr_interval", "sched_compat_yield"),
    ({"workload": "threadtest", "kernel": "2.6.24", "colour": 1}, "colour", "workload"),
])
def test_unknown_names_list_the_valid_ones(spec, field, listed):
    with pytest.raises(UnknownNameError) as err:
        simulator.validate(spec)
    assert err.value.field == field
    assert listed in str(err.value)


@pytest.mark.parametrize("extra, field, shown", [
    ({"params": {"loops": -5}}, "params.loops", "-5"),
    ({"cpus": 0}, "cpus", "0"),
    ({"topology": "2by4"}, "topology", "2by4"),
    ({"topology": "0x2x1"}, "topology", "0x2x1"),
    ({"params": {"iterations": "many"}}, "params.iterations", "many"),
    ({"tunables": {"HZ": 0}}, "tunables.HZ", "0"),
    ({"repeat": 0}, "repeat", "0"),
    ({"cpus": 3, "topology": "1x2x1"}, "cpus", "3"),
])
def test_invalid_values_name_the_value(extra, field, shown):
    with pytest.raises(InvalidValueError) as err:
        simulator.validate({"workload": "threadtest", "kernel": "2.6.24", **extra})
    assert err.value.field == field
    assert shown in str(err.value)
    assert isinstance(err.value, SpecError) and isinstance(err.value, SimulatorError)


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_every_workload_runs_on_every_family(workload):
    for kernel in ("2.4", "2.6.22", "2.6.24", "rsdl-0.33", "6.6-eevdf"):
        result = simulator.run({"workload": workload, "kernel": kernel, "cpus": 2,
                                "params": SMALL[workload]})
        assert set(result) == CONTRACT_KEYS
        assert set(result["metrics"]) == set(simulator.catalog()["workloads"][workload]["metrics"])
        assert all(len(v) == 1 for v in result["metrics"].values())
        assert {"events", "context_switches", "migrations", "wakeups", "balance_attempts",
                "balance_failed"} <= set(result["counters"])
        assert simulator.render_text(result).strip()


def test_repeats_progress_and_determinism():
    calls = []
    spec = {"workload": "threadtest", "kernel": "2.6.24", "repeat": 3,
            "params": {"iterations": 5, "loops": 200000}}
    first = simulator.run(spec, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 3), (2, 3), (3, 3)]
    assert len(first["metrics"]["time_ms"]) == 3
    again = simulator.run(spec)
    assert again["metrics"] == first["metrics"]
    assert len(set(first["metrics"]["time_ms"])) > 1, "repeats use different seeds"


def test_topology_and_groups_and_vmstat():
    result = simulator.run({"workload": "overcommit", "kernel": "3.3", "topology": "2x2x2",
                            "params": {"duration_ms": 250}})
    assert result["topology"] == "2x2x2"
    assert {"vm", "hogs0", "hogs1"} <= set(result["groups"])
    assert set(result["groups"]["vm"]) == {"wait_sum_ms", "run_ms"}
    vm = result["vmstat"]
    assert {"r", "b", "cs", "us", "sy", "id"} <= set(vm["columns"])
    assert len(vm["rows"]) >= 2 and all(len(r) == len(vm["columns"]) for r in vm["rows"])


def test_event_budget_stops_the_run():
    with pytest.raises(EventBudgetExceeded, match="event budget"):
        simulator.run({"workload": "chatroom", "kernel": "2.6.24", "max_events": 5000,
                       "params": {"rooms": 2, "clients": 4, "messages": 500}})


def test_run_that_cannot_fit_the_budget_is_refused_up_front():
    with pytest.raises(InvalidValueError, match="event budget") as err:
        simulator.run({"workload": "chatroom", "kernel": "2.6.24", "max_events": 500,
                       "params": {"rooms": 2, "clients": 4, "messages": 500}})
    assert err.value.field == "max_events"


def test_trace_records_decisions_with_reasons():
    buf = io.StringIO()
    simulator.run({"workload": "threadtest", "kernel": "2.6.25",
                   "params": {"iterations": 3, "loops": 100000}}, trace=buf)
    text = buf.getvalue()
    assert "child runs first" in text
    assert re.search(r"refused: cache-hot \d+\.\d+ ms < 0\.500 ms", text)
    assert "pull " in text


def test_no_django_import_in_the_package():
    package = pathlib.Path(simulator.__file__).parent
    pattern = re.compile(r"^\s*(import|from)\s+django", re.MULTILINE)
    for path in package.glob("*.py"):
        assert not pattern.search(path.read_text()), path.name


def test_memory_follows_live_tasks_not_history():
    """Exited threads leave only their group totals behind (memory O(tasks), not O(events))."""
    from simulator.api import run_once
    from simulator.topology import parse_topology

    norm = simulator.validate({"workload": "threadtest", "kernel": "2.6.24",
                               "params": {"iterations": 300, "loops": 1000}})
    eng, _ = run_once(norm, parse_topology(norm["topology"]), 0, None)
    assert eng.counters["forks"] == 300
    assert len(eng.tasks) <= 1
    assert len(eng.queue) < 20


def test_boolean_sysctls_are_0_1_integers():
    norm = simulator.validate({"workload": "threadtest", "kernel": "2.6.24",
                               "tunables": {"sched_compat_yield": "true"}})
    assert norm["tunables"]["sched_compat_yield"] == 1
    assert norm["tunables"]["sched_child_runs_first"] == 1
    assert type(norm["tunables"]["sched_child_runs_first"]) is int
    spec = simulator.catalog()["kernels"]["2.6.24"]["tunables"]["sched_compat_yield"]
    assert spec["default"] == 0 and spec["type"] == "int" and (spec["min"], spec["max"]) == (0, 1)
    with pytest.raises(InvalidValueError):
        simulator.validate({"workload": "threadtest", "kernel": "2.6.24",
                            "tunables": {"sched_compat_yield": 2}})


def test_runqueue_length_param_accepts_tasks_as_an_alias():
    by_name = simulator.validate({"workload": "runqueue-cost", "kernel": "2.4",
                                  "params": {"runqueue_length": 7}})
    by_alias = simulator.validate({"workload": "runqueue-cost", "kernel": "2.4",
                                   "params": {"tasks": 7}})
    assert by_name == by_alias and by_name["params"]["runqueue_length"] == 7
    assert "tasks" not in by_name["params"]
    with pytest.raises(InvalidValueError):
        simulator.validate({"workload": "runqueue-cost", "kernel": "2.4",
                            "params": {"tasks": 7, "runqueue_length": 8}})


def test_policy_registry_has_one_class_per_family_implementing_every_hook():
    from simulator.policies import REGISTRY, Policy
    from simulator.profiles import PROFILES

    assert {p["family"] for p in PROFILES.values()} | {"edf"} == set(REGISTRY)
    # the abstract hooks, read from the source: the compiled build (simulator/build.py) keeps
    # no ABC bookkeeping (__abstractmethods__) on its classes
    base = ast.parse((pathlib.Path(simulator.__file__).parent / "policies/base.py").read_text())
    hooks = {f.name for node in base.body if isinstance(node, ast.ClassDef)
             and node.name == "Policy" for f in node.body if isinstance(f, ast.FunctionDef)
             and any(getattr(d, "id", None) == "abstractmethod" for d in f.decorator_list)}
    assert {"enqueue", "pick_next", "preempt_time", "yield_hands_over"} <= hooks
    for family, cls in REGISTRY.items():
        assert cls.family == family
        missing = {h for h in hooks if not any(h in vars(k) for k in cls.__mro__
                                               if k is not Policy)}
        assert not missing, (family, missing)
        assert not getattr(cls, "__abstractmethods__", ()), family

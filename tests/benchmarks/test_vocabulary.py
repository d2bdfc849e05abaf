"""One vocabulary: tunables as the sysctl takes them and one param name per meaning, whatever
the source; existing rows migrated; simulated and real runs share each x category."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from benchmarks.comparisons.compute import compute
from benchmarks.comparisons.spec import parse_spec
from benchmarks.identity import vocabulary
from benchmarks.models import Run, RunParam
from benchmarks.services.runs import MetricInput, Provenance, run_prepare
from tests.factories import CORE2, make_run

SIM_MACHINE = {"name": "sim-1x2x1", "cpu_model": "schedbench simulator", "arch": "simulated",
               "sockets": 1, "cores_per_socket": 2, "threads_per_core": 1}


@pytest.mark.parametrize(("given", "stored"), [
    (True, 1), (False, 0), ("true", 1), ("False", 0), ("on", 1), (" 1 ", 1), ("0", 0),
    (1.0, 1), (2.5, 2.5), ("4000000", 4000000), ("0.5", 0.5), (20000000, 20000000),
    ("NO_WAKEUP_PREEMPT", "NO_WAKEUP_PREEMPT"),
])
def test_values_are_stored_as_the_sysctl_takes_them(given, stored):
    value = vocabulary.canonical_value(given)
    assert value == stored and type(value) is type(stored)


def test_names_are_the_sysctl_and_harness_names():
    assert vocabulary.canonical_tunables({"kernel.sched_compat_yield": True,
                                          "/proc/sys/kernel/sched_child_runs_first": "0"}) == \
        {"sched_compat_yield": 1, "sched_child_runs_first": 0}
    assert vocabulary.canonical_params({"tasks": 16}, benchmark="runqueue-cost") == \
        {"runqueue_length": 16}
    assert vocabulary.canonical_params({"tasks": 4}, benchmark="yield-loop") == {"tasks": 4}
    # An alias never overwrites the name itself.
    assert vocabulary.canonical_params({"runqueue_length": 8, "tasks": 9},
                                       benchmark="runqueue-cost") == {"runqueue_length": 8}


@pytest.mark.django_db
def test_every_way_in_stores_the_canonical_form():
    simulated = make_run("2.6.24", [1.0, 2.0], benchmark="runqueue-cost", metric="schedule_us",
                         params={"tasks": 16}, tunables={"sched_compat_yield": False},
                         machine=SIM_MACHINE, source="simulator")
    assert simulated.params == {"runqueue_length": 16}
    assert simulated.tunables == {"sched_compat_yield": 0}
    assert list(RunParam.objects.filter(run=simulated).values_list("name", "value")) == [
        ("runqueue_length", "16")]


@pytest.mark.django_db
def test_simulated_beside_real_runs_over_a_tunable_has_one_category_per_value():
    for compat in (0, 1):
        make_run("2.6.24", [100.0 + compat, 101.0 + compat], tunables={
            "sched_compat_yield": compat})  # sysctl upload: 0/1
        make_run("2.6.24", [50.0 + compat, 51.0 + compat], machine=SIM_MACHINE,
                 source="simulator", tunables={"sched_compat_yield": bool(compat)})
    frozen = compute(parse_spec({"filters": {"benchmark": "threadtest"},
                                 "x": "tunable.sched_compat_yield", "series": "machine.cpus"}))
    assert frozen["axes"]["x"]["values"] == ["0", "1"]
    assert sorted((c["x"], c["n"]) for c in frozen["cells"]) == [("0", 4), ("1", 4)]


@pytest.mark.django_db
def test_simulated_tasks_and_pasted_runqueue_length_share_the_x_axis():
    for length in (1, 16):
        make_run("2.4", [0.4 * length], benchmark="runqueue-cost", metric="schedule_us",
                 unit="us", params={"runqueue_length": length})
        make_run("2.4", [0.3 * length], benchmark="runqueue-cost", metric="schedule_us",
                 unit="us", params={"tasks": length}, machine=SIM_MACHINE, source="simulator")
    frozen = compute(parse_spec({"filters": {"benchmark": "runqueue-cost"},
                                 "x": "param.runqueue_length", "series": "machine.topology"}))
    assert frozen["axes"]["x"]["values"] == ["1", "16"]
    assert frozen["axes"]["series"]["values"] == ["1x2x1"]  # CORE2 and the sim share a shape
    assert [c["n"] for c in frozen["cells"]] == [2, 2]


@pytest.mark.django_db
def test_machine_cpus_and_topology_are_dimensions():
    make_run("2.6.24", [1.0], machine=CORE2)
    make_run("2.6.24", [2.0], machine={**SIM_MACHINE, "name": "sim-2x2x2", "sockets": 2,
                                       "threads_per_core": 2})
    frozen = compute(parse_spec({"filters": {"benchmark": "threadtest"}, "x": "machine.cpus",
                                 "series": "machine.topology"}))
    assert frozen["axes"]["x"] == {"name": "machine.cpus", "values": ["2", "8"], "numeric": True}
    assert frozen["axes"]["series"]["values"] == ["1x2x1", "2x2x2"]


@pytest.mark.django_db(transaction=True)
def test_the_data_migration_rewrites_existing_rows():
    executor = MigrationExecutor(connection)
    before = [("benchmarks", "0004_run_tombstone"), ("discussions", "0002_post_body_html")]
    executor.migrate(before)
    apps = executor.loader.project_state(before).apps
    models = {name: apps.get_model("benchmarks", name) for name in (
        "Benchmark", "Kernel", "Machine", "Metric", "Run", "RunParam", "Sample")}
    bench = models["Benchmark"].objects.create(slug="runqueue-cost", name="runqueue-cost")
    kernel = models["Kernel"].objects.create(version="2.4.36", sort_key="x")
    machine = models["Machine"].objects.create(name="sim-1x2x1", fingerprint="f")
    metric = models["Metric"].objects.create(benchmark=bench, name="schedule_us", unit="us")
    run = models["Run"].objects.create(
        benchmark=bench, kernel=kernel, machine=machine, source="simulator",
        params={"tasks": 8.0}, tunables={"sched_compat_yield": True, "balance_fork": False})
    models["RunParam"].objects.create(run=run, name="tasks", value="8")
    for index, value in enumerate((3.25, 3.5)):
        models["Sample"].objects.create(run=run, metric=metric, index=index, value=value)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    migrated = Run.objects.get(pk=run.pk)
    assert migrated.params == {"runqueue_length": 8}
    assert migrated.tunables == {"sched_compat_yield": 1, "balance_fork": 0}
    assert list(RunParam.objects.filter(run=migrated).values_list("name", "value")) == [
        ("runqueue_length", "8")]
    # The identity is the one a new submission of the same result gets.
    again = run_prepare(benchmark=migrated.benchmark, kernel=migrated.kernel,
                        machine=migrated.machine, provenance=Provenance(source="api"),
                        metrics={"schedule_us": MetricInput([3.25, 3.5], "us")},
                        params={"tasks": 8}, tunables={"sched_compat_yield": "1",
                                                       "balance_fork": 0})
    assert migrated.result_key == again.run.result_key != ""

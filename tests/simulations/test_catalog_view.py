"""simulator.catalog_view(): the catalog built once per process, read-only, for lookups (the
run page's "predict this run" section and the machine page's twins); catalog() still hands
each caller a copy of its own to change."""

import json

import pytest

import simulator
from simulations import twins


def as_plain(value):
    if isinstance(value, tuple):
        return [as_plain(item) for item in value]
    if hasattr(value, "items"):
        return {key: as_plain(item) for key, item in value.items()}
    return value


def test_the_view_is_the_catalog_built_once_and_cannot_be_changed():
    view = simulator.catalog_view()
    assert simulator.catalog_view() is view
    assert json.dumps(as_plain(view), sort_keys=True) == json.dumps(simulator.catalog(),
                                                                    sort_keys=True)
    threadtest = view["workloads"]["threadtest"]
    with pytest.raises(TypeError):
        threadtest["params"]["loops"] = {}
    with pytest.raises(TypeError):
        del view["kernels"]["2.4"]


def test_a_copy_changed_by_its_caller_changes_neither_the_view_nor_the_next_copy():
    mine = simulator.catalog()
    mine["workloads"].clear()
    assert simulator.catalog()["workloads"] and "threadtest" in simulator.catalog_view()[
        "workloads"]


def test_twins_read_the_view():
    assert twins.workload_for("threadtest_burn") == "threadtest-burn"
    assert twins.workload_for("no-such-benchmark") is None

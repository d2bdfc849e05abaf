"""docs/simulator.md names every workload param, metric and tunable the catalog has."""

import pathlib

import simulator

DOC = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "simulator.md").read_text()


def test_every_catalog_name_is_documented():
    catalog = simulator.catalog()
    names = set()
    for workload in catalog["workloads"].values():
        names |= set(workload["params"]) | set(workload["metrics"])
    for kernel in catalog["kernels"].values():
        names |= set(kernel["tunables"])
    missing = sorted(n for n in names if f"`{n}`" not in DOC)
    assert not missing, f"undocumented in docs/simulator.md: {missing}"

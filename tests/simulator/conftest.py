import pytest

import simulator


@pytest.fixture
def run_metric():
    """Run a spec and return the first repeat's value of one metric."""

    def _run(workload, kernel, metric, cpus=2, tunables=None, **params):
        result = simulator.run({"workload": workload, "kernel": kernel, "cpus": cpus,
                                "params": params, "tunables": tunables or {}})
        return result["metrics"][metric][0]

    return _run

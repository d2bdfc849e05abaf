"""Spec expansion: points, derived seeds, and the command that reproduces a point."""

import json
import shlex
import subprocess
import sys

import simulator
from simulations.expansion import Limits, cli_command, derive_seed, expand
from simulations.runs import defaults_for

LIMITS = Limits(max_points=100, max_events_per_run=10**7, max_events=10**12)


def test_points_are_kernels_times_sweep_values_with_their_own_seeds():
    expansion = expand({"workload": "threadtest", "kernels": ["2.4", "2.6.24"],
                        "sweep": {"loops": [1, 2, 3], "topology": ["1x2x1", "2x2x2"]},
                        "seed": 11}, LIMITS)
    assert len(expansion.points) == 2 * 3 * 2
    assert len({p.seed for p in expansion.points}) == 12
    assert len({p.spec_hash for p in expansion.points}) == 12
    point = expansion.points[-1]
    assert point.spec["topology"] == "2x2x2" and point.spec["params"]["loops"] == 3
    assert point.seed == derive_seed(11, "2.6.24", {"loops": 3, "topology": "2x2x2"})
    assert point.spec == simulator.validate(point.spec)  # already normalised


def test_the_command_reproduces_the_point_exactly():
    point = expand({"workload": "threadtest", "kernels": ["2.6.22"], "repeat": 2,
                    "params": {"iterations": 5, "yield_in_spin": True},
                    "tunables": {"HZ": 1000}, "topology": "1x2x2"}, LIMITS).points[0]
    command = cli_command(point.spec, defaults_for("threadtest", "2.6.22"))
    assert "--param iterations=5" in command and "--set HZ=1000" in command
    args = shlex.split(command)
    assert args[:4] == ["python", "-m", "simulator", "run"]
    output = subprocess.run([sys.executable, *args[1:]], capture_output=True, text=True,
                            check=True).stdout
    assert json.loads(output)["metrics"] == simulator.run(point.spec)["metrics"]

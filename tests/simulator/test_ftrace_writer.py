"""`run --trace FILE --trace-format ftrace`: the simulated schedule as ftrace text that schedtrace
reads back with the simulator's own per-task figures."""

import io
import json

import pytest

import schedtrace
import simulator
from simulator.cli import main
from simulator.ftrace import FtraceWriter
from simulator.program import DONE


class Recording(FtraceWriter):
    """The writer, also keeping every task it saw so the test can read the engine's figures."""

    def __init__(self, out):
        super().__init__(out)
        self.tasks = {}

    def pid(self, task):
        pid = super().pid(task)
        self.tasks[pid] = task
        return pid


def simulate(workload, kernel, params, cpus=2):
    out = io.StringIO()
    writer = Recording(out)
    from simulator.api import parse_topology, run_once, validate
    norm = validate({"workload": workload, "kernel": kernel, "params": params, "cpus": cpus})
    eng, _ = run_once(norm, parse_topology(norm["topology"]), 0, None, ftrace=writer)
    return eng, writer, out.getvalue()


@pytest.mark.parametrize("workload,kernel,params", [
    ("threadtest", "2.6.24", {"iterations": 20, "loops": 200000}),
    ("threadtest", "2.6.22", {"iterations": 20, "loops": 200000}),
    ("chatroom", "6.6-eevdf", {"rooms": 2, "clients": 5, "messages": 100}),
    ("wake-pingpong", "2.6.24", {"pairs": 2, "roundtrips": 300}),
])
def test_schedtrace_reads_back_the_simulators_figures(workload, kernel, params):
    eng, writer, text = simulate(workload, kernel, params)
    stream, stats = schedtrace.analyse(io.BytesIO(text.encode()))
    assert stream.format == "ftrace" and not stream.warnings
    parsed = {t.pid: t for t in stats.tasks}
    assert set(parsed) - {0} == set(writer.tasks)
    switch_cost = eng.tun["context_switch_ns"]
    for pid, task in writer.tasks.items():
        got = parsed[pid]
        # waiting (runnable, not running) ends at the switch-in in both: exactly equal
        assert got.wait_sum_ns == task.wait_sum, (pid, task.name)
        # on-CPU time: the trace also holds the switch overhead the engine charges to the CPU
        if task.state != DONE:
            continue  # still running when the run stopped: the trace ends at its last event
        extra = got.runtime_ns - task.sum_exec
        assert 0 <= extra <= got.switches * (switch_cost + 1_000_000), (pid, task.name, extra)
    assert sum(t.switches for t in parsed.values() if t.pid) >= eng.counters["context_switches"]
    # schedtrace counts sched_wakeup_new too: one per task, forked or started
    assert sum(t.wakeups for t in parsed.values()) == eng.counters["wakeups"] + len(writer.tasks)
    assert sum(t.migrations for t in parsed.values()) == eng.counters["migrations"]


def test_cli_writes_ftrace_and_repeats_follow_each_other(tmp_path):
    path = tmp_path / "t.txt"
    out, err = io.StringIO(), io.StringIO()
    status = main(["run", "--workload", "threadtest", "--kernel", "2.6.24", "--param",
                   "iterations=5", "--repeat", "2", "--trace", str(path), "--trace-format",
                   "ftrace", "--format", "json"], out, err)
    assert status == 0, err.getvalue()
    assert json.loads(out.getvalue())["metrics"]["time_ms"]
    stream, stats = schedtrace.analyse(str(path))
    assert not stream.warnings
    stamps = [e.ts for e in schedtrace.open_events(str(path))]
    assert stamps == sorted(stamps)
    parents = [t for t in stats.tasks if t.comm == "parent"]
    assert len(parents) == 2 and parents[0].pid != parents[1].pid


def test_default_trace_format_is_unchanged(tmp_path):
    path = tmp_path / "t.txt"
    simulator.run({"workload": "threadtest", "kernel": "2.6.24",
                   "params": {"iterations": 3}}, trace=open(path, "w"))  # noqa: SIM115
    assert "sched_switch" not in path.read_text()


def test_unknown_trace_format_is_a_spec_error():
    with pytest.raises(simulator.SimulatorError):
        simulator.run({"workload": "threadtest", "kernel": "2.6.24"}, trace=io.StringIO(),
                      trace_format="perf")

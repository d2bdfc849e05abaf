"""Replay: spins the trace shows waiting for a parent or child become spin-waits on its event
(docs/simulator.md, "Spins that wait for another task")."""

import math
import pathlib

import pytest

from simulator.program import ADD, SPIN
from simulator.replay import SKIP, read_trace, replay, simulate, validate, wait_agreement

TRACES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "traces"
P, Q, X = ("p", 20), ("q", 21), ("x", 30)


def line(task, cpu, ts, event, body):
    comm, pid = task or ("<idle>", 0)
    return f"{comm:>16}-{pid:<7} [{cpu:03d}] d..2. {ts:12.6f}: {event}: {body}\n"


def switch(cpu, ts, prev, nxt, state="R"):
    pc, pp = prev or (f"swapper/{cpu}", 0)
    nc, np_ = nxt or (f"swapper/{cpu}", 0)
    return line(prev, cpu, ts, "sched_switch", f"prev_comm={pc} prev_pid={pp} prev_prio=120 "
                f"prev_state={state} ==> next_comm={nc} next_pid={np_} next_prio=120")


def fork(cpu, ts, parent, child, target):
    return (line(parent, cpu, ts, "sched_process_fork", f"comm={parent[0]} pid={parent[1]} "
                 f"child_comm={child[0]} child_pid={child[1]}")
            + line(parent, cpu, ts, "sched_wakeup_new",
                   f"comm={child[0]} pid={child[1]} prio=120 target_cpu={target:03d}"))


def exits(cpu, ts, task):
    return (line(task, cpu, ts, "sched_process_exit",
                 f"comm={task[0]} pid={task[1]} prio=120 group_dead=false")
            + switch(cpu, ts, task, None, "X"))


def write(tmp_path, *lines):
    path = tmp_path / "t.txt"
    path.write_text("# tracer: nop\n" + "".join(lines))
    return str(path)


def spin_of(rebuild, comm):
    task = next(t for t in rebuild.all if t.comm == comm)
    return [(position, op) for position, _seq, op in task.ops if op[0] == SPIN]


@pytest.fixture()
def parent_spins(tmp_path):
    """p forks q onto CPU 1 and runs on CPU 0, no event of its own, until 10 us after q's
    exit (threadtest's parent spinning on the counter, then joining)."""
    return write(tmp_path, switch(0, 10.0, None, P), fork(0, 10.0001, P, Q, 1),
                 switch(1, 10.0002, None, Q), exits(1, 10.0012, Q), exits(0, 10.00121, P))


def test_a_spin_beside_the_child_becomes_a_wait_on_its_exit(parent_spins):
    rebuild, _real = read_trace(parent_spins)
    assert rebuild.spin_waits == 1
    [(position, spin)] = spin_of(rebuild, "p")
    assert position == 1_200_000  # p's own CPU time when q exited: its recorded spin is kept
    child = next(t for t in rebuild.all if t.comm == "q")
    adds = [(pos, op) for pos, _seq, op in child.ops if op[0] == ADD]
    assert adds == [(1_000_000, (ADD, spin[1], 1))]  # q ends p's spin at the end of its run


@pytest.mark.parametrize("kernel", ["2.4", "2.6.22", "6.6-eevdf"])
def test_on_one_cpu_the_spinner_waits_for_the_child_as_threadtest_does(parent_spins, kernel):
    # On one CPU the child can only run once the spinning parent loses the CPU: the parent
    # spins until its slice ends (the threads' threadtest pathology) and exits after the
    # child; replayed as fixed work it would exit first, 1.2 ms in.
    ends = {}
    for spin_waits in (True, False):
        rebuild, _real = read_trace(parent_spins, spin_waits)
        norm = validate({"workload": "threadtest", "kernel": kernel, "cpus": 1,
                         "tunables": {"noise_pct": 0}, "params": {"counter": "register"}})
        _eng, writer = simulate(norm, rebuild)
        ends[spin_waits] = {t.comm: (t.last_ns, t.runtime_ns) for t in writer.stats.tasks}
    assert ends[True]["p"][0] > ends[True]["q"][0]
    assert ends[True]["p"][1] > 1_210_000  # it spun beyond its recorded CPU time
    assert ends[False]["p"][0] < ends[False]["q"][0]
    assert ends[False]["p"][1] == pytest.approx(1_210_000, rel=0.01)


def test_a_spin_with_no_event_at_its_end_stays_work(tmp_path):
    # p goes on 400 us after q's exit (more than the 50 us tail): it was working, not waiting
    path = write(tmp_path, switch(0, 10.0, None, P), fork(0, 10.0001, P, Q, 1),
                 switch(1, 10.0002, None, Q), exits(1, 10.0012, Q), exits(0, 10.0016, P))
    rebuild, _real = read_trace(path)
    assert rebuild.spin_waits == 0 and spin_of(rebuild, "p") == []


def test_a_spin_on_a_child_queued_behind_it_becomes_a_wait_on_its_exit(tmp_path):
    # q waits on p's CPU until p is preempted, then runs in its place and exits; p goes on
    # 10 us later in its own CPU time: p spun with q queued behind it (threadtest's parent
    # holding the CPU its child waits for)
    path = write(tmp_path, switch(0, 10.0, None, P), fork(0, 10.0001, P, Q, 0),
                 switch(0, 10.0012, P, Q), exits(0, 10.0022, Q), switch(0, 10.0022, None, P),
                 exits(0, 10.00221, P))
    rebuild, _real = read_trace(path)
    assert rebuild.spin_waits == 1
    [(position, _spin)] = spin_of(rebuild, "p")
    assert position == 1_200_000  # its only spin: no shorter stretch says where work ended


def test_a_preemption_by_an_unrelated_task_is_not_a_spin(tmp_path):
    # x (not kin) runs in p's place and exits; p goes on 10 us later: nothing p waited for
    path = write(tmp_path, switch(0, 10.0, None, P), line(P, 0, 10.0001, "sched_wakeup",
                                                          "comm=x pid=30 prio=120 target_cpu=000"),
                 switch(0, 10.0012, P, X), exits(0, 10.0022, X), switch(0, 10.0022, None, P),
                 exits(0, 10.00221, P))
    rebuild, _real = read_trace(path)
    assert rebuild.spin_waits == 0


Q2 = ("q2", 22)


@pytest.fixture()
def two_spins(tmp_path):
    """p forks q onto CPU 1, q runs 200 us beside it and exits, p forks q2 10 us later onto
    its own CPU, runs 1 ms more, is preempted by q2, which runs 200 us and exits; p exits
    10 us after it in its own CPU time."""
    return write(tmp_path, switch(0, 10.0, None, P), fork(0, 10.0001, P, Q, 1),
                 switch(1, 10.0001, None, Q), exits(1, 10.0003, Q),
                 fork(0, 10.00031, P, Q2, 0), switch(0, 10.00131, P, Q2),
                 exits(0, 10.00151, Q2), switch(0, 10.00151, None, P), exits(0, 10.00152, P))


def test_a_spin_starts_after_the_least_work_the_task_did_before_one(two_spins):
    # p's stretches before its spin-waits' ends: 200 us (q beside it), 1 ms (q2 queued behind
    # it): the second spin starts 200 us after the fork, the recorded 800 us more are skipped
    rebuild, _real = read_trace(two_spins)
    assert rebuild.spin_waits == 2
    assert [position for position, _op in spin_of(rebuild, "p")] == [300_000, 510_000]
    p = next(t for t in rebuild.all if t.comm == "p")
    assert [(pos, op) for pos, _seq, op in p.ops if op[0] == SKIP] == [
        (300_000, (SKIP, 300_000)), (510_000, (SKIP, 1_310_000))]
    recorded, _real = read_trace(two_spins, spin_work="recorded")
    assert [position for position, _op in spin_of(recorded, "p")] == [300_000, 1_310_000]


def test_the_skipped_spin_is_spun_as_long_as_the_replay_makes_it(two_spins):
    # on two CPUs q2 runs beside p at once: p's 800 us of recorded spin behind it are gone
    rebuild, _real = read_trace(two_spins)
    norm = validate({"workload": "threadtest", "kernel": "6.6-eevdf", "cpus": 2,
                     "tunables": {"noise_pct": 0}, "params": {"counter": "register"}})
    _eng, writer = simulate(norm, rebuild)
    runtime = {t.comm: t.runtime_ns for t in writer.stats.tasks}
    assert runtime["p"] < 1_000_000 < 1_520_000  # recorded: 1.52 ms


def test_an_unrelated_task_or_a_short_stretch_is_not_waited_for(tmp_path):
    # x (not p's parent or child) exits 10 us before p; then p's child q exits 10 us before
    # p acts again, but p had run only 60 us since forking it
    path = write(tmp_path, switch(0, 10.0, None, P), switch(1, 10.0, None, X),
                 exits(1, 10.0010, X), line(P, 0, 10.00101, "sched_wakeup",
                                           "comm=y pid=40 prio=120 target_cpu=001"),
                 fork(0, 10.00102, P, Q, 1), switch(1, 10.00103, None, Q),
                 exits(1, 10.00107, Q), exits(0, 10.00108, P))
    rebuild, _real = read_trace(path)
    assert rebuild.spin_waits == 0


RECORDED = [("ftrace_threadtest.trace.gz", "threadtest"), ("ftrace_burn.trace", "threadtest_burn"),
            ("perfsched_threadtest.txt.gz", "threadtest"),
            ("tracecmd_threadtest.txt.gz", "threadtest"),
            ("perf_burn_ns.txt", "threadtest_burn"),
            ("harness_busy/threadtest.trace.gz", "threadtest"),
            ("harness_busy/threadtest_burn.trace.gz", "threadtest_burn")]


def replays(name):
    kwargs = {"cpus": 2, "tunables": {"noise_pct": 0}}
    return (replay(str(TRACES / name), "6.6-eevdf", **kwargs),
            replay(str(TRACES / name), "6.6-eevdf", spin_waits=False, **kwargs))


@pytest.mark.parametrize("name,comm", RECORDED)
def test_recorded_traces_keep_their_makespan_agreement(name, comm):
    """Spin-waits keep the makespan as close to the recording as fixed spins do, give or take
    2% and one tick per spin-wait: a spinner whose child is queued behind it on its CPU holds
    the CPU until its slice ends at a tick (RUN_TO_PARITY keeps it running until then).
    Since the spins on a child queued behind the spinner count (issue 24 item 6) the
    threadtest recording has 58: its children can wait out their parent's spin in the replay
    where in the recording another program's wakeup handed them the CPU (docs/simulator.md)."""
    with_waits, without = replays(name)
    off = [r["makespan_ms"] / r["real"]["makespan_ms"] for r in (with_waits, without)]
    spins = read_trace(str(TRACES / name))[0].spin_waits
    tick_ms = 1000 / with_waits["tunables"]["HZ"]
    slack = 0.02 + spins * tick_ms / with_waits["real"]["makespan_ms"]
    assert abs(math.log(off[0])) <= abs(math.log(off[1])) + slack, (off, spins)


@pytest.mark.slow  # reads 511,345 lines
def test_spin_waits_are_found_only_between_the_benchmarks_threads():
    # the whole-system recording also holds hackbench (threads waking each other every few
    # microseconds) and the `cat` reading trace_pipe (a sibling of the benchmark); one shell
    # preempted by a subshell it forked, going on 39 us after the subshell's exit, has the
    # shape of a spin on a child queued behind it (docs/simulator.md: the exit line's
    # group_dead=true says it was a process, a field the parser does not keep)
    rebuild, _real = read_trace(str(TRACES / "lost_switch_ins"
                                    / "whole_system_threadtest_burn.trace.gz"))
    spins = [t.comm for t in rebuild.all for _p, _s, op in t.ops if op[0] == SPIN]
    assert len(spins) >= 10
    assert [comm for comm in spins if comm not in ("threadtest", "threadtest_burn")] == ["bash"]


@pytest.mark.xfail(strict=True, reason="per-task waits stay off on these busy-machine "
                   "recordings (with autogroup, the replay's default for them: 60/101, 32/51, "
                   "28/51, 18/31, 17/31 of the tasks within 2x, 41/101 and 26/51 in "
                   "harness_busy/; 54, 40, 33, 17, 21, 47, 32 without): of the 194 out, 113 "
                   "wait too little, 78% of their recorded wait behind another program's task "
                   "(107 with one wait at least half their sum), 81 too much (41 with under "
                   "1 ms recorded); in the recordings another program's wakeup on the parent's "
                   "CPU ends most forked children's waits at once (89 of 94 in "
                   "ftrace_threadtest), in the replay 24 of 75 with autogroup, 19 of 69 "
                   "without; docs/simulator.md, 'What a trace cannot tell' ('Which tasks are "
                   "out of 2x, and why') and Issue 24 'Autogroup in the replay'")
@pytest.mark.parametrize("name,comm", RECORDED)
def test_recorded_wait_sums_within_2x(name, comm):
    with_waits, _without = replays(name)
    rows = wait_agreement(with_waits, comms={comm}, floor_ms=1.0)
    assert all(0.5 <= row[4] <= 2 for row in rows), [r for r in rows if not 0.5 <= r[4] <= 2]

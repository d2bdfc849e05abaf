"""TraceStats against independent, deliberately simple computations."""

import io
import math
import random
import re
from collections import defaultdict
from pathlib import Path

import pytest

import schedtrace
from schedtrace import TraceStats, analyse, open_events, segments

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"
LINE = re.compile(r"^\s*.*-(\d+)\s+\[(\d+)\].*?(\d+)\.(\d+): (\w+): (.*)$")


def naive_runtime(text):
    """Runtime per pid, busy time per CPU and switch-ins from the raw lines, by a plain replay:
    whoever a line says runs on a CPU (its prefix, or next_pid after a switch) runs there until
    a line says otherwise. A task whose prefix shows up without a switch to it started at the
    latest of: the CPU's previous line, the task's last switch-out, and its last wakeup or
    migration onto this CPU; that start counts as a switch-in.
    """
    current, runtime, busy, last = {}, defaultdict(int), defaultdict(int), 0
    switch_ins, migrations = defaultdict(int), defaultdict(int)
    previous_line, left, onto = {}, {}, {}  # cpu -> ts; pid -> ts; pid -> (cpu, ts)

    def account(cpu, until):
        pid, since = current[cpu]
        if pid:
            runtime[pid] += until - since
            busy[cpu] += until - since
            left[pid] = until

    for line in text.splitlines():
        match = LINE.match(line)
        if not match:
            continue
        pid, cpu, kind, body = int(match[1]), int(match[2]), match[5], match[6]
        ts = int(match[3]) * 10**9 + int(match[4].ljust(9, "0"))
        last = ts
        if cpu not in current:
            current[cpu] = (pid, ts)
        elif current[cpu][0] != pid:
            start = ts
            if pid:
                start = max(previous_line[cpu], left.get(pid, 0))
                if onto.get(pid, (None,))[0] == cpu:
                    start = max(start, onto[pid][1])
                switch_ins[pid] += 1
            account(cpu, start)
            current[cpu] = (pid, start)
        previous_line[cpu] = ts
        if kind == "sched_switch":
            account(cpu, ts)
            next_pid = int(re.search(r"next_pid=(\d+)", body)[1])
            current[cpu] = (next_pid, ts)
            switch_ins[next_pid] += 1
            onto[pid] = (cpu, ts)  # a preempted task waits here; a sleeper's wakeup will say
        elif kind in ("sched_wakeup", "sched_wakeup_new", "sched_migrate_task"):
            target = int(re.search(r" pid=(\d+)", body)[1])
            where = re.search(r"(?:target_cpu|dest_cpu)=(\d+)", body)
            if where and target not in (p for p, _ in current.values()):
                onto[target] = (int(where[1]), ts)
            if kind == "sched_migrate_task":
                migrations[target] += 1
    for cpu in current:
        account(cpu, last)
    return runtime, busy, switch_ins, migrations


@pytest.mark.parametrize("name", ["ftrace_burn.trace", "ftrace_threadtest.trace.gz",
                                  "ftrace_yieldloop.trace.xz"])
def test_runtime_busy_switches_migrations_match_a_naive_replay(name):
    from tests.schedtrace.test_parsers import lines_of

    runtime, busy, switch_ins, migrations = naive_runtime("\n".join(lines_of(name)))
    _, stats = analyse(FIXTURES / name)
    by_pid = defaultdict(lambda: [0, 0, 0])
    for task in stats.real_tasks():
        by_pid[task.pid][0] += task.runtime_ns
        by_pid[task.pid][1] += task.switches
        by_pid[task.pid][2] += task.migrations
    assert {pid: v[0] for pid, v in by_pid.items() if v[0]} == \
        {pid: v for pid, v in runtime.items() if v}
    assert {pid: v[1] for pid, v in by_pid.items() if v[1]} == \
        {pid: v for pid, v in switch_ins.items() if pid}
    assert {pid: v[2] for pid, v in by_pid.items() if v[2]} == dict(migrations)
    assert {cpu.cpu: cpu.busy_ns for cpu in stats.cpus.values()} == dict(busy)
    for cpu in stats.cpus.values():  # busy + idle covers the CPU's whole observed span
        assert cpu.busy_ns + cpu.idle_ns == stats.last_ns - cpu.first_ns


def synthetic_trace(seed, steps=3000, cpus=2, tasks=6):
    """A random but consistent schedule written as ftrace text, with its ground truth."""
    rng = random.Random(seed)
    now = 1_000_000_000
    running = dict.fromkeys(range(cpus), 0)           # cpu -> pid (0 idle)
    state = dict.fromkeys(range(100, 100 + tasks), "S")  # S sleeping, R runnable, cpu no.
    since = {}                                           # pid -> (ts, woken?) when runnable
    truth = {pid: {"run": 0, "waits": [], "latencies": [], "wakeups": 0, "in": 0}
             for pid in state}
    started = {}
    lines = []

    def prefix(cpu):
        pid = running[cpu]
        return f"{'<idle>' if pid == 0 else f'task {pid}'}-{pid} [{cpu:03d}] d..2. " \
               f"{now // 10**9}.{now % 10**9:09d}:"

    for _ in range(steps):
        now += rng.randint(1, 50_000)
        cpu = rng.randrange(cpus)
        sleepers = [pid for pid, s in state.items() if s == "S"]
        if sleepers and rng.random() < 0.4:
            pid = rng.choice(sleepers)
            lines.append(f"{prefix(cpu)} sched_wakeup: comm=task {pid} pid={pid} prio=120 "
                         f"target_cpu={cpu:03d}")
            state[pid], since[pid] = "R", (now, True)
            truth[pid]["wakeups"] += 1
            continue
        prev = running[cpu]
        waiting = [pid for pid, s in state.items() if s == "R"]
        nxt = rng.choice(waiting) if waiting else 0
        if prev == 0 and nxt == 0:
            continue
        prev_state = rng.choice("RS") if prev else "R"
        lines.append(
            f"{prefix(cpu)} sched_switch: prev_comm={'swapper' if not prev else f'task {prev}'} "
            f"prev_pid={prev} prev_prio=120 prev_state={prev_state} ==> "
            f"next_comm={'swapper' if not nxt else f'task {nxt}'} next_pid={nxt} next_prio=120")
        if prev:
            truth[prev]["run"] += now - started.pop(prev)
            state[prev] = prev_state
            if prev_state == "R":
                since[prev] = (now, False)
        if nxt:
            began, woken = since.pop(nxt)
            truth[nxt]["waits"].append(now - began)
            if woken:
                truth[nxt]["latencies"].append(now - began)
            truth[nxt]["in"] += 1
            state[nxt], started[nxt] = cpu, now
        running[cpu] = nxt
    for pid, began in started.items():
        truth[pid]["run"] += now - began
    # The trace ends at the last line's time, so cut the open runs there.
    last = int(lines[-1].split("]")[1].split()[1].rstrip(":").replace(".", ""))
    for pid, began in started.items():
        truth[pid]["run"] -= now - max(began, last)
    return "\n".join(lines) + "\n", truth


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_waits_latencies_and_runtime_match_the_generators_ground_truth(seed):
    text, truth = synthetic_trace(seed)
    stream, stats = analyse(io.BytesIO(text.encode()))
    assert stats.inferred_switches == 0
    tasks = {task.pid: task for task in stats.real_tasks()}
    for pid, expected in truth.items():
        if not expected["in"] and not expected["wakeups"]:
            assert pid not in tasks
            continue
        task = tasks[pid]
        assert task.comm == f"task {pid}"
        assert task.runtime_ns == expected["run"]
        assert task.switches == expected["in"]
        assert task.wakeups == expected["wakeups"]
        assert task.wait_sum_ns == sum(expected["waits"])
        assert task.wait_max_ns == max(expected["waits"], default=0)
        assert task.wait_count == len(expected["waits"])
        hist = [0] * schedtrace.HIST_BUCKETS
        for latency in expected["latencies"]:
            hist[int(math.log2(latency)) if latency > 1 else 0] += 1
        assert task.latency_hist == hist


def test_edge_cases_by_hand():
    """Figures worked out by hand from edge_cases.trace (see the README for what it holds)."""
    stream, stats = analyse(FIXTURES / "edge_cases.trace")
    tasks = [(t.pid, t.comm, t.runtime_ns // 1000, t.switches, t.wakeups, t.migrations,
              t.wait_sum_ns // 1000, t.parent_pid) for t in stats.real_tasks()]
    # kworker 501: CPU 1 from 100.000010 to its preemption at .003000 (2990 us); its switch-in
    # on CPU 0 is missing: placed at its wakeup there (.004200, CPU 0's previous line) and run
    # to .009000 (4800 us, a 1200 us wait since its preemption); the one on CPU 1 (line 24)
    # placed at its wakeup at .010000, run to .011000 (1000 us): 8790 us, 3 switch-ins.
    assert tasks == [
        (500, "Web Content", 3500, 2, 1, 0, 500, None),
        (501, "[kworker 0:1]", 8790, 3, 1, 1, 1200, None),
        (600, "Web Content", 2000, 1, 1, 0, 1900, 500),    # exited (X) ...
        (600, "a b [c]-d", 400, 1, 1, 0, 900, 500),        # ... and its pid reused
    ]
    cpus = {c.cpu: (c.busy_ns // 1000, c.idle_ns // 1000, c.idle_gaps) for c in
            stats.cpus.values()}
    assert cpus == {0: (7200, 3800, 2), 1: (7490, 2000, 2)}
    # The two switch-ins from idle that were never recorded (lines 15 and 24), the lost events.
    assert (stats.inferred_switches, stats.inferred_switch_ins) == (2, 2)
    assert stats.inferred_switch_outs == 0
    assert stats.warnings()[0].startswith("2 switch-ins were missing from the trace")
    assert stats.lost_events == 17
    assert stats.duration_ns == 11_000_000
    # Only recorded switch-ins put a wait in the latency histogram: 501's two inferred ones
    # are counted as waits but not as measured latencies.
    kworker = stats.real_tasks()[1]
    assert (kworker.wait_count, sum(kworker.latency_hist)) == (2, 0)


def test_segments_never_overlap_on_a_cpu_and_sum_to_busy_time():
    _, stats = analyse(FIXTURES / "ftrace_threadtest.trace.gz")
    per_cpu = defaultdict(list)
    for segment in segments(open_events(FIXTURES / "ftrace_threadtest.trace.gz")):
        per_cpu[segment.cpu].append(segment)
    for cpu, items in per_cpu.items():
        items.sort(key=lambda s: s.start_ns)
        assert all(a.end_ns <= b.start_ns for a, b in zip(items, items[1:], strict=False))
        assert sum(s.end_ns - s.start_ns for s in items) == stats.cpus[cpu].busy_ns
        assert {s.end_state for s in items} <= {"R", "R+", "S", "D", "X", "Z", "I", "?"}


def test_wakeup_callback_reports_waker_cpu_and_target():
    arrows = []
    TraceStats(on_wakeup=lambda a, b, task, at: arrows.append((a, b, task.pid, at))).consume(
        open_events(FIXTURES / "edge_cases.trace")).finish()
    assert arrows[0] == (0, 1, 600, 100_001_100_000)
    assert (0, 1, 500, 100_006_000_000) in arrows

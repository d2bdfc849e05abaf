"""Switch-ins a trace never recorded (KVM guests lose switch-ins from idle): inferred where the
events place them, counted, said in warnings() and used by every statistic. Small written
traces whose figures are worked out by hand."""

import gzip
import io
import re
from collections import Counter, defaultdict
from pathlib import Path

from schedtrace import analyse, open_events, segments


def at(us):
    """ftrace's timestamp column for `us` microseconds after 100 s."""
    return f"{100 + us // 1_000_000}.{us % 1_000_000:06d}"


def switch(cpu, us, prev, prev_pid, state, nxt, next_pid):
    who = "<idle>" if prev_pid == 0 else prev
    return (f"{who}-{prev_pid} [{cpu:03d}] d..2. {at(us)}: sched_switch: prev_comm={prev} "
            f"prev_pid={prev_pid} prev_prio=120 prev_state={state} ==> next_comm={nxt} "
            f"next_pid={next_pid} next_prio=120")


def wakeup(cpu, us, by, by_pid, comm, pid, target):
    who = "<idle>" if by_pid == 0 else by
    return (f"{who}-{by_pid} [{cpu:03d}] dNh2. {at(us)}: sched_wakeup: comm={comm} pid={pid} "
            f"prio=120 target_cpu={target:03d}")


def line(cpu, us, comm, pid, text):
    return f"{comm}-{pid} [{cpu:03d}] d..2. {at(us)}: {text}"


def stats_of(*lines):
    _, stats = analyse(io.BytesIO(("\n".join(lines) + "\n").encode()))
    return stats


def task(stats, pid):
    (found,) = [t for t in stats.real_tasks() if t.pid == pid]
    return found


# `worker` (pid 10) runs on CPU 0 from 0 to 100 us and sleeps; CPU 1 is idle from 0 on.
START = [
    switch(0, 0, "swapper/0", 0, "R", "worker", 10),
    switch(1, 0, "hog", 20, "S", "swapper/1", 0),
    switch(0, 100, "worker", 10, "S", "swapper/0", 0),
]


def test_complete_trace_infers_nothing():
    stats = stats_of(
        *START,
        wakeup(1, 300, "swapper/1", 0, "worker", 10, 1),
        switch(1, 310, "swapper/1", 0, "R", "worker", 10),
        switch(1, 500, "worker", 10, "S", "swapper/1", 0),
    )
    worker = task(stats, 10)
    assert (worker.runtime_ns, worker.switches, worker.wait_sum_ns) == (290_000, 2, 10_000)
    assert (stats.inferred_switches, stats.inferred_switch_ins) == (0, 0)
    assert stats.warnings() == []


def test_switch_in_inferred_at_its_wakeup_on_that_cpu():
    # The swapper -> worker switch on CPU 1 is missing: the wakeup onto CPU 1 (300 us, after
    # CPU 1's last switch at 0) is where the events place it; it runs until its switch-out.
    stats = stats_of(
        *START,
        wakeup(1, 300, "swapper/1", 0, "worker", 10, 1),
        line(1, 420, "worker", 10, "sched_migrate_task: comm=hog pid=20 prio=120 orig_cpu=0 "
             "dest_cpu=1"),
        switch(1, 500, "worker", 10, "S", "swapper/1", 0),
    )
    worker = task(stats, 10)
    assert worker.runtime_ns == 100_000 + 200_000
    assert worker.switches == 2
    assert (worker.wait_count, worker.wait_sum_ns) == (1, 0)
    assert sum(worker.latency_hist) == 0  # an inferred wait is no measured latency
    assert (stats.inferred_switches, stats.inferred_switch_ins) == (1, 1)
    assert stats.inferred_switch_outs == 0
    cpu1 = stats.cpus[1]
    assert (cpu1.busy_ns, cpu1.idle_ns, cpu1.idle_gaps) == (200_000, 300_000, 1)


def test_switch_in_inferred_at_the_cpus_last_switch_when_the_wakeup_came_before():
    # worker is woken onto CPU 1 at 200 us while `hog` (pid 20) runs there; hog sleeps at
    # 350 us (recorded, to idle) and the idle -> worker switch is lost: worker starts at the
    # CPU's last switch (350 us), not at its wakeup, and waited 150 us.
    stats = stats_of(
        *START[:1],
        switch(1, 0, "swapper/1", 0, "R", "hog", 20),
        START[2],
        wakeup(0, 200, "swapper/0", 0, "worker", 10, 1),
        switch(1, 350, "hog", 20, "S", "swapper/1", 0),
        switch(1, 600, "worker", 10, "S", "swapper/1", 0),
    )
    worker = task(stats, 10)
    assert (worker.runtime_ns, worker.switches) == (100_000 + 250_000, 2)
    assert (worker.wait_count, worker.wait_sum_ns, worker.wait_max_ns) == (1, 150_000, 150_000)
    assert task(stats, 20).runtime_ns == 350_000
    assert stats.inferred_switch_ins == 1


def test_switch_in_not_placed_before_a_later_line_of_the_old_occupant():
    # Woken onto CPU 1 at 300 us, but CPU 1's idle context still logs a wakeup at 380 us:
    # the task cannot have started before that line.
    stats = stats_of(
        *START,
        wakeup(1, 300, "swapper/1", 0, "worker", 10, 1),
        wakeup(1, 380, "swapper/1", 0, "other", 30, 0),
        switch(1, 500, "worker", 10, "S", "swapper/1", 0),
    )
    assert task(stats, 10).runtime_ns == 100_000 + 120_000
    assert task(stats, 10).wait_sum_ns == 80_000


def test_switch_in_from_a_wakeup_on_another_cpu_falls_back_to_the_cpus_last_line():
    # The wakeup chose CPU 0 but the task shows up on CPU 1 (its migration went unrecorded):
    # the wakeup does not place it on CPU 1, so CPU 1's last line does (the switch at 0 us),
    # and not before the task became runnable (300 us).
    stats = stats_of(
        *START,
        wakeup(0, 300, "swapper/0", 0, "worker", 10, 0),
        switch(1, 500, "worker", 10, "S", "swapper/1", 0),
    )
    worker = task(stats, 10)
    assert worker.runtime_ns == 100_000 + 200_000
    assert worker.wait_sum_ns == 0
    assert stats.inferred_switch_ins == 1


def test_segments_follow_the_inferred_timeline():
    text = "\n".join([
        *START,
        wakeup(1, 300, "swapper/1", 0, "worker", 10, 1),
        switch(1, 500, "worker", 10, "S", "swapper/1", 0),
    ]) + "\n"
    found = [(s.cpu, s.pid, s.start_ns % 10**9 // 1000, s.end_ns % 10**9 // 1000, s.end_state)
             for s in segments(open_events(io.BytesIO(text.encode())))]
    assert (1, 10, 300, 500, "S") in found
    assert (0, 10, 0, 100, "S") in found


def test_warnings_count_switch_ins_and_switch_outs():
    # Three lost switch-ins: two from idle on CPU 1 (each placed at its wakeup) and one where
    # `other` replaces `worker` on CPU 1 with no switch between them (also a lost switch-out).
    stats = stats_of(
        *START,
        wakeup(1, 300, "swapper/1", 0, "worker", 10, 1),
        switch(1, 500, "worker", 10, "S", "swapper/1", 0),
        wakeup(1, 600, "swapper/1", 0, "worker", 10, 1),
        wakeup(1, 650, "worker", 10, "other", 30, 1),
        line(1, 700, "other", 30, "sched_wakeup: comm=hog pid=20 prio=120 target_cpu=000"),
        switch(1, 800, "other", 30, "S", "swapper/1", 0),
    )
    assert (stats.inferred_switches, stats.inferred_switch_ins) == (3, 3)
    assert stats.inferred_switch_outs == 1
    said = stats.warnings()
    assert said[0].startswith("3 switch-ins were missing from the trace and were inferred")
    assert said[1].startswith("1 switch-outs were missing")
    # worker: 0-100, 300-500, 600-650 (other's wakeup at 650 is the CPU's last line before
    # other shows up at 700: other is placed there, at its own wakeup onto CPU 1).
    assert task(stats, 10).runtime_ns == 100_000 + 200_000 + 50_000
    assert (task(stats, 30).runtime_ns, task(stats, 30).switches) == (150_000, 1)
    assert stats.summary()["inferred_switch_ins"] == 3


RECORDED = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "lost_switch_ins"
STAMP = re.compile(r"\[(\d+)\] \S+ +(\d+)\.(\d+): ")


def stamp(text):
    match = STAMP.search(text)
    return int(match[1]), int(match[2]) * 10**9 + int(match[3]) * 1000


def test_switch_ins_dropped_from_a_recorded_trace_are_put_back_near_where_they_were():
    """A written variant of the recorded trace with ground truth: every second switch-in from
    idle on CPU 0 (which this recording kept) removed. Each task keeps its switches, and gains
    at most the time between the removed switch and CPU 0's line before it, the same time
    its waits lose."""
    text = gzip.decompress((RECORDED / "whole_system_threadtest_burn.trace.gz").read_bytes())
    lines = text.decode().splitlines()[350_000:400_000]  # a stretch where CPU 0 idles often
    kept, slack, seen, previous = [], Counter(), 0, None
    for line in lines:
        if "[000]" in line and "sched_switch: prev_comm=swapper/0 prev_pid=0 " in line:
            seen += 1
            if seen % 2 == 0:
                pid = int(line.rsplit("next_pid=", 1)[1].split()[0])
                slack[pid] += stamp(line)[1] - previous
                continue
        cpu, ts = stamp(line)
        previous = ts if cpu == 0 else previous
        kept.append(line)
    assert sum(slack.values()) > 0 and seen > 1000
    whole = stats_of(*lines)
    dropped = stats_of(*kept)
    assert dropped.inferred_switch_ins - whole.inferred_switch_ins == seen // 2
    before, after = by_pid(whole), by_pid(dropped)
    assert set(before) == set(after)
    for pid, (switches, runtime, wait) in before.items():
        again = after[pid]
        assert again[0] == switches, pid
        assert 0 <= again[1] - runtime <= slack[pid], pid
        assert wait - again[2] == again[1] - runtime, pid


def by_pid(stats):
    found = defaultdict(lambda: [0, 0, 0])
    for each in stats.real_tasks():
        row = found[each.pid]
        row[0] += each.switches
        row[1] += each.runtime_ns
        row[2] += each.wait_sum_ns
    return found

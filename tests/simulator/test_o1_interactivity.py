"""2.6.22's interactivity estimator (policies/o1.py) against the arithmetic of kernel/sched.c.

The figures follow from the source's constants at HZ=250 (a 4 ms jiffy): MAX_SLEEP_AVG is
DEF_TIMESLICE (25 jiffies) x MAX_BONUS (10) = 250 jiffies = 1 s, CURRENT_BONUS is whole jiffies
of sleep_avg x 10 / 250, and the dynamic priority is static_prio - (bonus - 5).
"""

import json

import simulator
from simulator.policies import make_policy
from simulator.policies.o1 import (
    NEW_ON_PARENT_CPU,
    SLEEP_INTERACTIVE,
    SLEEP_NONINTERACTIVE,
    SLEEP_NORMAL,
)
from simulator.program import RUN, Task

MS = 1_000_000


def o1_policy(**tunables):
    norm = simulator.validate({"workload": "yield-loop", "kernel": "2.6.22", "cpus": 1,
                               "tunables": tunables})
    return make_policy("o1", "2.6.22", norm["tunables"], 1)


def task(tid, sleep_avg=0, nice=0):
    t = Task(tid, f"t{tid}", [(RUN, MS)], nice=nice)
    t.sleep_avg = sleep_avg
    t.parent = t  # not a task the workload starts: no shell-child sleep_avg at its fork
    return t


def test_dynamic_priority_spans_five_levels_either_side_of_static():
    policy = o1_policy()
    assert [policy.effective_prio(task(1, avg)) for avg in (0, 500 * MS, 1000 * MS)] == \
        [125, 120, 115]
    # whole jiffies only: 399 ms is 99 jiffies, bonus 3
    assert policy.effective_prio(task(1, 399 * MS)) == 122
    assert policy.effective_prio(task(1, 1000 * MS, nice=-20)) == 100  # clamped to MAX_RT_PRIO


def test_one_long_sleep_stops_at_interactive_sleep_and_earns_no_runqueue_credit():
    """INTERACTIVE_SLEEP at nice 0: 250 x (5 + 2 + 1) / 10 - 1 = 199 jiffies (796 ms): prio
    118, just interactive (TASK_INTERACTIVE: prio <= 120 - DELTA, DELTA = 2)."""
    policy = o1_policy()
    rq = policy.new_rq(0)
    sleeper = task(1)
    policy.enqueue(rq, sleeper, "wakeup", 2000 * MS)
    assert sleeper.sleep_avg == 199 * 4 * MS and sleeper.prio == 118
    assert policy.task_interactive(sleeper) and sleeper.sleep_type == SLEEP_NONINTERACTIVE
    picked = policy.pick_next(rq, None, 2100 * MS)
    policy.on_pick(rq, picked, 2100 * MS)
    assert picked.sleep_avg == 199 * 4 * MS and picked.sleep_type == SLEEP_NORMAL


def test_a_short_sleep_is_credited_whole_and_30_percent_of_the_runqueue_wait():
    policy = o1_policy()
    rq = policy.new_rq(0)
    t = task(1, 100 * MS)
    t.sched_stamp = 0
    policy.enqueue(rq, t, "wakeup", 350 * MS)  # slept 350 ms
    assert t.sleep_avg == 450 * MS and t.prio == 121 and t.sleep_type == SLEEP_INTERACTIVE
    policy.on_pick(rq, policy.pick_next(rq, None, 606 * MS), 606 * MS)  # waited 256 ms
    assert t.sleep_avg == 450 * MS + 256 * MS * 38 // 128  # ON_RUNQUEUE_WEIGHT 30: 38/128
    assert t.prio == 120


def test_running_debits_sleep_avg_divided_by_the_bonus():
    policy = o1_policy()
    rq = policy.new_rq(0)
    hog, sleeper = task(1, 1000 * MS), task(2, 0)
    for t in (hog, sleeper):
        policy.enqueue(rq, t, "fork", 0)
    first = policy.pick_next(rq, None, 0)
    policy.on_pick(rq, first, 0)
    policy.curr_leaves(rq, first, 100 * MS)  # ran 100 ms at bonus 10: charged 10 ms
    assert first is hog and hog.sleep_avg == 990 * MS
    nxt = policy.pick_next(rq, None, 100 * MS)
    policy.on_pick(rq, nxt, 100 * MS)
    policy.curr_leaves(rq, nxt, 5000 * MS)  # no bonus: charged in full, at most 1 s
    assert nxt is sleeper and sleeper.sleep_avg == 0


def test_fork_keeps_whole_bonus_steps_the_child_95_percent():
    policy = o1_policy()
    rq = policy.new_rq(0)
    parent, child = task(1, 1000 * MS - 1), task(2)
    policy.task_fork(rq, parent, child, 0, True)
    policy.enqueue(rq, child, "fork", 0)
    # bonus 9 (one ns short of 10): parent keeps 9 steps, the child 9 x 95 / 100 = 8
    assert parent.sleep_avg == 900 * MS and child.sleep_avg == 800 * MS and child.prio == 117
    assert child.sleep_type == NEW_ON_PARENT_CPU
    assert not policy.wakeup_preempts(rq, task(3, 0), child, 0)  # never checked on its CPU


def test_a_started_task_is_a_child_of_an_interactive_shell():
    policy = o1_policy()
    started = Task(1, "main", [(RUN, MS)])
    policy.enqueue(policy.new_rq(0), started, "fork", 0)
    assert started.sleep_avg == 900 * MS and started.prio == 116


def expire_slice(policy, rq, t, now):
    policy.on_pick(rq, t, now - 100 * MS)
    t.slice_left = 0
    policy.put_prev(rq, t, now)


def test_an_interactive_task_goes_back_to_the_active_array_until_the_expired_ones_starve():
    """STARVATION_LIMIT is MAX_SLEEP_AVG (1 s) per runnable task: here two."""
    policy = o1_policy()
    rq = policy.new_rq(0)
    ui, hog = task(1, 1000 * MS), task(2, 0)
    for t in (ui, hog):
        policy.enqueue(rq, t, "fork", 0)
    rq.nr_running = 2
    assert policy.pick_next(rq, None, 0) is ui
    expire_slice(policy, rq, ui, 100 * MS)
    assert not ui.expired and rq.extra.expired_since == 100 * MS
    assert policy.pick_next(rq, None, 100 * MS) is ui  # 115 before the hog's 125
    expire_slice(policy, rq, ui, 2101 * MS)  # the first expiry was 2.001 s ago
    assert ui.expired


def test_a_better_static_priority_in_the_expired_array_stops_reinsertion():
    policy = o1_policy()
    rq = policy.new_rq(0)
    rq.extra.best_expired_prio = 110  # a nice -10 task has expired
    ui = task(1, 1000 * MS)
    policy.enqueue(rq, ui, "fork", 0)
    rq.nr_running = 1
    expire_slice(policy, rq, policy.pick_next(rq, None, 0), 100 * MS)
    assert ui.expired


def sleeper_beside_a_hog(interactivity):
    config = {"tasks": {"hog": {"loop": -1, "run": 100_000},
                        "ui": {"loop": -1, "run": 1000, "sleep": 9000}},
              "global": {"duration": 3}}
    result = simulator.run({"workload": "rtapp", "kernel": "2.6.22", "cpus": 1,
                            "params": {"config": json.dumps(config)},
                            "tunables": {"interactivity": interactivity}})
    return result["counters"]


def test_a_sleeper_preempts_a_cpu_hog_only_with_the_estimator():
    """1 ms of work every 10 ms beside a hog on one CPU: the sleeper's sleep_avg lifts it above
    the hog, so each wakeup preempts it and it keeps its pace (300 periods in 3 s); with static
    priorities it waits out the hog's 100 ms slices."""
    with_estimator, static = sleeper_beside_a_hog(True), sleeper_beside_a_hog(False)
    assert with_estimator["wakeups"] > 250 and with_estimator["preemptions"] > 250
    assert static["wakeups"] < 40, static


def test_a_lone_tasks_skipped_expiries_charge_as_explicit_ones():
    """Alone on its CPU a task's slice is refilled lazily (no expiry events); the sleep_avg and
    priority it ends with are those of expiring and being picked again at every slice end."""
    for start_avg in (1000 * MS, 430 * MS, 100 * MS, 30 * MS, 0):
        lazy_policy, plain_policy = o1_policy(), o1_policy()
        lazy_rq, plain_rq = lazy_policy.new_rq(0), plain_policy.new_rq(0)
        lazy, plain = task(1, start_avg), task(2, start_avg)
        for policy, rq, t in ((lazy_policy, lazy_rq, lazy), (plain_policy, plain_rq, plain)):
            policy.enqueue(rq, t, "fork", 0)
            rq.nr_running = 1
            policy.on_pick(rq, policy.pick_next(rq, None, 0), 0)
        lazy_policy.account(lazy_rq, lazy, 1050 * MS, 1050 * MS)  # 10 slices ended
        for k in range(1, 11):
            plain.slice_left = 0
            plain_policy.put_prev(plain_rq, plain, k * 100 * MS)
            plain_policy.on_pick(plain_rq, plain_policy.pick_next(plain_rq, None, k * 100 * MS),
                                 k * 100 * MS)
        assert (lazy.sleep_avg, lazy.prio, lazy.sched_stamp) == \
            (plain.sleep_avg, plain.prio, plain.sched_stamp), start_avg
        assert lazy.slice_left == 50 * MS

"""Thread create/join workloads: threadtest and its burn variant."""

from typing import Any

from .program import (
    ADD,
    EXIT,
    FORK,
    LOOP,
    MARK,
    RUN,
    SET,
    SLEEP,
    SPIN,
    WAIT,
    WALL_END,
    WALL_RUN,
    Counter,
    Semaphore,
)
from .wl_common import MS, US, m, mark_time, p


# ---------------------------------------------------------------------------------- threadtest
class Threadtest:
    name = "threadtest"
    description = ("Thread create/join microbenchmark: per iteration the parent creates a thread, "
                   "both run a counting loop of `loops` iterations, bump a shared counter and spin "
                   "until both are done; the parent joins.  Prints `time <ms> ms`.")
    params = {
        "iterations": p(500, "int", "create/join iterations", 1, 1_000_000),
        "loops": p(1_000_000, "int", "counting-loop iterations per thread", 0, 10**10),
        "counter": p("memory", "choice:memory,register", "where the counting loop's counter "
                     "lives: memory (volatile, or built -O0 as in the threads) prices an "
                     "iteration at loop_memory_ns, register (the harness's -O2 build) at loop_ns"),
        "yield_in_spin": p(False, "bool", "call sched_yield() inside the spin loop"),
        "head_start_us": p(0, "int", "parent sleeps this long after creating the child "
                           "(usleep head start)", 0, 10**9),
        "pin": p(False, "bool", "pin the parent to CPU 0 and the child to CPU 1"),
    }
    metrics = {"time_ms": m("ms", False)}

    def build(self, b):
        prm, tun = b.params, b.tun
        done = Counter("done")
        join = Semaphore("join")
        work = int(prm["loops"] * tun["loop_memory_ns" if prm["counter"] == "memory"
                                      else "loop_ns"])
        ncpus = len(b.eng.cpus)
        pinned = prm["pin"] and ncpus > 1
        child_prog = [(RUN, work), (ADD, done, 1), (SPIN, done, 2, prm["yield_in_spin"]),
                      (RUN, tun["exit_ns"]), (EXIT,)]

        def make_child(eng, parent):
            child = b.task("child", child_prog, affinity={1} if pinned else None)
            child.joinsem = join
            return child

        body: list[tuple[Any, ...]] = [(RUN, tun["fork_ns"]), (FORK, make_child)]
        if prm["head_start_us"]:
            body.append((SLEEP, prm["head_start_us"] * US))
        body += [(RUN, work), (ADD, done, 1), (SPIN, done, 2, prm["yield_in_spin"]),
                 (WAIT, join), (SET, done, 0), (LOOP, prm["iterations"], 0)]
        prog = [*body, mark_time("end"), (EXIT,)]
        b.check_budget(4 * prm["iterations"], prm["iterations"] * (work + tun["fork_ns"]))
        b.start(b.task("parent", prog, affinity={0} if pinned else None))

    def collect(self, b):
        return {"time_ms": b.eng.marks.get("end", b.eng.now) / MS}


class ThreadtestBurn:
    name = "threadtest-burn"
    description = ("Burn variant: per iteration parent and child each busy-loop until the wall "
                   "clock shows `burn_us` more (or, with clock=cpu, until they used that much CPU "
                   "time), then spin until both are done.  Prints `time: <us> (us)  work: <us>  "
                   "wait: <us>  idx: <f>`; work is each burn's wall time, idx = work / wall "
                   "time (2.0 = perfect overlap on 2 CPUs).")
    params = {
        "iterations": p(100, "int", "create/join iterations", 1, 1_000_000),
        "burn_us": p(10_000, "int", "length of each thread's burn per iteration", 1, 10**9),
        "yield_in_spin": p(False, "bool", "call sched_yield() inside the spin loop"),
        "clock": p("wall", "choice:wall,cpu", "what a burn measures: gettimeofday() wall time "
                   "(the harness default) or the thread's CPU time (its -c)"),
    }
    metrics = {"time_us": m("us", False), "work_us": m("us", None), "wait_us": m("us", False),
               "idx": m("ratio", True)}

    def build(self, b):
        prm, tun = b.params, b.tun
        done = Counter("done")
        join = Semaphore("join")
        burn = prm["burn_us"] * US
        b.state["wait"] = 0
        b.state["work"] = 0

        def spin_start(eng, task):
            task.data = eng.now

        def spin_end(eng, task):
            b.state["wait"] += eng.now - task.data

        def burn_start(eng, task):
            task.data = eng.now

        def count_work(eng, task):  # the burn as the wall clock saw it, as the harness reports
            b.state["work"] += eng.now - task.data

        if prm["clock"] == "wall":
            burn_ops = [(MARK, burn_start), (WALL_RUN, burn), (WALL_END,), (MARK, count_work)]
        else:
            burn_ops = [(MARK, burn_start), (RUN, burn), (MARK, count_work)]
        spin = [(MARK, spin_start), (SPIN, done, 2, prm["yield_in_spin"]), (MARK, spin_end)]
        child_prog = [*burn_ops, (ADD, done, 1), *spin, (RUN, tun["exit_ns"]), (EXIT,)]

        def make_child(eng, parent):
            child = b.task("child", child_prog)
            child.joinsem = join
            return child

        prog = [(RUN, tun["fork_ns"]), (FORK, make_child), *burn_ops, (ADD, done, 1), *spin,
                (WAIT, join), (SET, done, 0), (LOOP, prm["iterations"], 0), mark_time("end"),
                (EXIT,)]
        b.check_budget(4 * prm["iterations"], prm["iterations"] * burn)
        b.start(b.task("parent", prog))

    def collect(self, b):
        wall = b.eng.marks.get("end", b.eng.now)
        work = b.state["work"]
        return {"time_us": wall / US, "work_us": work / US, "wait_us": b.state["wait"] / US,
                "idx": work / wall if wall else 0.0}

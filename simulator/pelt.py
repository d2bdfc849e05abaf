"""6.6's PELT utilisation and runnable averages, per task and per CPU (6.6-eevdf's balancer).

What the kernel keeps (kernel/sched/pelt.c ___update_load_avg() / accumulate_sum(), and fair.c
__update_load_avg_se(), __update_load_avg_cfs_rq(), attach_entity_load_avg(),
detach_entity_load_avg(), cpu_util_cfs(), cpu_util_without(), cpu_runnable(),
cpu_runnable_without(); read in the stored android15-6.6 tree
whitewhale0612/android_kernel_common_oneplus_sm8750):

* a task's util_avg: the geometric average of "running" x SCHED_CAPACITY_SCALE, its
  runnable_avg the same of "runnable" (queued or running), both over 1024-us periods with
  y^32 = 1/2;
* a CPU's cfs_rq util_avg: the average of "some entity is running" (cfs_rq->curr), its
  runnable_avg the average of h_nr_running, each x SCHED_CAPACITY_SCALE; a task that migrates
  takes its own averages out of the old CPU's sums (detach / remove_entity_load_avg()) and
  adds them to the new CPU's (attach_entity_load_avg()); a task that sleeps stays attached,
  its part decaying with the CPU's sums.

Because each CPU sum's input is the sum of its attached tasks' inputs, and both decay alike,
the CPU's averages stay the sum of its attached tasks' averages: this module keeps the CPU
sums directly (one settle per change of running task or runnable count), and each task's own
pair for when it migrates.

Simplified (docs/simulator.md, issue 24): the geometric series is a continuous decay with the
same half-life (equal at period boundaries, as eevdf_shares.TaskAvg); all capacities are 1024
(no frequency or CPU invariance); util_est is not modelled (task_util_est() is util_avg);
post_init_entity_util_avg() is taken at its cap, half the CPU's spare utilisation (the
cfs_rq load_avg it would scale by is not kept for tasks of no group); the removed averages of
a migrating or exiting task leave the old CPU's sums at once (the kernel folds them at that
runqueue's next update).
"""

import math
from typing import Final

# Final: the compiled build folds them in (a plain module global is a dict lookup per use)
SCHED_CAPACITY_SCALE: Final = 1024
HALF_LIFE_NS: Final = 32 * 1_024_000  # y^32 = 1/2 with periods of 1024 us (LOAD_AVG_PERIOD)


def decay(elapsed_ns: int) -> float:
    """y^(elapsed periods), continuous.  math.pow, not **: the same libm pow() (so the same
    bits), but compiled it is a direct C call, where ** goes through a boxed generic power."""
    return math.pow(0.5, elapsed_ns / HALF_LIFE_NS)


class Signal:
    """One entity's (a task's or a CPU's) util_avg and runnable_avg, in capacity units."""

    __slots__ = ("util", "runnable", "stamp", "running", "nr", "cpu")

    def __init__(self, now: int, util: float, runnable: float) -> None:
        self.util = util
        self.runnable = runnable
        self.stamp = now
        self.running = 0  # the input of util: 1 while running (a CPU: while a task runs)
        self.nr = 0  # the input of runnable: a task 0/1, a CPU its runnable task count
        self.cpu = -1  # a task: the CPU whose sums it is attached to

    def settle(self, now: int) -> None:
        if now == self.stamp:
            return  # several transitions at one instant: nothing decayed in between
        d = decay(now - self.stamp)
        self.util = self.util * d + SCHED_CAPACITY_SCALE * self.running * (1.0 - d)
        self.runnable = self.runnable * d + SCHED_CAPACITY_SCALE * self.nr * (1.0 - d)
        self.stamp = now


class Pelt:
    """Every task's and every CPU's utilisation and runnable averages.  The engine calls the
    four transitions; the balancer reads the averages."""

    def __init__(self, ncpus: int, now: int) -> None:
        self.cpus: list[Signal] = [Signal(now, 0.0, 0.0) for _ in range(ncpus)]
        self.tasks: dict[int, Signal] = {}
        # the last decay computed and its elapsed time: the next settle over the same span
        # (a task and its CPU last settled together, often) reuses it instead of calling pow()
        self.memo_elapsed: int = 0
        self.memo_decay: float = 1.0  # decay(0), a true pair from the start

    def _settle(self, s: Signal, now: int) -> None:
        """s.settle(now), with the decay over a span just computed reused: the same value
        (decay() is a function of the span alone), one libm pow() fewer."""
        elapsed = now - s.stamp
        if elapsed == 0:
            return  # several transitions at one instant: nothing decayed in between
        if elapsed == self.memo_elapsed:
            d = self.memo_decay
        else:
            d = decay(elapsed)
            self.memo_elapsed = elapsed
            self.memo_decay = d
        s.util = s.util * d + SCHED_CAPACITY_SCALE * s.running * (1.0 - d)
        s.runnable = s.runnable * d + SCHED_CAPACITY_SCALE * s.nr * (1.0 - d)
        s.stamp = now

    def _attach(self, s: Signal, cpu: int, now: int) -> None:
        if s.cpu == cpu:
            return
        if s.cpu >= 0:  # detach_entity_load_avg() / remove_entity_load_avg() on the old CPU
            self._detach(s, now)
        c = self.cpus[cpu]
        self._settle(c, now)
        c.util += s.util
        c.runnable += s.runnable
        s.cpu = cpu

    def _detach(self, s: Signal, now: int) -> None:
        old = self.cpus[s.cpu]
        self._settle(old, now)
        old.util = max(0.0, old.util - s.util)
        old.runnable = max(0.0, old.runnable - s.runnable)
        s.cpu = -1

    def enqueue(self, cpu: int, tid: int, now: int) -> Signal:
        """enqueue_entity(): the task's averages brought up to now (decayed over a sleep),
        attached here if it comes from elsewhere (or is new), one more runnable task.  Returns
        the task's Signal (the engine keeps it on the Task: see enqueue_signal())."""
        return self.enqueue_signal(cpu, self.tasks.get(tid), tid, now)

    def enqueue_signal(self, cpu: int, s: Signal | None, tid: int, now: int) -> Signal:
        """enqueue() given the task's Signal (None before its first enqueue), as the engine
        keeps it on the Task: the same object as tasks[tid], found without the lookup."""
        if s is None:
            c = self.cpus[cpu]
            self._settle(c, now)
            init = max(0.0, SCHED_CAPACITY_SCALE - c.util) / 2  # post_init_entity_util_avg()
            s = self.tasks[tid] = Signal(now, init, init)
        self._settle(s, now)
        self._attach(s, cpu, now)
        s.nr = 1
        c = self.cpus[cpu]
        self._settle(c, now)
        c.nr += 1
        return s

    def dequeue(self, cpu: int, tid: int, now: int, gone: bool) -> None:
        """dequeue_entity(): one runnable task fewer; ``gone``: it sleeps or exits (not a
        migration, whose enqueue elsewhere moves its averages)."""
        self.dequeue_signal(cpu, self.tasks[tid], now, gone)

    def dequeue_signal(self, cpu: int, s: Signal, now: int, gone: bool) -> None:
        """dequeue() given the task's Signal (tasks[tid])."""
        self._settle(s, now)
        c = self.cpus[cpu]
        self._settle(c, now)
        c.nr -= 1
        if gone:
            s.nr = 0

    def exit(self, tid: int, now: int) -> None:
        """task_dead_fair() -> remove_entity_load_avg(): its averages leave its CPU's sums."""
        s = self.tasks.pop(tid)
        if s.cpu >= 0:
            self._detach(s, now)

    def run(self, cpu: int, tid: int, now: int, running: int) -> None:
        """set_next_entity() (running=1) / put_prev_entity() (0): cfs_rq->curr changes."""
        self.run_signal(cpu, self.tasks[tid], now, running)

    def run_signal(self, cpu: int, s: Signal, now: int, running: int) -> None:
        """run() given the task's Signal (tasks[tid]): the engine's call at every switch."""
        self._settle(s, now)
        s.running = running
        c = self.cpus[cpu]
        self._settle(c, now)
        c.running = running

    # ---------------------------------------------------------------- what the balancer reads
    def cpu_util(self, cpu: int, now: int) -> int:
        """cpu_util_cfs(): the CPU's util_avg, capped at its capacity."""
        c = self.cpus[cpu]
        self._settle(c, now)
        return min(SCHED_CAPACITY_SCALE, int(c.util))

    def cpu_runnable(self, cpu: int, now: int) -> int:
        """cpu_runnable(): the CPU's runnable_avg."""
        c = self.cpus[cpu]
        self._settle(c, now)
        return int(c.runnable)

    def task_util(self, tid: int, now: int) -> int:
        """task_util_est() without util_est: the task's util_avg."""
        s = self.tasks.get(tid)
        if s is None:
            return 0
        self._settle(s, now)
        return int(s.util)

    def _own(self, cpu: int, tid: int, now: int) -> Signal | None:
        s = self.tasks.get(tid)
        if s is None or s.cpu != cpu:
            return None
        self._settle(s, now)
        return s

    def cpu_util_without(self, cpu: int, tid: int, now: int) -> int:
        """cpu_util_without(): the CPU's utilisation less the task's, if attached here."""
        c = self.cpus[cpu]
        self._settle(c, now)
        s = self._own(cpu, tid, now)
        util = c.util - (s.util if s is not None else 0.0)
        return min(SCHED_CAPACITY_SCALE, max(0, int(util)))

    def cpu_runnable_without(self, cpu: int, tid: int, now: int) -> int:
        """cpu_runnable_without(): the CPU's runnable_avg less the task's, if attached here."""
        c = self.cpus[cpu]
        self._settle(c, now)
        s = self._own(cpu, tid, now)
        return max(0, int(c.runnable - (s.runnable if s is not None else 0.0)))

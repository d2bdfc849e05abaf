"""The simulated schedule as ftrace text (``run --trace FILE --trace-format ftrace``).

The same six events the harness records (sched_switch, sched_wakeup, sched_wakeup_new,
sched_process_fork, sched_process_exit, sched_migrate_task), each line prefixed like the
kernel's: ``comm-pid [cpu] flags secs.fraction: event: fields``. The fraction has nine digits
(nanoseconds, as ``trace-cmd report -t`` prints): the simulator's clock is in ns, and rounding
to microseconds would make the trace's per-task figures differ from the simulator's own.

Switches are stamped at the scheduling decision; the context-switch cost the engine charges
after it is on the incoming task's side of the line, as in a real kernel trace.
"""

from typing import TYPE_CHECKING

from .program import BLOCKED, DONE, RUNNING

if TYPE_CHECKING:  # annotations only (the engine is handed in by attach())
    from .engine import Engine

PRIO = 120
SIM_PID_BASE = 1000  # simulated tids start at 1; real-looking pids keep clear of init & co


def _state(task):
    if task.state == DONE:
        return "X"
    if task.state == BLOCKED:
        return "S"
    return "R"  # preempted or yielded: still runnable


class FtraceWriter:
    """Attached to an Engine as ``eng.ftrace``; the engine calls it where things happen."""

    def __init__(self, out, pid_base=SIM_PID_BASE):
        self.out = out
        self.pid_base = pid_base
        self.eng: Engine | None = None  # set by attach()
        self.lines = 0
        self.base_ns = 0  # repeats follow each other on one time axis, with new pids
        self.max_pid = 0

    def attach(self, eng: "Engine"):
        if self.eng is None:
            self.out.write("# tracer: nop\n#\n# written by the schedbench simulator\n")
        else:
            self.base_ns += self.eng.now + 1_000_000
            self.pid_base = self.max_pid + 1
        self.eng = eng

    def pid(self, task):
        pid = task.tid + self.pid_base
        if pid > self.max_pid:
            self.max_pid = pid
        return pid

    @staticmethod
    def comm(task):
        return task.name[:15] or "task"

    def _line(self, cpu_id, comm, pid, flags, event, body):
        assert self.eng is not None  # the engine calls the writer only once attached
        now = self.eng.now + self.base_ns
        self.lines += 1
        self.out.write(f"{comm:>16}-{pid:<7} [{cpu_id:03d}] {flags} "
                       f"{now // 1_000_000_000:5d}.{now % 1_000_000_000:09d}: {event}: {body}\n")

    def _current(self, cpu_id):
        assert self.eng is not None
        curr = self.eng.cpus[cpu_id].curr if cpu_id is not None else None
        if curr is None:
            return "<idle>", 0
        return self.comm(curr), self.pid(curr)

    def switch(self, cpu, prev, nxt):
        """prev: the task leaving (None: the CPU was idle); nxt: None when going idle."""
        if prev is None:
            pc, pp, ps = f"swapper/{cpu.id}", 0, "R"
        else:
            pc, pp, ps = self.comm(prev), self.pid(prev), _state(prev)
        if nxt is None:
            nc, np_ = f"swapper/{cpu.id}", 0
        else:
            nc, np_ = self.comm(nxt), self.pid(nxt)
        prefix = "<idle>" if prev is None else pc
        self._line(cpu.id, prefix, pp, "d..2.", "sched_switch",
                   f"prev_comm={pc} prev_pid={pp} prev_prio={PRIO} prev_state={ps} ==> "
                   f"next_comm={nc} next_pid={np_} next_prio={PRIO}")

    def wakeup(self, task, waker_cpu, new=False):
        """Logged on the waker's CPU (the target's when a timer woke it)."""
        where = waker_cpu if waker_cpu is not None else task.cpu
        comm, pid = self._current(where)
        self._line(where, comm, pid, "d..2.", "sched_wakeup_new" if new else "sched_wakeup",
                   f"comm={self.comm(task)} pid={self.pid(task)} prio={PRIO} "
                   f"target_cpu={task.cpu:03d}")

    def fork(self, cpu, parent, child):
        self._line(cpu.id, self.comm(parent), self.pid(parent), ".....", "sched_process_fork",
                   f"comm={self.comm(parent)} pid={self.pid(parent)} "
                   f"child_comm={self.comm(child)} child_pid={self.pid(child)}")

    def exit(self, cpu, task):
        self._line(cpu.id, self.comm(task), self.pid(task), ".....", "sched_process_exit",
                   f"comm={self.comm(task)} pid={self.pid(task)} prio={PRIO} group_dead=false")

    def migrate(self, task, orig, dest, on_cpu):
        comm, pid = self._current(on_cpu)
        self._line(on_cpu, comm, pid, "d..3.", "sched_migrate_task",
                   f"comm={self.comm(task)} pid={self.pid(task)} prio={PRIO} "
                   f"orig_cpu={orig} dest_cpu={dest}")


__all__ = ["FtraceWriter", "RUNNING"]

"""Task programs: compiled action lists and the synchronisation objects they act on.

A task is a small state machine: ``prog`` is a list of tuples ``(op, *args)`` and ``pc`` the index
of the current one.  Running actions (RUN, SPIN) occupy a CPU; every other action is instantaneous
and either continues, blocks the task, or ends it.  Programs are plain data so the engine can run
millions of actions without coroutine overhead.
"""

(RUN, SPIN, ADD, SET, WAIT, POST, LOCK, UNLOCK, SLEEP, TIMER, YIELD, FORK, EXIT, LOOP, MARK,
 BARRIER, WALL_RUN, WALL_END) = range(18)

OP_NAMES = ["run", "spin", "add", "set", "wait", "post", "lock", "unlock", "sleep", "timer",
            "yield", "fork", "exit", "loop", "mark", "barrier", "wall_run", "wall_end"]

QUEUED, RUNNING, BLOCKED, DONE = range(4)


class Counter:
    """A shared integer that tasks bump (ADD/SET) and busy-wait on (SPIN until value >= n)."""

    __slots__ = ("name", "value", "spinners")

    def __init__(self, name, value=0):
        self.name = name
        self.value = value
        self.spinners = []


class Semaphore:
    """Counting semaphore: WAIT blocks while zero (futex/pipe read), POST wakes one waiter."""

    __slots__ = ("name", "count", "waiters")

    def __init__(self, name, count=0):
        self.name = name
        self.count = count
        self.waiters = []


class Mutex:
    """A lock taken either by blocking (futex) or by spinning on sched_yield() (JVM style)."""

    __slots__ = ("name", "owner", "waiters", "spinners", "contended")

    def __init__(self, name):
        self.name = name
        self.owner = None
        self.waiters = []
        self.spinners = []
        self.contended = 0


class Barrier:
    __slots__ = ("name", "parties", "arrived", "waiters")

    def __init__(self, name, parties):
        self.name = name
        self.parties = parties
        self.arrived = 0
        self.waiters = []


class Task:
    """One schedulable entity.  Policy-specific fields live here too (slots keep it compact)."""

    __slots__ = (
        "tid", "name", "group", "prog", "pc", "loops", "remaining", "state", "cpu", "last_cpu",
        "last_ran", "exec_start", "sum_exec", "prev_sum_exec", "weight", "nice", "vruntime",
        "deadline", "slice_left", "prio", "level", "quota", "expired", "wait_start", "wait_sum",
        "timer_gen", "key", "affinity", "spin_on", "spin_yield", "spin_target",
        "parent", "joinsem", "data", "never_ran", "period", "release", "lock_mode",
        "yield_pending", "skip", "job_deadline", "spins_left", "wall_until",
    )

    def __init__(self, tid, name, prog, group="default", nice=0, affinity=None):
        self.tid = tid
        self.name = name
        self.group = group
        self.prog = prog
        self.pc = 0
        self.loops = None
        self.remaining = -1
        self.state = QUEUED
        self.cpu = None
        self.last_cpu = None
        self.last_ran = 0
        self.exec_start = 0
        self.sum_exec = 0
        self.prev_sum_exec = 0
        self.nice = nice
        self.weight = nice_to_weight(nice)
        self.vruntime = 0
        self.deadline = 0
        self.slice_left = 0
        self.prio = 120 + nice
        self.level = 0
        self.quota = 0
        self.expired = False
        self.wait_start = 0
        self.wait_sum = 0
        self.timer_gen = 0
        self.key = None
        self.affinity = affinity
        self.spin_on = None
        self.spin_yield = False
        self.spin_target = 0
        self.parent = None
        self.joinsem = None
        self.data = None
        self.never_ran = True
        self.period = 0
        self.release = 0
        self.lock_mode = None
        self.yield_pending = False
        self.skip = False
        self.job_deadline = 0
        self.spins_left = None  # sched_yield() calls a bounded yield-spinner may still make
        self.wall_until = None  # a wall-clock burn's end (the task polls the clock)

    def __repr__(self):
        return f"<Task {self.tid} {self.name}>"


# The kernel's prio_to_weight table for nice -20..19 (each step ~1.25x).
_WEIGHTS = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
    9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
    1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
    110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
]


def nice_to_weight(nice):
    return _WEIGHTS[max(-20, min(19, nice)) + 20]

"""The normalized event record every parser yields."""

SWITCH = "sched_switch"
WAKEUP = "sched_wakeup"
WAKEUP_NEW = "sched_wakeup_new"
WAKING = "sched_waking"
FORK = "sched_process_fork"
EXIT = "sched_process_exit"
MIGRATE = "sched_migrate_task"
LOST = "lost"  # a `CPU:N [LOST M EVENTS]` marker: `lost` = M, `ts` = the last timestamp seen

KINDS = (SWITCH, WAKEUP, WAKEUP_NEW, WAKING, FORK, EXIT, MIGRATE)
WAKE_KINDS = frozenset((WAKEUP, WAKEUP_NEW, WAKING))

_FIELDS = (
    "prev_pid", "prev_comm", "prev_prio", "prev_state",
    "next_pid", "next_comm", "next_prio",
    "target_pid", "target_comm", "target_prio", "target_cpu",
    "parent_pid", "parent_comm", "child_pid", "child_comm",
    "orig_cpu", "dest_cpu", "lost",
)


class Event:
    """One scheduler event. `ts` is in nanoseconds, `pid`/`comm` are the line's own prefix (the
    task that was running on `cpu` when the event was logged), `line` its 1-based input line.

    Kind-specific fields (None when not applicable):
    sched_switch: prev_pid, prev_comm, prev_prio, prev_state (e.g. "R", "R+", "S", "D", "X"),
    next_pid, next_comm, next_prio; sched_wakeup / sched_wakeup_new / sched_waking and
    sched_process_exit: target_pid, target_comm, target_prio (and target_cpu for wakeups);
    sched_process_fork: parent_pid, parent_comm, child_pid, child_comm; sched_migrate_task:
    target_pid, target_comm, target_prio, orig_cpu, dest_cpu; lost: lost (events dropped).
    """

    # No __slots__: the kind-specific fields default to None at class level, so an event only
    # stores the few it has (a switch 7, a wakeup 4), which keeps parsing cheap.
    ts = cpu = kind = pid = comm = line = None
    prev_pid = prev_comm = prev_prio = prev_state = None
    next_pid = next_comm = next_prio = None
    target_pid = target_comm = target_prio = target_cpu = None
    parent_pid = parent_comm = child_pid = child_comm = None
    orig_cpu = dest_cpu = lost = None

    def __init__(self, ts, cpu, kind, pid, comm, line, **fields):
        self.ts = ts
        self.cpu = cpu
        self.kind = kind
        self.pid = pid
        self.comm = comm
        self.line = line
        unknown = set(fields) - set(_FIELDS)
        if unknown:
            raise TypeError(f"unknown event fields: {sorted(unknown)}")
        self.__dict__.update(fields)

    @classmethod
    def make(cls, ts, cpu, kind, pid, comm, line, fields):
        """Parsers' constructor: `fields` are known to be valid names (no checks: hot path)."""
        event = cls.__new__(cls)
        fields["ts"], fields["cpu"], fields["kind"] = ts, cpu, kind
        fields["pid"], fields["comm"], fields["line"] = pid, comm, line
        event.__dict__ = fields  # the parser's fresh dict becomes the event's attributes
        return event

    def fields(self) -> dict:
        """The kind-specific fields that are set."""
        return {name: getattr(self, name) for name in _FIELDS if getattr(self, name) is not None}

    def __repr__(self):
        extra = " ".join(f"{k}={v!r}" for k, v in self.fields().items())
        return f"<Event {self.kind} ts={self.ts} cpu={self.cpu} {self.comm}-{self.pid} {extra}>"

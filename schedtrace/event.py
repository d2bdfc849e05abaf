"""The normalized event record every parser yields."""

from typing import Final

# Final: compiled, a constant is inlined rather than looked up in the module's dict per use

SWITCH: Final = "sched_switch"
WAKEUP: Final = "sched_wakeup"
WAKEUP_NEW: Final = "sched_wakeup_new"
WAKING: Final = "sched_waking"
FORK: Final = "sched_process_fork"
EXIT: Final = "sched_process_exit"
MIGRATE: Final = "sched_migrate_task"
# a `CPU:N [LOST M EVENTS]` marker: `lost` = M, `ts` = the last timestamp seen
LOST: Final = "lost"

KINDS = (SWITCH, WAKEUP, WAKEUP_NEW, WAKING, FORK, EXIT, MIGRATE)
WAKE_KINDS = frozenset((WAKEUP, WAKEUP_NEW, WAKING))

_FIELDS = (
    "prev_pid", "prev_comm", "prev_prio", "prev_state",
    "next_pid", "next_comm", "next_prio",
    "target_pid", "target_comm", "target_prio", "target_cpu",
    "parent_pid", "parent_comm", "child_pid", "child_comm",
    "orig_cpu", "dest_cpu", "lost",
)
_FIELD_SET = frozenset(_FIELDS)


class Event:
    """One scheduler event. `ts` is in nanoseconds, `pid`/`comm` are the line's own prefix (the
    task that was running on `cpu` when the event was logged), `line` its 1-based input line.

    Kind-specific fields (None when not applicable):
    sched_switch: prev_pid, prev_comm, prev_prio, prev_state (e.g. "R", "R+", "S", "D", "X"),
    next_pid, next_comm, next_prio; sched_wakeup / sched_wakeup_new / sched_waking and
    sched_process_exit: target_pid, target_comm, target_prio (and target_cpu for wakeups);
    sched_process_fork: parent_pid, parent_comm, child_pid, child_comm; sched_migrate_task:
    target_pid, target_comm, target_prio, orig_cpu, dest_cpu; lost: lost (events dropped).

    Typed attributes with class-level defaults: compiled (schedtrace/build.py) an event is a
    C struct, set field by field by the parsers; as pure Python the defaults live on the class.
    """

    prev_pid: int | None = None
    prev_comm: str | None = None
    prev_prio: int | None = None
    prev_state: str | None = None
    next_pid: int | None = None
    next_comm: str | None = None
    next_prio: int | None = None
    target_pid: int | None = None
    target_comm: str | None = None
    target_prio: int | None = None
    target_cpu: int | None = None
    parent_pid: int | None = None
    parent_comm: str | None = None
    child_pid: int | None = None
    child_comm: str | None = None
    orig_cpu: int | None = None
    dest_cpu: int | None = None
    lost: int | None = None

    def __init__(self, ts: int, cpu: int, kind: str, pid: int | None, comm: str | None,
                 line: int, **fields) -> None:
        self.ts = ts
        self.cpu = cpu
        self.kind = kind
        self.pid = pid
        self.comm = comm
        self.line = line
        if fields:
            unknown = set(fields) - _FIELD_SET
            if unknown:
                raise TypeError(f"unknown event fields: {sorted(unknown)}")
            for name, value in fields.items():
                setattr(self, name, value)

    @classmethod
    def make(cls, ts: int, cpu: int, kind: str, pid: int | None, comm: str | None, line: int,
             fields: dict) -> "Event":
        """Parsers' constructor: `fields` are known to be valid names (no checks)."""
        event = ParsedEvent(ts, cpu, kind, pid, comm, line)
        for name, value in fields.items():
            setattr(event, name, value)
        return event

    def fields(self) -> dict:
        """The kind-specific fields that are set."""
        return {name: getattr(self, name) for name in _FIELDS if getattr(self, name) is not None}

    def __repr__(self) -> str:
        extra = " ".join(f"{k}={v!r}" for k, v in self.fields().items())
        return f"<Event {self.kind} ts={self.ts} cpu={self.cpu} {self.comm}-{self.pid} {extra}>"


class ParsedEvent(Event):
    """An Event as the parsers' fast path builds it: a constructor without Event's `**fields`
    (compiled, that is a dict made and dropped per event); the same attributes and type
    checks (an Event in every way but this constructor)."""

    def __init__(self, ts: int, cpu: int, kind: str, pid: int | None, comm: str | None,
                 line: int) -> None:
        self.ts = ts
        self.cpu = cpu
        self.kind = kind
        self.pid = pid
        self.comm = comm
        self.line = line


# The pids below are typed `int | None` though never None: compiled, an int object passed on
# as it is (the fast path reuses one per pid: schedtrace.ftrace.Names), where an `int` would be
# unboxed and boxed (allocated, above 256) again for the Event's `int | None` field.


def switch_event(ts: int, cpu: int, pid: int | None, comm: str, line: int, prev_comm: str,
                 prev_pid: int | None, prev_prio: int, prev_state: str, next_comm: str,
                 next_pid: int | None, next_prio: int) -> Event:
    """A sched_switch, built without a fields dict (the parsers' fast path)."""
    event = ParsedEvent(ts, cpu, SWITCH, pid, comm, line)
    event.prev_pid = prev_pid
    event.prev_comm, event.prev_prio = prev_comm, prev_prio
    event.prev_state = prev_state
    event.next_comm, event.next_pid, event.next_prio = next_comm, next_pid, next_prio
    return event


def wake_event(ts: int, cpu: int, kind: str, pid: int | None, comm: str, line: int,
               target_comm: str, target_pid: int | None, target_prio: int,
               target_cpu: int | None) -> Event:
    """A sched_wakeup / _new / sched_waking, built without a fields dict."""
    event = ParsedEvent(ts, cpu, kind, pid, comm, line)
    event.target_comm, event.target_pid = target_comm, target_pid
    event.target_prio, event.target_cpu = target_prio, target_cpu
    return event


def migrate_event(ts: int, cpu: int, pid: int | None, comm: str, line: int, target_comm: str,
                  target_pid: int | None, target_prio: int, orig_cpu: int,
                  dest_cpu: int) -> Event:
    """A sched_migrate_task, built without a fields dict."""
    event = ParsedEvent(ts, cpu, MIGRATE, pid, comm, line)
    event.target_comm, event.target_pid, event.target_prio = target_comm, target_pid, target_prio
    event.orig_cpu, event.dest_cpu = orig_cpu, dest_cpu
    return event


def fork_event(ts: int, cpu: int, pid: int | None, comm: str, line: int, parent_comm: str,
               parent_pid: int | None, child_comm: str, child_pid: int | None) -> Event:
    """A sched_process_fork, built without a fields dict."""
    event = ParsedEvent(ts, cpu, FORK, pid, comm, line)
    event.parent_comm, event.parent_pid = parent_comm, parent_pid
    event.child_comm, event.child_pid = child_comm, child_pid
    return event

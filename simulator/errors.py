"""Exceptions raised by the simulator.

Every error the portal or the CLI can show to a user derives from SimulatorError, so callers need
one ``except`` clause.  Bad-input errors carry ``.field`` naming the offending spec field so a web
form can attach the message to the right input.
"""


class SimulatorError(Exception):
    """Base class for every error the simulator raises on purpose."""


class SpecError(SimulatorError):
    """The run spec is invalid; ``field`` names the spec field at fault (e.g. ``params.loops``)."""

    def __init__(self, field, message):
        super().__init__(message)
        self.field = field
        self.message = message


class UnknownNameError(SpecError):
    """An unknown workload, kernel, param or tunable name; the message lists the valid ones."""

    def __init__(self, field, kind, name, valid):
        valid_list = ", ".join(sorted(valid))
        super().__init__(field, f"unknown {kind} {name!r}; valid {kind}s: {valid_list}")
        self.valid = sorted(valid)


class InvalidValueError(SpecError):
    """A known field with a value out of range or of the wrong type."""


class EventBudgetExceeded(SimulatorError):
    """The run needed more events than ``max_events`` allows; raise the budget or shrink params."""

    def __init__(self, max_events, sim_time_ns):
        super().__init__(
            f"event budget exceeded: more than {max_events} events after "
            f"{sim_time_ns / 1e6:.3f} ms of simulated time; "
            "raise --max-events or reduce the workload"
        )
        self.max_events = max_events


class CpuBudgetExceeded(SimulatorError):
    """The run used more CPU time than ``max_cpu_seconds`` allows (a run the event budget alone
    would let go on for many minutes); raise the budget or shrink params."""

    def __init__(self, max_cpu_seconds, sim_time_ns):
        super().__init__(
            f"CPU-time budget exceeded: more than {max_cpu_seconds:g} s of CPU after "
            f"{sim_time_ns / 1e6:.3f} ms of simulated time; "
            "raise --max-cpu-seconds or reduce the workload"
        )
        self.max_cpu_seconds = max_cpu_seconds

"""The machine a simulation runs on: costs measured by ``schedbench.py calibrate`` on a real box.

``MachineModel.default()`` is an idealised bare-metal machine; ``from_calibration`` reads the
``calibration`` object of a calibrate JSON (unknown keys are ignored, missing ones keep the
default).  Every value comes from a micro-measurement, never from a benchmark result.
"""

import math
from dataclasses import dataclass, fields
from typing import Any

from .errors import InvalidValueError


@dataclass(frozen=True)
class MachineModel:
    loop_ns: float = 3.0  # one iteration of the benchmarks' counting loop
    thread_create_join_us: float = 25.0  # pthread_create + pthread_join of an empty thread
    wakeup_remote_us: float = 5.0  # futex/pipe wakeup of a thread pinned to another CPU
    wakeup_local_us: float = 1.5  # the same wakeup when both threads share a CPU
    context_switch_us: float = 2.0  # same-CPU switch between two threads
    virtualised: bool = False  # a guest: an idle vCPU is halted and the host must wake it
    idle_exit_us: float = 2.0  # leaving a shallow idle state
    ipi_us: float = 1.0  # the reschedule IPI reaching another CPU
    vcpu_wake_us: float = 0.0  # host work to wake a halted vCPU (virtualised only)
    contention: float = 0.0  # fractional slowdown of a busy CPU per other busy CPU (not SMT)

    @classmethod
    def default(cls):
        return cls()

    @classmethod
    def from_calibration(cls, data):
        """A model from the ``calibration`` dict of a calibrate JSON; InvalidValueError if bad."""
        if not isinstance(data, dict):
            raise InvalidValueError("machine", "machine calibration must be a JSON object")
        values: dict[str, Any] = {}  # each checked against its field's type below
        for f in fields(cls):
            if f.name not in data or data[f.name] is None:
                continue
            value = data[f.name]
            if f.type is bool or f.name == "virtualised":
                if not isinstance(value, bool):
                    raise InvalidValueError("machine", f"calibration {f.name} = {value!r} "
                                            "is not true/false")
                values[f.name] = value
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InvalidValueError("machine", f"calibration {f.name} = {value!r} is not "
                                        "a number")
            value = float(value)
            if not math.isfinite(value) or value < 0 or value > 1e7:
                raise InvalidValueError("machine", f"calibration {f.name} = {value!r} is out "
                                        "of range 0..1e7")
            values[f.name] = value
        if values.get("loop_ns", 1.0) <= 0:
            raise InvalidValueError("machine", "calibration loop_ns must be positive")
        return cls(**values)

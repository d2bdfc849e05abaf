"""The machine a simulation runs on: costs measured by ``schedbench.py calibrate`` on a real box.

``MachineModel.default()`` is an idealised bare-metal machine; ``from_calibration`` reads the
``calibration`` object of a calibrate JSON (unknown keys are ignored, missing ones keep the
default).  Every value comes from a micro-measurement, never from a benchmark result.

Two figures price a counting-loop iteration: ``loop_ns`` with the counter in a register (an
optimised build) and ``loop_memory_ns`` with it in memory (``volatile``, or a ``-O0`` build:
a load and a store every iteration).  A workload says which loop its counter uses (threadtest's
``counter`` param) and gets the matching figure.  A calibration that measured ``loop_ns`` but
not ``loop_memory_ns`` (written before the harness reported it) leaves ``loop_memory_ns``
unknown (None): a run that needs it is refused rather than fed the register figure.

``noisy`` is calibrate's own verdict: the machine was busy (other runnable tasks, steal time)
or the repeats of a figure spread widely while it measured.  The simulator runs with such a
calibration but carries the mark into every result (``machine.noisy``).
"""

import math
from dataclasses import dataclass, fields
from typing import Any

from .errors import InvalidValueError


@dataclass(frozen=True)
class MachineModel:
    loop_ns: float = 3.0  # one iteration of the counting loop, counter in a register
    loop_memory_ns: float | None = 3.0  # the same loop, counter in memory; None: not measured
    thread_create_join_us: float = 25.0  # pthread_create + pthread_join of an empty thread
    wakeup_remote_us: float = 5.0  # futex/pipe wakeup of a thread pinned to another CPU
    wakeup_local_us: float = 1.5  # the same wakeup when both threads share a CPU
    context_switch_us: float = 2.0  # same-CPU switch between two threads
    virtualised: bool = False  # a guest: an idle vCPU is halted and the host must wake it
    idle_exit_us: float = 2.0  # leaving a shallow idle state
    ipi_us: float = 1.0  # the reschedule IPI reaching another CPU
    vcpu_wake_us: float = 0.0  # host work to wake a halted vCPU (virtualised only)
    # The host's halt-polling window (virtualised only): KVM polls a halted vCPU this long
    # before scheduling its thread out (kvm.halt_poll_ns, KVM_HALT_POLL_NS_DEFAULT 200000 in
    # arch/x86/include/asm/kvm_host.h), so a vCPU woken sooner skips the host's wake.  The
    # guest cannot read the host's value: calibrate finds it from the step in wake latency
    # over a sweep of idle spans, and leaves it null (this default) when it finds no step
    halt_poll_us: float = 200.0
    contention: float = 0.0  # fractional slowdown of a busy CPU per other busy CPU (not SMT)
    # Load-to-use latency of one 64-byte line from the shared last-level cache, and from another
    # socket (7-cpu.com's Westmere-EP, Xeon X5650 at 2666 MHz: L3 42 cycles = 15.75 ns; RAM on
    # the other CPU 40 cycles + 105 ns = 120 ns).  calibrate does not measure them yet; a
    # calibration that carries them is read like any other figure.
    llc_hit_ns: float = 15.75
    remote_line_ns: float = 120.0
    noisy: bool = False  # calibrate found the machine busy or its figures spread widely

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
            if f.name in BOOL_FIELDS:
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
        for name in ("loop_ns", "loop_memory_ns"):
            if values.get(name, 1.0) <= 0:
                raise InvalidValueError("machine", f"calibration {name} must be positive")
        if "loop_ns" in values and "loop_memory_ns" not in values:
            values["loop_memory_ns"] = None  # measured one loop only: the other is unknown
        return cls(**values)

    def loop_figure(self, counter):
        """ns per iteration of a counting loop whose counter lives in ``counter``
        ("register" or "memory"); None when this calibration did not measure it."""
        return self.loop_memory_ns if counter == "memory" else self.loop_ns


BOOL_FIELDS = ("virtualised", "noisy")

"""Writes for machine calibrations (`schedbench.py calibrate` submissions). Keyword args only."""

from datetime import datetime

from django.core.exceptions import PermissionDenied
from django.db import transaction

from benchmarks.models import Machine, MachineCalibration
from benchmarks.selectors import may_calibrate
from benchmarks.services.catalog import machine_get_or_create


def calibration_create(
    *, machine: Machine, submitter, kernel: str, measured_at: datetime, values: dict,
    details: dict,
) -> MachineCalibration:
    """Store a calibration of `machine`; PermissionDenied when someone else's data is on it."""
    if not may_calibrate(submitter, machine):
        raise PermissionDenied(
            f"machine {machine.pk} ({machine.name}) holds other users' results; only they or "
            "staff can calibrate it")
    return MachineCalibration.objects.create(
        machine=machine, submitter=submitter, kernel=kernel, measured_at=measured_at,
        values=values, details=details)


def calibration_create_for_spec(
    *, machine_spec: dict, submitter, kernel: str, measured_at: datetime, values: dict,
    details: dict,
) -> MachineCalibration:
    """The harness knows a machine by its description: find or create it by fingerprint, as a
    run submission would, and calibrate it; all or nothing."""
    with transaction.atomic():
        machine = machine_get_or_create(spec=machine_spec)
        return calibration_create(machine=machine, submitter=submitter, kernel=kernel,
                                  measured_at=measured_at, values=values, details=details)

"""Writes for simulation jobs: create (expand + enqueue) and cancel. Keyword arguments only."""

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

import simulator
from benchmarks.models import Machine
from benchmarks.selectors import calibration_latest

from . import points, tasks
from .expansion import JobSpecError, Limits, MachineTarget, expand
from .models import ACTIVE, SimulationJob, SimulationPoint, Status


def job_limits() -> Limits:
    return Limits(max_points=settings.SIMULATION_MAX_POINTS,
                  max_events_per_run=settings.SIMULATION_MAX_EVENTS_PER_RUN,
                  max_events=settings.SIMULATION_MAX_EVENTS)


def _existing_runs(hashes: list[str]) -> dict[str, int]:
    """Runs already simulated from an identical point spec (same simulator version and seed)."""
    found = {}
    for start in range(0, len(hashes), 500):
        rows = SimulationPoint.objects.filter(
            spec_hash__in=hashes[start:start + 500], run__isnull=False,
        ).values_list("spec_hash", "run_id")
        for digest, run_id in rows:
            found.setdefault(digest, run_id)
    return found


def machine_target(value) -> MachineTarget | None:
    """The `machine` of a job spec (a machine id) with its newest calibration, or None."""
    if value in (None, ""):
        return None
    if isinstance(value, bool) or not str(value).strip().isdigit():
        raise JobSpecError("machine", f"machine must be a machine id, not {value!r}")
    machine = Machine.objects.filter(pk=int(str(value).strip())).first()
    if machine is None:
        raise JobSpecError("machine", f"no machine {value}")
    calibration = calibration_latest(machine)
    if calibration is None:
        raise JobSpecError("machine", f"machine {machine.name} has no calibration: run "
                           "`schedbench.py calibrate` on it first")
    if not machine.topology:
        raise JobSpecError("machine", f"machine {machine.name} has no recorded topology "
                           "(sockets, cores, threads)")
    return MachineTarget(id=machine.pk, name=machine.name, topology=machine.topology,
                         calibration_id=calibration.pk, calibration=calibration.values)


def simulation_create(*, spec, owner) -> SimulationJob:
    """Expand `spec` into points, re-use identical earlier runs, queue the rest after commit.

    Raises expansion.JobSpecError (with `.field`) for a spec the simulator rejects or one over
    the point or event limit.
    """
    machine = machine_target(spec.get("machine")) if isinstance(spec, dict) else None
    expansion = expand(spec, job_limits(), machine)
    now = timezone.now()
    reuse = _existing_runs([p.spec_hash for p in expansion.points])
    with transaction.atomic():
        job = SimulationJob.objects.create(
            owner=owner, spec=expansion.spec, spec_hash=expansion.spec_hash,
            simulator_version=simulator.__version__, total=len(expansion.points))
        rows = SimulationPoint.objects.bulk_create(
            SimulationPoint(
                job=job, index=index, kernel=p.kernel, values=p.values, seed=p.seed,
                spec=p.spec, spec_hash=p.spec_hash, sent=now,
                **({"status": Status.SUCCEEDED, "run_id": reuse[p.spec_hash], "reused": True,
                    "finished": now} if p.spec_hash in reuse else {}))
            for index, p in enumerate(expansion.points))
        pending = [row.pk for row in rows if row.status == Status.QUEUED]
        if pending:
            transaction.on_commit(lambda: tasks.points_send(pending))
    if not pending:
        points.job_refresh(job_id=job.pk)  # every point re-used: finish (and compare) now
    job.refresh_from_db()
    return job


def simulation_cancel(*, job: SimulationJob, user) -> SimulationJob:
    """Stop a job: pending and running points become cancelled; finished runs are kept."""
    if not (user.is_authenticated and (user.pk == job.owner_id or user.is_staff)):
        raise PermissionDenied("only the owner of a simulation or staff can cancel it")
    now = timezone.now()
    with transaction.atomic():
        stopped = SimulationJob.objects.filter(pk=job.pk, status__in=ACTIVE).update(
            status=Status.CANCELLED, finished=now, error=f"cancelled by {user.get_username()}")
        if stopped:
            # A running point sees this through its heartbeat and stops between repeats.
            SimulationPoint.objects.filter(job=job, status__in=ACTIVE).update(
                status=Status.CANCELLED, finished=now, heartbeat=None)
    points.job_refresh(job_id=job.pk)
    job.refresh_from_db()
    return job

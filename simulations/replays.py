"""Replay jobs: a recorded trace re-run by the simulator on chosen kernel profiles.

A replay job is a SimulationJob whose spec has `"workload": "replay"` and whose points (one per
kernel) carry `"mode": "replay"`. A point stores no Run (a replay has no benchmark metrics the
portal's catalog knows); its `result` holds the simulated and the real makespan and waits.
"""

from django.db import transaction
from django.utils import timezone

import simulator
from benchmarks.errors import InputError

from . import tasks
from .expansion import canonical_hash
from .models import SimulationJob, SimulationPoint
from .replay_points import REPLAY
from .services import machine_target

MAX_KERNELS = 12
MAX_REPLAY_CPUS = 256


def _kernels(kernels) -> list[str]:
    profiles = list(simulator.catalog()["kernels"])
    if not isinstance(kernels, list) or not kernels or not all(
            isinstance(k, str) for k in kernels):
        raise InputError("kernels must be a non-empty list of kernel profiles; profiles: "
                         f"{', '.join(profiles)}", field="kernels")
    kernels = list(dict.fromkeys(kernels))
    if len(kernels) > MAX_KERNELS:
        raise InputError(f"at most {MAX_KERNELS} kernels per replay", field="kernels")
    unknown = [k for k in kernels if k not in profiles]
    if unknown:
        raise InputError(f"unknown kernel profile {unknown[0]!r}; profiles: "
                         f"{', '.join(profiles)}", field="kernels")
    return kernels


def _placement(trace, machine) -> dict:
    """Where to replay: the machine's topology and calibration, else the trace's CPU count."""
    target = machine_target(machine)
    if target is None:
        return {"cpus": max(1, min(trace.cpus, MAX_REPLAY_CPUS))}
    return {"topology": target.topology,
            "machine": {"id": target.id, "name": target.name,
                        "calibration_id": target.calibration_id,
                        "calibration": dict(target.calibration)}}


def replay_job_create(*, trace, kernels, machine=None, user) -> SimulationJob:
    """A job replaying `trace` on each of `kernels` (optionally on a calibrated machine).
    InputError (field kernels or machine) for bad choices."""
    if not (user and user.is_authenticated):
        raise InputError("log in to launch a replay", status=403)
    kernels = _kernels(kernels)
    place = _placement(trace, machine)
    spec = {"workload": REPLAY, "trace": {"id": trace.pk, "title": trace.title},
            "kernels": kernels, "sweep": {}, "axes": [], "repeat": 1, "seed": 1,
            "title": f"replay of trace #{trace.pk}"[:200], **place}
    now = timezone.now()
    with transaction.atomic():
        job = SimulationJob.objects.create(
            owner=user, spec=spec, spec_hash=canonical_hash(spec),
            simulator_version=simulator.__version__, total=len(kernels))
        rows = SimulationPoint.objects.bulk_create(_point(job, index, kernel, place, now)
                                                   for index, kernel in enumerate(kernels))
        pending = [row.pk for row in rows]
        transaction.on_commit(lambda: tasks.points_send(pending))
    return job


def _point(job, index, kernel, place, now) -> SimulationPoint:
    spec = {"mode": REPLAY, "trace": job.spec["trace"]["id"], "kernel": kernel, "seed": 1}
    if "machine" in place:
        spec.update(topology=place["topology"], machine=place["machine"]["calibration"])
    else:
        spec["cpus"] = place["cpus"]
    # Never re-used across jobs (no run is stored), so the job id is part of the identity.
    digest = canonical_hash({"job": job.pk, "spec": spec})
    return SimulationPoint(job=job, index=index, kernel=kernel, values={}, seed=1, spec=spec,
                           spec_hash=digest, sent=now)

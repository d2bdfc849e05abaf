"""Reads for simulation jobs: the API/page JSON, the point list, the live chart."""

import logging

from benchmarks.comparisons.compute import compute
from benchmarks.comparisons.spec import SpecError, parse_spec
from benchmarks.models import Run

from .comparison import MAX_COMPARED_RUNS, comparison_spec
from .models import SimulationJob, SimulationPoint, Status

log = logging.getLogger(__name__)


def job_by_pk_text(target_id: str) -> SimulationJob | None:
    return SimulationJob.objects.filter(pk=int(target_id)).first() if target_id.isdigit() else None


def job_for_run(run: Run) -> dict | None:
    """{"id", "url"} of the job whose point produced `run`; no query for other sources."""
    if run.source != "simulator":
        return None
    job_id = (SimulationPoint.objects.filter(run_id=run.pk, reused=False).order_by("id")
              .values_list("job_id", flat=True).first())
    if job_id is None:
        return None
    return {"id": job_id, "url": f"/api/v1/simulations/{job_id}/",
            "page": f"/simulations/{job_id}/"}


def job_run_ids(job: SimulationJob) -> list[int]:
    return list(dict.fromkeys(
        job.points.filter(status=Status.SUCCEEDED, run__isnull=False).order_by("index")
        .values_list("run_id", flat=True)))


def point_json(point: SimulationPoint) -> dict:
    return {"index": point.index, "kernel": point.kernel, "values": point.values,
            "seed": point.seed, "status": point.status, "error": point.error or None,
            "attempts": point.attempts, "reused": point.reused, "run": point.run_id,
            "wall_seconds": point.wall_seconds, "events": point.events}


def job_json(job: SimulationJob, *, with_points: bool = False) -> dict:
    data = {
        "id": job.pk, "url": f"/api/v1/simulations/{job.pk}/", "page": job.get_absolute_url(),
        "status": job.status, "progress": {"done": job.done, "total": job.total},
        "failed": job.failed, "runs": job_run_ids(job),
        "comparison": job.comparison.slug if job.comparison_id else None,
        "error": job.error or None, "spec": job.spec, "owner": job.owner.get_username(),
        "simulator_version": job.simulator_version, "events": job.events,
        "created": job.created.isoformat(),
        "started": job.started.isoformat() if job.started else None,
        "finished": job.finished.isoformat() if job.finished else None,
    }
    if with_points:
        data["points"] = [point_json(p) for p in job.points.order_by("index")]
    return data


def job_figure(job: SimulationJob, run_ids: list[int]) -> dict | None:
    """The chart of the results so far, drawn like the comparison the job will end with."""
    if not run_ids or len(run_ids) > MAX_COMPARED_RUNS:
        return None
    try:
        return compute(parse_spec(comparison_spec(job, run_ids)))["figure"]
    except SpecError as exc:
        log.info("simulation %s: no chart yet: %s", job.pk, exc)
        return None


def jobs_listed():
    return SimulationJob.objects.select_related("owner", "comparison").order_by("-created", "-id")

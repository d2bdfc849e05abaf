"""Traces and simulated points: the ftrace text of a simulated run (opt-in per job with
`"trace": true`), and the replay of a stored trace for a replay point."""

import logging
import tempfile

from django.conf import settings

import simulator
from benchmarks.errors import InputError
from simulator.replay import replay
from traces.models import Trace
from traces.services import trace_ingest

from .models import SimulationPoint

log = logging.getLogger(__name__)


def point_replay(point) -> dict:
    """simulator.replay on the raw file the traces app kept for the point's trace."""
    trace = Trace.objects.select_related("artifact").filter(pk=point.spec["trace"]).first()
    if trace is None:
        raise simulator.SimulatorError(f"trace {point.spec['trace']} was deleted")
    spec = point.spec
    return replay(trace.artifact.file.path, spec["kernel"], cpus=spec.get("cpus"),
                  topology=spec.get("topology"), machine=spec.get("machine"),
                  seed=spec.get("seed", 1))


def _events_per_repeat(result: dict) -> float:
    repeats = max(1, len(next(iter(result["metrics"].values()), [None])))
    return result["counters"].get("events", 0) / repeats


def point_trace_attach(*, point_id: int, result: dict) -> Trace | None:
    """Simulate the point's first repeat again with the ftrace writer on (same seed, so the
    same schedule) and ingest it as a trace of the point's run. Skipped above the size cap and
    when the run has a trace already (a re-delivered task); a failure here is logged, never
    fails the stored point."""
    if _events_per_repeat(result) > settings.SIMULATION_TRACE_MAX_EVENTS:
        return None
    point = SimulationPoint.objects.select_related("job__owner").filter(pk=point_id).first()
    if point is None or point.run_id is None or Trace.objects.filter(run_id=point.run_id).exists():
        return None
    try:
        with tempfile.TemporaryFile("w+b") as raw:
            with tempfile.TemporaryFile("w+", encoding="utf-8") as text:
                simulator.run({**point.spec, "repeat": 1}, trace=text, trace_format="ftrace")
                text.seek(0)
                for chunk in iter(lambda: text.read(1 << 20), ""):
                    raw.write(chunk.encode())
            size = raw.tell()
            raw.seek(0)
            return trace_ingest(
                stream=raw, filename=f"simulation-{point.job_id}-{point.index}.trace",
                owner=point.job.owner, run_id=point.run_id, format="ftrace", size=size,
                title=f"simulated: {point.label} (job {point.job_id}, repeat 1)")
    except (InputError, simulator.SimulatorError):
        log.exception("simulation point %s: no trace", point_id)
        return None

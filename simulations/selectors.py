"""Reads for simulation jobs: the API/page JSON, the point list, the live chart."""

from benchmarks.analysis.charts import LEGEND_ON_TOP, PALETTE, base_layout
from benchmarks.analysis.charts import axis as chart_axis
from benchmarks.models import MetricSummary, Run

from .expansion import sweep_axes
from .models import SimulationJob, SimulationPoint, Status
from .replay_points import is_replay, replay_figure
from .runs import simulator_catalog


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
            "wall_seconds": point.wall_seconds, "events": point.events,
            **({"result": point.result} if point.result else {})}


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


def job_figure(job: SimulationJob) -> dict | None:
    """The live chart, styled as the site's others: the median of the workload's first metric
    per finished point, one line per kernel over the first sweep axis. Two queries, so polling
    it every second is cheap; the job's frozen comparison has the full statistics. A replay
    job's chart is its real-vs-simulated bars (replay_points.py)."""
    if is_replay(job.spec):
        return replay_figure(job)
    metrics = simulator_catalog()["workloads"][job.spec["workload"]]["metrics"]
    metric = next(iter(metrics))
    done = list(job.points.filter(status=Status.SUCCEEDED, run__isnull=False)
                .order_by("index").values_list("kernel", "values", "run_id"))
    if not done:
        return None
    medians = dict(MetricSummary.objects.filter(
        run_id__in={run for *_, run in done}, metric__name=metric).values_list("run_id", "median"))
    axes = sweep_axes(job.spec)
    axis, other = (axes + [None, None])[:2]
    traces = {}  # a line per kernel, and per value of a second sweep axis if there is one
    for kernel, values, run_id in done:
        name = f"{kernel} · {other}={values.get(other)}" if other else kernel
        trace = traces.setdefault(name, {"type": "scatter", "mode": "lines+markers",
                                         "name": name, "x": [], "y": [], "kernel": kernel})
        trace["x"].append(values.get(axis) if axis else kernel)
        trace["y"].append(medians.get(run_id))
    order = {kernel: n for n, kernel in enumerate(job.spec["kernels"])}
    for trace in traces.values():
        trace["meta"] = trace.pop("kernel")
    unit = metrics[metric].get("unit") or ""
    data = sorted(traces.values(), key=lambda t: order.get(t["meta"], 0))
    for number, trace in enumerate(data):  # the site's palette and look, not Plotly's defaults
        color = PALETTE[number % len(PALETTE)]
        trace.update({"line": {"color": color, "width": 1.5}, "marker": {"color": color,
                                                                       "size": 7}})
    y_title = f"{metric} ({unit}), median" if unit else f"{metric}, median"
    layout = {**base_layout(f"{job.spec['workload']}: {y_title}"),
              "xaxis": chart_axis(axis_name := (axis or "kernel"),
                            **({"type": "category"} if axis_name == "kernel" else {})),
              "yaxis": chart_axis(y_title),
              "legend": {**LEGEND_ON_TOP, "title": {"text": "kernel"}}}
    return {"data": data, "layout": layout}


def jobs_listed():
    return SimulationJob.objects.select_related("owner", "comparison").order_by("-created", "-id")

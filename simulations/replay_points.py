"""Replay points' results: what a point keeps, the job's table and chart (see replays.py).

Imported by tasks.py and selectors.py; it imports neither, so the package has no cycle.
"""

from benchmarks.analysis.charts import LEGEND_ON_TOP, PALETTE, base_layout
from benchmarks.analysis.charts import axis as chart_axis
from traces.models import Trace

from .models import SimulationJob, Status

REPLAY = "replay"
TASKS_KEPT = 100  # per point, for API readers; the aggregates cover every task


def is_replay(spec: dict) -> bool:
    return (spec or {}).get("workload") == REPLAY or (spec or {}).get("mode") == REPLAY


def _waits(rows: list[dict]) -> dict:
    count = len(rows)
    total = sum(r["wait_sum_ms"] for r in rows)
    return {"tasks": count, "wait_sum_ms": round(total, 6),
            "wait_avg_ms": round(total / count, 6) if count else 0.0,
            "wait_max_ms": round(max((r["wait_max_ms"] for r in rows), default=0.0), 6)}


def replay_summary(result: dict) -> dict:
    """What a replay point keeps: makespans and wait aggregates, simulated and real."""
    return {"kernel": result["kernel"], "topology": result["topology"],
            "makespan_ms": result["makespan_ms"], **_waits(result["tasks"]),
            "task_rows": result["tasks"][:TASKS_KEPT],
            "real": {"makespan_ms": result["real"]["makespan_ms"],
                     **_waits(result["real"]["tasks"])}}


def replay_trace_warnings(job: SimulationJob) -> list[str]:
    """What the replayed trace's parser warned of (lost events, a truncated end): the recorded
    row comes from that trace, so its page says so too. [] when the trace is gone."""
    warnings = (Trace.objects.filter(pk=(job.spec.get("trace") or {}).get("id"))
                .values_list("warnings", flat=True).first())
    return list(warnings or [])


def replay_rows(job: SimulationJob) -> list[dict]:
    """The table: the real trace first, then one row per finished kernel."""
    done = list(job.points.filter(status=Status.SUCCEEDED).order_by("index")
                .values_list("kernel", "result"))
    done = [(kernel, result) for kernel, result in done if result]
    if not done:
        return []
    keys = ("makespan_ms", "tasks", "wait_sum_ms", "wait_avg_ms", "wait_max_ms")
    rows = [{"label": "real (recorded)", "real": True,
             **{k: done[0][1]["real"].get(k) for k in keys}}]
    rows += [{"label": kernel, "real": False, **{k: result.get(k) for k in keys}}
             for kernel, result in done]
    return rows


def replay_figure(job: SimulationJob) -> dict | None:
    """Bars: makespan and mean wait per task, the real trace beside each kernel."""
    rows = replay_rows(job)
    if not rows:
        return None
    labels = [row["label"] for row in rows]
    data = [{"type": "bar", "name": name, "x": labels, "y": [row[key] for row in rows],
             "marker": {"color": PALETTE[number % len(PALETTE)]}}
            for number, (key, name) in enumerate((("makespan_ms", "makespan (ms)"),
                                                  ("wait_avg_ms", "wait per task (ms)")))]
    layout = {**base_layout(f"replay of trace #{job.spec['trace']['id']}: real vs simulated"),
              "barmode": "group", "xaxis": chart_axis("kernel", type="category"),
              "yaxis": chart_axis("ms"), "legend": {**LEGEND_ON_TOP}}
    return {"data": data, "layout": layout}

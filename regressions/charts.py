"""The small chart of a finding's series: median per kernel with min-max bars, the change
marked by a shaded band between the good and the bad kernel (a Plotly figure dict)."""

from benchmarks.models import MetricSummary

from .models import Regression
from .series import SeriesId, is_between_releases, series_runs

GOOD, BAD = "#2b8a3e", "#c92a2a"


def series_points(regression: Regression) -> list[dict]:
    """Per kernel in natural order: version, median of all values, min, max (one query)."""
    series = SeriesId.of(benchmark_id=regression.benchmark_id,
                         machine_id=regression.machine_id, metric_id=regression.metric_id,
                         policy=regression.policy, params=regression.params,
                         tunables=regression.tunables)
    rows = (MetricSummary.objects.filter(metric_id=regression.metric_id,
                                         run__in=series_runs(series))
            .order_by("run__kernel__sort_key", "run__kernel__version")
            .values_list("run__kernel__version", "median", "minimum", "maximum", "n"))
    points: dict[str, dict] = {}
    for version, median, low, high, n in rows:
        if is_between_releases(version):  # a bisection's commit: not in release order
            continue
        point = points.setdefault(version, {"kernel": version, "medians": [], "min": low,
                                            "max": high, "n": 0})
        point["medians"].append(median)
        point["min"], point["max"] = min(point["min"], low), max(point["max"], high)
        point["n"] += n
    for point in points.values():
        ordered = sorted(point.pop("medians"))
        point["median"] = ordered[len(ordered) // 2]
    return list(points.values())


def series_figure(regression: Regression, *, height: int = 220) -> dict:
    points = series_points(regression)
    kernels = [p["kernel"] for p in points]
    medians = [p["median"] for p in points]
    colors = [GOOD if k == regression.good.version else BAD if k == regression.bad.version
              else "#1c7ed6" for k in kernels]
    trace = {
        "type": "scatter", "mode": "lines+markers", "x": kernels, "y": medians,
        "name": regression.metric.name, "marker": {"color": colors, "size": 8},
        "error_y": {"type": "data", "symmetric": False,
                    "array": [p["max"] - p["median"] for p in points],
                    "arrayminus": [p["median"] - p["min"] for p in points]},
        "customdata": [p["n"] for p in points],
        "hovertemplate": "%{x}: %{y} (n=%{customdata})<extra></extra>",
    }
    shapes = []
    if regression.good.version in kernels and regression.bad.version in kernels:
        shapes.append({"type": "rect", "xref": "x", "yref": "paper",
                       "x0": kernels.index(regression.good.version),
                       "x1": kernels.index(regression.bad.version), "y0": 0, "y1": 1,
                       "fillcolor": BAD if regression.kind == "regression" else GOOD,
                       "opacity": 0.15, "line": {"width": 0}})
    unit = regression.metric.unit
    return {"data": [trace], "layout": {
        "height": height, "margin": {"l": 50, "r": 10, "t": 10, "b": 60},
        "xaxis": {"type": "category", "categoryorder": "array", "categoryarray": kernels},
        "yaxis": {"title": {"text": f"{regression.metric.name}" + (f" ({unit})" if unit
                                                                     else "")}},
        "shapes": shapes, "showlegend": False}}


def runs_comparison_spec(*, title: str, run_ids, metric: str, baseline: str,
                         x: str = "kernel") -> dict:
    """A comparison of `run_ids`: `x` (kernels, or an mmtests table's labels) on x, `baseline`
    (a value of x) as the baseline, the statistic and spread verdicts are read with."""
    return {
        "title": title[:200], "runs": sorted(set(run_ids)), "metric": metric, "x": x,
        "statistic": "median", "error": "minmax", "chart": "line",
        "baseline": {"dim": x, "value": baseline},
    }


def comparison_spec(regression: Regression) -> dict:
    """The comparison of the finding's runs: kernels on x, the good kernel as baseline."""
    return runs_comparison_spec(
        title=f"{regression}",
        run_ids={run.pk for run in regression.runs_good.all()}
        | {run.pk for run in regression.runs_bad.all()},
        metric=regression.metric.name, baseline=regression.good.version)

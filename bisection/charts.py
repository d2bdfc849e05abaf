"""The session's chart: every step's samples between the good and bad sides' bands."""

from benchmarks.analysis.charts import axis, base_layout

from .selectors import BisectionState, SideState

COLORS = {"good": "#2a9d8f", "bad": "#d1495b", "unknown": "#6b7280"}


def _band(side: SideState) -> dict | None:
    if not side.values.size:
        return None
    return {"type": "rect", "xref": "paper", "x0": 0, "x1": 1, "yref": "y",
            "y0": float(side.values.min()), "y1": float(side.values.max()),
            "fillcolor": COLORS[side.name], "opacity": 0.15, "line": {"width": 0},
            "layer": "below"}


def _points(label: str, name: str, values, color: str, runs: str) -> dict:
    return {"type": "scatter", "mode": "markers", "name": name, "x": [label] * len(values),
            "y": [float(v) for v in values], "marker": {"color": color, "size": 8},
            "hovertemplate": f"%{{y}}<br>{runs}<extra>{name}</extra>"}


def bisection_figure(state: BisectionState) -> dict:
    """x: the good end, the steps in the order tested, the bad end; y: every sample."""
    bisection = state.bisection
    metric = bisection.metric
    title = f"{bisection.benchmark.slug if bisection.benchmark else 'bisection'}: " + (
        f"{metric.name}" if metric else "no runs yet")
    data = []
    for side in (state.good, state.bad):
        label = f"{side.name}: {side.kernel}"
        runs = ", ".join(f"#{r.pk}" for r in side.runs[:20])
        data.append(_points(label, f"{side.name} ({side.kernel})", side.values,
                            COLORS[side.name], f"runs {runs}"))
    for step in state.steps:
        label = f"{step.step.position}: {step.step.commit[:12]}"
        runs = ", ".join(f"#{r.pk}" for r in step.runs[:20])
        data.append(_points(label, f"step {step.step.position} {step.verdict.verdict}",
                            step.values, COLORS[step.verdict.verdict], f"runs {runs}"))
    # Steps between the ends, in the order tested.
    order = [data[0]["x"][0] if data[0]["x"] else f"good: {state.good.kernel}",
             *(f"{s.step.position}: {s.step.commit[:12]}" for s in state.steps),
             f"bad: {state.bad.kernel}"]
    layout = {**base_layout(title), "showlegend": False,
              "xaxis": axis("", type="category", categoryorder="array", categoryarray=order),
              "yaxis": axis(f"{metric.name} ({metric.unit})" if metric and metric.unit
                            else (metric.name if metric else "")),
              "shapes": [band for band in (_band(state.good), _band(state.bad)) if band]}
    return {"data": data, "layout": layout}

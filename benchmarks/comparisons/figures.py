"""Plotly figure dicts for comparisons: line, grouped bars, box/strip, heatmap, table."""

from collections import defaultdict

from benchmarks.analysis.charts import PALETTE, axis, base_layout
from benchmarks.comparisons.spec import ComparisonSpec

NORMALIZED = "normalized to baseline"
LEGEND_LIMIT = 40
# Past this many lines, SVG (one path and a marker group per trace) makes the first draw take
# seconds; WebGL draws them all in one canvas. Few lines stay SVG: crisper, and no GL context.
WEBGL_TRACES = 40


def _y(row: dict, baseline: bool) -> float | None:
    return row["normalized"] if baseline else row["value"]


def _error_bars(spec: ComparisonSpec, rows: list[dict], scales: list[float],
                floor: float | None) -> dict | None:
    """Plotly error bars, the lower one never reaching below `floor` (0 for a metric whose
    every sample is >= 0: a time or a count cannot be negative, so a bar there would lie)."""
    if spec.error == "none":
        return None
    pairs = list(zip(rows, scales, strict=True))
    if spec.error == "stdev":
        highs = [(r["stdev"] or 0) * s for r, s in pairs]
        lows = list(highs)
    elif spec.error == "ci95":
        lows = [(r["value"] - r["ci95"][0]) * s if r["ci95"] else 0 for r, s in pairs]
        highs = [(r["ci95"][1] - r["value"]) * s if r["ci95"] else 0 for r, s in pairs]
    else:  # a published summary may give no min or max: no bar, rather than a made-up one
        lows = [(r["value"] - r["min"]) * s if r["min"] is not None else 0 for r, s in pairs]
        highs = [(r["max"] - r["value"]) * s if r["max"] is not None else 0 for r, s in pairs]
    clipped = [False] * len(rows)
    if floor is not None:
        plotted = [_y(r, spec.baseline is not None) for r, _ in pairs]
        for i, (low, y) in enumerate(zip(lows, plotted, strict=True)):
            if y is not None and y - low < floor:
                lows[i], clipped[i] = max(y - floor, 0.0), True
    return {"type": "data", "symmetric": False, "array": highs, "arrayminus": lows,
            "visible": True, "clipped": clipped}


def _scales(rows: list[dict], baseline: bool) -> list[float]:
    """Error bars follow the plotted value: divided by the baseline value when normalised."""
    if not baseline:
        return [1.0] * len(rows)
    return [(r["normalized"] / r["value"]) if r["normalized"] and r["value"] else 0.0
            for r in rows]


def _groups(axes: dict, rows: list[dict]) -> list[tuple[str | None, str | None, list[dict]]]:
    """(facet, series, rows) in axis order; one pass over the rows (200 series x 1,000 cells
    scanned once per series was most of a large figure's time)."""
    facets = axes.get("facet", {}).get("values", [None])
    series = axes.get("series", {}).get("values", [None])
    members = defaultdict(list)
    for row in rows:
        members[(row["facet"], row["series"])].append(row)
    return [(facet, name, members[(facet, name)]) for facet in facets for name in series
            if members.get((facet, name))]


def _x_value(axes: dict, row: dict):
    return float(row["x"]) if axes["x"]["numeric"] else row["x"]


def _hover_number(value):
    """Hover text shows 4 significant digits: 6 are plenty and keep the page small (the exact
    numbers are in the cells and the exports)."""
    return value if value is None else float(f"{value:.6g}")


def _placement(facet_index: int, name, show_legend: bool, legend: bool) -> dict:
    """Axes and legend keys only where they are not Plotly's defaults."""
    placed = {}
    if facet_index:
        placed = {"xaxis": f"x{facet_index + 1}", "yaxis": f"y{facet_index + 1}"}
    if legend:
        placed.update({"legendgroup": str(name), "showlegend": show_legend})
    return placed


def _trace(spec, axes, facet_index, name, members, color, show_legend, baseline, floor,
           legend=True):
    bars = _error_bars(spec, members, _scales(members, baseline), floor)
    clipped = bars.pop("clipped") if bars else [False] * len(members)
    # The cut-bar note costs a column only in a trace that has one.
    note = ["<br>error bar cut at 0 (the metric cannot be negative)" if cut else ""
            for cut in clipped] if any(clipped) else None
    trace = {
        "name": name if name is not None else spec.x,
        **_placement(facet_index, name, show_legend, legend), "marker": {"color": color},
        "x": [_x_value(axes, r) for r in members],
        "y": [_y(r, baseline) for r in members],
        "customdata": [[r["n"], *map(_hover_number, (r["median"], r["mean"], r["stdev"])),
                        *([note[i]] if note else [])] for i, r in enumerate(members)],
        "hovertemplate": "%{x}<br>%{y:.4g}<br>n=%{customdata[0]} median=%{customdata[1]:.4g} "
                         "mean=%{customdata[2]:.4g} sd=%{customdata[3]:.3g}"
                         f"{'%{customdata[4]}' if note else ''}<extra>%{{fullData.name}}</extra>",
    }
    if bars:
        trace["error_y"] = {**bars, "color": color, "thickness": 1.2}
    if spec.chart == "bar":
        trace["type"] = "bar"
    else:
        trace.update({"type": "scatter", "mode": "lines+markers", "line": {"color": color}})
    return trace


def _box_trace(spec, axes, facet_index, name, members, color, show_legend, cells_by_key,
               legend=True):
    xs, ys = [], []
    for row in members:
        values = cells_by_key[(row["x"], row["series"], row["facet"])]
        xs.extend([_x_value(axes, row)] * len(values))
        ys.extend(float(v) for v in values)
    return {"type": "box", "name": name if name is not None else spec.x, "x": xs, "y": ys,
            "boxpoints": "all", "jitter": 0.4, "pointpos": 0, "marker": {"color": color,
            "size": 4}, **_placement(facet_index, name, show_legend, legend)}


def _axes_layout(spec, metric, axes, facets, baseline) -> dict:
    layout = {}
    y_title = f"{metric['name']} ({metric['unit']})" if metric["unit"] else metric["name"]
    if baseline and spec.chart in ("line", "bar"):
        y_title = f"{metric['name']} {NORMALIZED} ({spec.baseline['value']} = 1)"
    for index, facet in enumerate(facets):
        suffix = "" if index == 0 else str(index + 1)
        x_axis = axis(spec.x if index == len(facets) - 1 else "")
        if axes["x"]["numeric"]:
            x_axis["type"] = spec.x_scale
        else:
            x_axis.update({"type": "category", "categoryorder": "array",
                           "categoryarray": axes["x"]["values"]})
        y_axis = axis(y_title if facet is None else f"{facet}: {y_title}")
        if index:
            x_axis["matches"] = "x"
        layout["xaxis" + suffix], layout["yaxis" + suffix] = x_axis, y_axis
    return layout


def _heatmap(spec, metric, axes, rows, baseline) -> dict:
    xs = axes["x"]["values"]
    series = axes.get("series", {}).get("values", [None])
    lookup = {(r["x"], r["series"]): _y(r, baseline) for r in rows
              if r["facet"] == (axes.get("facet", {}).get("values", [None])[0])}
    z = [[lookup.get((x, s)) for x in xs] for s in series]
    title = NORMALIZED if baseline else f"{metric['name']} ({metric['unit']})"
    # Without a series dimension the one row is the metric itself, not "None".
    y_labels = [metric["name"] if s is None else str(s) for s in series]
    trace = {"type": "heatmap", "x": xs, "y": y_labels, "z": z,
             "colorscale": "RdBu", "reversescale": not metric["higher_is_better"],
             "colorbar": {"title": {"text": title}}, "hoverongaps": False}
    layout = {"xaxis": {**axis(spec.x), "type": "category"},
              "yaxis": {**axis(spec.series or ""), "type": "category"}}
    return {"data": [trace], "layout": layout}


def _table(spec: ComparisonSpec, rows: list[dict], baseline: bool) -> dict:
    def fmt(value):
        return "–" if value is None else f"{value:.4g}"

    dims = [("x", spec.x), ("series", spec.series), ("facet", spec.facet)]
    labels = [name for key, name in dims if name]
    columns = [key for key, name in dims if name]
    numbers = ["n", "median", "mean", "stdev", "min", "max"]
    if baseline:
        numbers += ["normalized", "p_value"]
    values = [["–" if r[c] is None else str(r[c]) for r in rows] for c in columns]
    values += [[str(r["n"]) for r in rows]] + [[fmt(r[c]) for r in rows] for c in numbers[1:]]
    # Kernel names such as 2.6.22.17-cfs-v24.1-smp need room: dimension columns get 3 shares.
    widths = [3] * len(columns) + [1] * len(numbers)
    return {"data": [{"type": "table", "columnwidth": widths,
                      "header": {"values": labels + numbers, "align": "left"},
                      "cells": {"values": values, "align": ["left"] * len(columns) +
                                ["right"] * len(numbers)}}],
            "layout": {"height": min(900, 130 + 22 * len(rows))}}


def comparison_figure(spec: ComparisonSpec, metric: dict, axes: dict, rows: list[dict],
                      cells) -> dict:
    baseline = spec.baseline is not None
    if spec.chart == "heatmap":
        figure = _heatmap(spec, metric, axes, rows, baseline)
    elif spec.chart == "table":
        figure = _table(spec, rows, baseline)
    else:
        facets = axes.get("facet", {}).get("values", [None])
        series_colors = {name: PALETTE[i % len(PALETTE)]
                         for i, name in enumerate(axes.get("series", {}).get("values", [None]))}
        cells_by_key = {(r["x"], r["series"], r["facet"]): c.values
                        for r, c in zip(rows, cells, strict=True)}
        data, seen = [], set()
        # Every sample >= 0 (times, counts, rates): the metric's range starts at 0.
        floor = 0.0 if all(r["min"] is not None and r["min"] >= 0 for r in rows) else None
        # A legend of hundreds of entries is unreadable and the slowest part of the first
        # draw; hovering a line names its series instead.
        legend = len(series_colors) <= LEGEND_LIMIT
        for facet, name, members in _groups(axes, rows):
            index, color = facets.index(facet), series_colors[name]
            show = name not in seen
            seen.add(name)
            if spec.chart == "box":
                data.append(_box_trace(spec, axes, index, name, members, color, show,
                                       cells_by_key, legend))
            else:
                data.append(_trace(spec, axes, index, name, members, color, show, baseline,
                                   floor, legend))
        if spec.chart == "line" and len(data) > WEBGL_TRACES:
            for trace in data:
                trace["type"] = "scattergl"
        layout = _axes_layout(spec, metric, axes, facets, baseline)
        if len(facets) > 1:
            layout["grid"] = {"rows": len(facets), "columns": 1, "pattern": "independent"}
        if spec.chart in ("bar", "box"):
            layout[f"{spec.chart}mode"] = "group"
        layout["showlegend"] = legend
        figure = {"data": data, "layout": layout}
    title = spec.title or f"{metric['name']} by {spec.x}"
    figure["layout"] = {**base_layout(title), "height": 420 + 260 * (len(
        axes.get("facet", {}).get("values", [None])) - 1), **figure["layout"]}
    return figure


def monitor_figure(monitors: list[dict]) -> dict:
    """vmstat beside the result: r, cs, busy (us+sy) and id over time, one line per run."""
    panels = [("r", "runnable (r)"), ("cs", "context switches/s"), ("busy", "us+sy %"),
              ("id", "idle %")]
    data = []
    for number, monitor in enumerate(monitors):
        columns = {name: i for i, name in enumerate(monitor["columns"])}
        color = PALETTE[number % len(PALETTE)]
        time_column = next((c for c in monitor["columns"] if c.lower().startswith("time")), None)
        xs = [row[columns[time_column]] for row in monitor["rows"]] if time_column \
            else list(range(len(monitor["rows"])))
        for index, (name, _) in enumerate(panels):
            if name == "busy" and {"us", "sy"} <= set(columns):
                ys = [row[columns["us"]] + row[columns["sy"]] for row in monitor["rows"]]
            elif name in columns:
                ys = [row[columns[name]] for row in monitor["rows"]]
            else:
                continue
            suffix = "" if index == 0 else str(index + 1)
            data.append({"type": "scatter", "mode": "lines", "name": monitor["label"],
                         "legendgroup": monitor["label"], "showlegend": index == 0,
                         "x": xs, "y": ys, "xaxis": "x" + suffix, "yaxis": "y" + suffix,
                         "line": {"color": color, "width": 1.5}})
    layout = {**base_layout("vmstat while running"), "height": 640,
              "grid": {"rows": len(panels), "columns": 1, "pattern": "independent"}}
    for index, (_, title) in enumerate(panels):
        suffix = "" if index == 0 else str(index + 1)
        layout["yaxis" + suffix] = axis(title)
        layout["xaxis" + suffix] = {**axis("seconds" if index == len(panels) - 1 else ""),
                                    **({"matches": "x"} if index else {})}
    return {"data": data, "layout": layout}

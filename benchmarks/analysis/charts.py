"""Plotly figures built server-side as plain dicts and drawn by Plotly.js in the page."""

import statistics

PALETTE = ["#1f6feb", "#d1495b", "#2a9d8f", "#e9a23b", "#6f42c1", "#8c564b", "#17becf"]

_BASE_LAYOUT = {
    "margin": {"l": 60, "r": 20, "t": 70, "b": 50},
    "font": {"family": "ui-monospace, SFMono-Regular, Menlo, monospace", "size": 12},
    "paper_bgcolor": "#ffffff",
    "plot_bgcolor": "#fbfbfd",
    "hovermode": "closest",
}


def axis(title: str, **extra) -> dict:
    # automargin: long tick labels ("110.3605k") widen the margin instead of being cut off.
    return {"title": {"text": title}, "gridcolor": "#e6e8ee", "zeroline": False,
            "automargin": True, **extra}


# Above the plot, left to right: a legend at the right would sit on a right-hand y axis.
LEGEND_ON_TOP = {"orientation": "h", "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom"}


def base_layout(title: str) -> dict:
    # The title sits at the left so a legend on top (LEGEND_ON_TOP) has the line below it.
    return {**_BASE_LAYOUT, "title": {"text": title, "x": 0, "xanchor": "left", "xref": "paper"}}


def samples_figure(title: str, metrics: list[tuple[str, str, list[float]]]) -> dict:
    """One trace per metric: every repeat in order, with its median as a dashed line.

    `metrics` is [(name, unit, values)]. Metrics with different units get their own y axis
    so a 10 ms and a 2.0 idx never share a scale.
    """
    data, layout = [], {**base_layout(title), "showlegend": True, "legend": LEGEND_ON_TOP}
    # A run of published summaries only (an mmtests column) has no repeats to draw.
    longest = max((len(values) for _, _, values in metrics), default=0)
    layout["xaxis"] = axis("repeat", dtick=1 if longest <= 30 else None)
    for position, (name, unit, values) in enumerate(metrics[:4]):
        axis_suffix = "" if position == 0 else str(position + 1)
        color = PALETTE[position % len(PALETTE)]
        label = f"{name} ({unit})" if unit else name
        data.append({
            "type": "scatter", "mode": "lines+markers", "name": label,
            "x": list(range(1, len(values) + 1)), "y": list(values),
            "yaxis": "y" + axis_suffix, "line": {"color": color, "width": 1},
            "marker": {"color": color, "size": 7},
        })
        median = statistics.median(values)
        data.append({
            "type": "scatter", "mode": "lines", "name": f"median {name}",
            "x": [1, len(values)], "y": [median, median], "yaxis": "y" + axis_suffix,
            "line": {"color": color, "dash": "dash", "width": 1}, "hoverinfo": "y",
        })
        y_axis = axis(label, tickfont={"color": color})
        if position:
            y_axis.update({"overlaying": "y", "side": "right" if position % 2 else "left",
                           "anchor": "x", "showgrid": False})
        layout["yaxis" + axis_suffix] = y_axis
    return {"data": data, "layout": layout}


def series_figure(
    title: str, columns: list[str], rows: list[list], wanted=("r", "cs", "us", "sy", "id")
) -> dict:
    """A vmstat-like series over time: one trace per wanted column, cs on its own axis."""
    index = {name: position for position, name in enumerate(columns)}
    time_column = next((c for c in columns if c.lower().startswith("time")), None)
    x = [row[index[time_column]] for row in rows] if time_column else list(range(len(rows)))
    data = []
    # a line needs two samples: a short run's one or two would leave empty axes without markers
    mode = "lines" if len(rows) > 2 else "lines+markers"
    for position, name in enumerate(c for c in wanted if c in index):
        data.append({
            "type": "scatter", "mode": mode, "name": name,
            "x": x, "y": [row[index[name]] for row in rows],
            "yaxis": "y2" if name == "cs" else "y",
            "line": {"color": PALETTE[position % len(PALETTE)], "width": 1.5},
        })
    layout = {
        **base_layout(title),
        "legend": LEGEND_ON_TOP,
        "xaxis": axis(time_column or "interval"),
        "yaxis": axis("r / % cpu"),
        "yaxis2": axis("context switches / s", overlaying="y", side="right", showgrid=False),
    }
    return {"data": data, "layout": layout}


# The chart's numbers as a table, rendered with the page (so it is there before Plotly.js has
# loaded, and for a reader without scripts); static/js/charts.js builds the same table in the
# browser for charts drawn later (the builder's preview). Keep the two in step.
TABLE_ROWS = 2000


def _cell(value) -> str:
    """As charts.js's fmt(): six significant digits, no trailing zeros, '–' for nothing."""
    if value is None or value == "":
        return "–"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    rounded = float(f"{value:.6g}")
    return str(int(rounded)) if rounded.is_integer() and abs(rounded) < 1e21 else repr(rounded)


def _axis_title(layout: dict, key: str, fallback: str) -> str:
    title = (layout.get(key) or {}).get("title")
    text = title.get("text") if isinstance(title, dict) else title
    return text if isinstance(text, str) and text else fallback


def _trace_rows(trace: dict, with_errors: bool) -> list[list]:
    name = trace.get("name") or ""
    xs, ys = trace.get("x") or [], trace.get("y") or []
    if trace.get("type") == "box":
        groups: dict = {}
        for x, y in zip(xs, ys, strict=False):
            groups.setdefault(_cell(x), []).append(_cell(y))
        return [[name, x, ", ".join(values)] + ([""] if with_errors else [])
                for x, values in groups.items()]
    bars = trace.get("error_y") or {}
    highs, lows = bars.get("array"), bars.get("arrayminus") or bars.get("array")
    rows = []
    for i, (x, y) in enumerate(zip(xs, ys, strict=False)):
        row = [name, x, y]
        if with_errors:
            row.append(f"{_cell(lows[i])} / {_cell(highs[i])}" if highs else "")
        rows.append(row)
    return rows


def figure_table(figure: dict) -> dict:
    """{"header", "rows" (at most TABLE_ROWS, as text), "total"}: one row per plotted point."""
    layout, data = figure.get("layout") or {}, figure.get("data") or []
    table = next((t for t in data if t.get("type") == "table"), None)
    heat = next((t for t in data if t.get("type") == "heatmap"), None)
    if table:
        header, columns = table["header"]["values"], table["cells"]["values"]
        rows = [list(row) for row in zip(*columns, strict=True)]
    elif heat:
        header = [_axis_title(layout, "yaxis", "row"), _axis_title(layout, "xaxis", "column"),
                  "value"]
        rows = [[y, x, heat["z"][i][j]] for i, y in enumerate(heat["y"])
                for j, x in enumerate(heat["x"])]
    else:
        header = ["series", _axis_title(layout, "xaxis", "x"),
                  _axis_title(layout, "yaxis", "value")]
        with_errors = any((t.get("error_y") or {}).get("array") for t in data)
        if with_errors:
            header.append("error bar (− / +)")
        rows = [row for trace in data for row in _trace_rows(trace, with_errors)]
    return {"header": [_cell(h) for h in header], "total": len(rows),
            "rows": [[_cell(v) for v in row] for row in rows[:TABLE_ROWS]]}


def chart_label(figure: dict, fallback: str = "Chart") -> str:
    """The chart's accessible name, as charts.js gives it."""
    title = (figure.get("layout") or {}).get("title")
    text = title.get("text") if isinstance(title, dict) else title
    return f"{text or fallback} (chart; its numbers are in the table below it)"

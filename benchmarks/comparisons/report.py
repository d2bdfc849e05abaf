"""Exports of a frozen comparison: the contract's JSON, CSV, and a plain-text mail report."""

import csv
import io

from benchmarks.models import Comparison

CSV_COLUMNS = [
    "x", "series", "facet", "n", "value", "median", "mean", "stdev", "cv", "ci95_low",
    "ci95_high", "min", "max", "normalized", "p_value", "test", "runs", "flags",
]


def as_json(comparison: Comparison) -> dict:
    frozen = comparison.frozen
    return {
        "slug": comparison.slug,
        "title": comparison.title,
        "spec": comparison.spec,
        "content_hash": comparison.content_hash,
        "created": comparison.created.isoformat(),
        "runs": comparison.run_ids,
        "metric": frozen["metric"],
        "axes": frozen["axes"],
        "cells": frozen["cells"],
        "summary": frozen["summary"],
        "environment_diff": frozen["environment_diff"],
        "recipes": frozen["recipes"],
        "figure": frozen["figure"],
        "monitor_figure": frozen["monitor_figure"],
    }


def as_csv(comparison: Comparison) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for cell in comparison.frozen["cells"]:
        low, high = cell["ci95"] or (None, None)
        row = {**cell, "ci95_low": low, "ci95_high": high,
               "runs": " ".join(map(str, cell["runs"])), "flags": "; ".join(cell["flags"])}
        writer.writerow(["" if row.get(c) is None else row[c] for c in CSV_COLUMNS])
    return out.getvalue()


def _number(value, digits: int = 4) -> str:
    """Significant digits as people write them in mail: 10043, 3348, 0.955; no exponents."""
    if value is None:
        return "-"
    if abs(value) >= 10 ** (digits - 1):
        return f"{value:.0f}"
    return f"{value:.{digits}g}"


def _cell_text(cell: dict, baseline: dict | None, error: str) -> str:
    text = _number(cell["value"])
    if cell.get("summary"):  # a published statistic: say which, it has no samples
        text += f" [{cell['published']['statistic']}, summary]"
    if error != "none" and cell["stdev"] is not None:
        text += f" ±{_number(cell['stdev'], 2)}"
    if baseline and cell["normalized"] is not None and cell["normalized"] != 1.0:
        text += f" {100 * (cell['normalized'] - 1):+.1f}%"
        if cell["p_value"] is not None:
            text += f" p={cell['p_value']:.2g}"
    return f"{text} ({'n?' if cell['n'] is None else cell['n']})"


def _table(lines: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in lines) for i in range(len(lines[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in lines]


def _facet_block(frozen: dict, spec: dict, facet) -> list[str]:
    axes = frozen["axes"]
    series = axes.get("series", {}).get("values", [None])
    cells = {(c["x"], c["series"]): c for c in frozen["cells"] if c["facet"] == facet}
    header = [spec["x"], *[s if s is not None else spec["statistic"] for s in series]]
    rows = [header, ["-" * len(h) for h in header]]
    for x in axes["x"]["values"]:
        if any((x, s) in cells for s in series):
            rows.append([x, *[_cell_text(cells[(x, s)], spec["baseline"], spec["error"])
                              if (x, s) in cells else "-" for s in series]])
    if spec["baseline"]:
        means = {(g["variant"], g["facet"]): g["value"] for g in frozen["summary"]["geomean"]}
        dim = spec["baseline"]["dim"]
        if dim == spec.get("series"):
            rows.append(["geomean", *[
                f"{100 * (means[(s, facet)] - 1):+.1f}%" if means.get((s, facet)) else ""
                for s in series]])
    return _table(rows)


def as_text(comparison: Comparison, permalink: str) -> str:
    frozen, spec = comparison.frozen, comparison.spec
    metric = frozen["metric"]
    direction = "higher is better" if metric["higher_is_better"] else "lower is better"
    unit = f" ({metric['unit']})" if metric["unit"] else ""
    lines = [comparison.title, "",
             f"{metric['name']}{unit}: {spec['statistic']} per cell, {direction}; "
             f"± is the stdev; (n) is the number of samples"]
    if spec["baseline"]:
        lines.append(f"Baseline: {spec['baseline']['dim']} = {spec['baseline']['value']}; "
                     "% is the change of the statistic against it")
        lines.extend(f"Test: {reason}" for reason in frozen["summary"]["tests"])
    for facet in frozen["axes"].get("facet", {}).get("values", [None]):
        lines.append("")
        if facet is not None:
            lines.append(f"{spec['facet']} = {facet}")
        lines.extend(_facet_block(frozen, spec, facet))
    if any(c.get("summary") for c in frozen["cells"]):
        lines.append("[statistic, summary]: a published statistic without samples (n? when "
                     "the source did not say); tested only where mean, stddev and n allow")
    few = sum("n < 5, needs more runs" in c["flags"] for c in frozen["cells"])
    noisy = sum("CV above 5%: noisy" in c["flags"] for c in frozen["cells"])
    if few or noisy:
        lines += ["", f"Flags: {few} cell(s) with n < 5 (need more runs), "
                  f"{noisy} with CV above 5% (noisy)."]
    lines += ["", f"Runs: {' '.join(f'#{pk}' for pk in comparison.run_ids)}",
              f"Permalink: {permalink}", ""]
    return "\n".join(lines)

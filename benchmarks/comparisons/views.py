"""Comparison pages: the builder, the permalink page and its exports.

The permalink and its exports keep a durable copy (pagecache.frozen_files) and fall back to it
when the database cannot be reached, so a link pasted in a mail keeps working during an outage.
"""

import functools

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.clickjacking import xframe_options_exempt

from benchmarks import selectors
from benchmarks.analysis.charts import TABLE_ROWS, chart_label, figure_table
from benchmarks.comparisons.pagecache import frozen_files, frozen_pages
from benchmarks.comparisons.report import as_csv, as_json, as_text
from benchmarks.models import Comparison, RunTombstone

FROZEN_MAX_AGE = 3600
# Past this many cells the statistics table is folded and fetched when opened: 1,000 cells are
# 24,000 elements, half the page, and parsing them held back the chart.
INLINE_CELLS = 60
CONTENT_TYPES = {"html": "text/html; charset=utf-8", "json": "application/json",
                 "csv": "text/csv; charset=utf-8", "txt": "text/plain; charset=utf-8"}


def _frozen_response(slug: str, kind: str, content: bytes) -> HttpResponse:
    response = HttpResponse(content, content_type=CONTENT_TYPES[kind])
    if kind == "json":
        response["Cache-Control"] = f"public, max-age={FROZEN_MAX_AGE}"
    if kind == "csv":
        response["Content-Disposition"] = f'attachment; filename="comparison-{slug}.csv"'
    return response


def durable(kind: str):
    """Keep a durable copy of what the view answered, and answer it when the database is down
    (the outage middleware turns the error into a 503 when there is no copy)."""
    def decorate(view):
        @functools.wraps(view)
        def wrapper(request, slug: str):
            try:
                response = view(request, slug)
            except (OperationalError, InterfaceError):
                stored = frozen_files.read(slug, kind)
                if stored is None:
                    raise
                return _frozen_response(slug, kind, stored)
            fresh = getattr(response, "frozen_copy", False) or not frozen_files.has(slug, kind)
            if response.status_code == 200 and fresh:
                frozen_files.write(slug, kind, response.content)
            return response
        return wrapper
    return decorate


def builder(request):
    fork = request.GET.get("fork")
    forked = (Comparison.objects.filter(slug=fork).only("slug", "spec", "run_ids").first()
              if fork else None)
    context = {
        "forked": forked,
        # The original's resolved runs, not its filters: a fork reproduces its run set even
        # after runs matching the filters were added.
        "initial_spec": {**forked.spec, "runs": forked.run_ids} if forked else None,
        # ?runs=1,2,3 (a link) or ?runs=1&runs=2 (the run list's checkboxes)
        "initial_runs": ", ".join(request.GET.getlist("runs")),
        "initial_filters": {k: v for k, v in request.GET.items()
                            if k in ("benchmark", "machine", "kernel", "policy", "source", "tag")
                            or k.startswith("param.")},
        "initial_param_filters": "\n".join(
            f"{k.removeprefix('param.')}={v}" for k, v in request.GET.items()
            if k.startswith("param.")),
        "choices": {
            "benchmarks": selectors.benchmarks_with_counts(),
            "machines": selectors.machines_with_counts(),
            "policies": selectors.policies_in_use(),
        },
    }
    return render(request, "comparisons/builder.html", context)


def chart_data(element_id: str, figure: dict | None) -> dict | None:
    """A chart's accessible name and its numbers as an HTML table, rendered with the page so
    they are there before Plotly.js has loaded (charts.js keeps them). Joined here rather than
    looped in the template: a 200-series chart has a thousand rows."""
    if not figure:
        return None
    table = figure_table(figure)
    title = chart_label(figure).removesuffix(" (chart; its numbers are in the table below it)")
    head = "".join(f'<th scope="col">{escape(h)}</th>' for h in table["header"])
    body = "".join("<tr>" + "".join(f"<td>{escape(v)}</td>" for v in row) + "</tr>"
                   for row in table["rows"])
    more = (f'<p class="muted">First {TABLE_ROWS} of {table["total"]} rows.</p>'
            if table["total"] > TABLE_ROWS else "")
    html: SafeString = mark_safe(  # noqa: S308 - every piece of text above went through escape
        f'<details id="{element_id}-data" class="chart-data" data-server="1"><summary>Chart '
        f'data as a table ({table["total"]} rows)</summary><div class="table-scroll"><table '
        f'class="data"><caption class="sr-only">{escape(title)}</caption><thead><tr>{head}'
        f"</tr></thead><tbody>{body}</tbody></table></div>{more}</details>")
    return {"id": element_id, "label": chart_label(figure), "table": html}


def _frozen(slug: str) -> Comparison:
    return get_object_or_404(Comparison, slug=slug)


def _permalink(request, comparison: Comparison) -> str:
    return request.build_absolute_uri(comparison.get_absolute_url())


def _render_detail(request, comparison: Comparison) -> HttpResponse:
    gone = set(RunTombstone.objects.filter(run_id__in=comparison.run_ids)
               .values_list("run_id", flat=True))
    missing = [pk for pk in comparison.run_ids if pk in gone]
    return render(request, "comparisons/detail.html", {
        "comparison": comparison, "frozen": comparison.frozen, "missing": missing,
        "withdrawn": selectors.withdrawn_among(comparison.run_ids),
        "permalink": _permalink(request, comparison),
        "cells_inline": len(comparison.frozen["cells"]) <= INLINE_CELLS,
        "chart": chart_data("comparison-chart", comparison.frozen.get("figure")),
        "monitor_chart": chart_data("monitor-chart", comparison.frozen.get("monitor_figure")),
    })


@durable("html")
def detail(request, slug: str):
    """Frozen, so rendered once (see pagecache). Signed-in visitors see their name in the
    header, so only anonymous pages are cached whole (and kept as the durable copy)."""
    anonymous = not request.user.is_authenticated
    key = f"comparison-page:{slug}:{frozen_pages.version()}"
    if anonymous and (cached := frozen_pages.get(key)) is not None:
        return HttpResponse(cached)
    response = _render_detail(request, _frozen(slug))
    if anonymous:
        frozen_pages.set(key, response.content)
        response.frozen_copy = True  # a new render: the durable copy follows it
    return response


def cells(request, slug: str):
    """The statistics per cell of a large comparison, as an HTML fragment (comparison.js puts
    it in the folded panel when it is opened); frozen, so cached like the page."""
    key = f"comparison-cells:{slug}"
    if (cached := frozen_pages.get(key)) is not None:
        return HttpResponse(cached)
    comparison = _frozen(slug)
    response = render(request, "comparisons/_cells.html", {
        "comparison": comparison, "frozen": comparison.frozen})
    frozen_pages.set(key, response.content)
    return response


def framable_anywhere(view):
    """For pages made to be embedded on other sites (a comparison's /embed): the site's policy
    with `frame-ancestors *`, which would otherwise keep them off every other site's page."""
    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        directives = [d.strip() for d in settings.CONTENT_SECURITY_POLICY.split(";")
                      if d.strip() and not d.strip().startswith("frame-ancestors")]
        response["Content-Security-Policy"] = "; ".join(directives + ["frame-ancestors *"])
        return response
    return wrapped


@xframe_options_exempt
@framable_anywhere
def embed(request, slug: str):
    comparison = _frozen(slug)
    return render(request, "comparisons/embed.html", {
        "comparison": comparison,
        "chart": chart_data("comparison-chart", comparison.frozen.get("figure"))})


@durable("json")
def export_json(request, slug: str):
    response = JsonResponse(as_json(_frozen(slug)))
    response["Cache-Control"] = f"public, max-age={FROZEN_MAX_AGE}"
    return response


@durable("csv")
def export_csv(request, slug: str):
    comparison = _frozen(slug)
    response = HttpResponse(as_csv(comparison), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="comparison-{comparison.slug}.csv"'
    return response


@durable("txt")
def export_text(request, slug: str):
    comparison = _frozen(slug)
    return HttpResponse(as_text(comparison, _permalink(request, comparison)),
                        content_type="text/plain; charset=utf-8")

""""Bisect this" links for other apps' pages: a comparison of two kernels, a finding."""

from urllib.parse import urlencode

from django import template
from django.urls import reverse

from benchmarks.identity import versions
from benchmarks.models import Run

register = template.Library()


def _kernels(comparison, frozen) -> list[str]:
    spec = comparison.spec or {}
    dim = "x" if spec.get("x") == "kernel" else "series" if spec.get("series") == "kernel" \
        else None
    if dim is None:
        return []
    return sorted({str(cell.get(dim)) for cell in frozen.get("cells", [])
                   if cell.get(dim) not in (None, "")}, key=versions.sort_key)


@register.simple_tag
def bisect_comparison_url(comparison, frozen) -> str:
    """The start form filled in from a comparison of exactly two kernels, else ""."""
    kernels = _kernels(comparison, frozen or {})
    if len(kernels) != 2:
        return ""
    query = {"good": kernels[0], "bad": kernels[1]}
    rows = Run.objects.filter(pk__in=comparison.run_ids[:1000]).order_by()  # plain DISTINCT
    benchmarks = list(rows.values_list("benchmark__slug", flat=True).distinct()[:2])
    machines = list(rows.values_list("machine_id", flat=True).distinct()[:2])
    if len(benchmarks) == 1:
        query["benchmark"] = benchmarks[0]
        metric = (frozen or {}).get("metric") or {}
        if metric.get("name"):
            query["metric"] = metric["name"]
    if len(machines) == 1:
        query["machine"] = machines[0]
    return reverse("bisect-new") + "?" + urlencode(query)


@register.simple_tag
def bisect_finding_url(finding) -> str:
    return reverse("bisect-new") + "?" + urlencode({"regression": finding.pk})

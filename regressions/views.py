"""Pages: open findings, one finding with its thread, follow toggles, a ready comparison."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from benchmarks.comparisons.spec import parse_spec
from benchmarks.errors import InputError
from benchmarks.models import Benchmark, Machine, Metric, Run
from benchmarks.services.comparisons import comparison_create

from . import charts, selectors, services
from .models import Regression, Status
from .verdicts import verdict_comparison_runs

PER_PAGE = 20


def regression_list(request):
    try:
        filters = selectors.RegressionFilters.from_query(request.GET, default_status="open")
    except InputError as exc:
        return HttpResponseBadRequest(exc.message)
    page = Paginator(selectors.regressions_list(filters), PER_PAGE).get_page(
        request.GET.get("page"))
    findings = [{"finding": finding, "figure": charts.series_figure(finding, height=180),
                 "figure_id": f"finding-figure-{finding.pk}"} for finding in page]
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "regressions/list.html", {
        "page": page, "findings": findings, "filters": filters, "query": query.urlencode(),
        "statuses": Status.values, "choices": selectors.filter_choices(),
        "follows": selectors.follows_of(request.user),
    })


def _finding(pk: int) -> Regression:
    return get_object_or_404(
        selectors.regressions_list(selectors.RegressionFilters(), merged=True), pk=pk)


def regression_detail(request, pk: int):
    finding = _finding(pk)
    if finding.merged_into_id:  # its URL stays valid: it leads to the finding it became
        return redirect(selectors.merge_target(finding), permanent=True)
    return render(request, "regressions/detail.html", {
        "finding": finding, "figure": charts.series_figure(finding, height=320),
        "statuses": Status.values, "follows": selectors.follows_of(request.user),
        "may_invalidate": services.may_set_status(request.user, finding, Status.INVALID),
        "merged": finding.merged.order_by("pk"),
    })


@login_required
@require_POST
def regression_status(request, pk: int):
    finding = get_object_or_404(Regression.objects.live(), pk=pk)
    status = request.POST.get("status", "")
    if status not in Status.values:
        return HttpResponseBadRequest("unknown status")
    if not services.may_set_status(request.user, finding, status):
        raise PermissionDenied("only the owner of the finding's runs or staff may mark it invalid")
    services.regression_status_set(regression=finding, user=request.user, status=status)
    return redirect(finding)


@require_POST
def regression_compare(request, pk: int):
    """Freeze a comparison of the finding's runs and go there (a permalink anyone can share)."""
    finding = selectors.merge_target(_finding(pk))
    spec = parse_spec(charts.comparison_spec(finding))
    author = request.user if request.user.is_authenticated else None
    return redirect(comparison_create(spec=spec, author=author))


@require_POST
def run_verdict_compare(request, pk: int):
    """Freeze the comparison reproducing one verdict of a run's page (POST metric, against and
    summary, as the page's button sends them) and go there."""
    run = get_object_or_404(Run.objects.select_related("kernel", "benchmark"), pk=pk)
    metric = get_object_or_404(Metric, benchmark=run.benchmark, name=request.POST.get("metric"))
    against = request.POST.get("against", "")
    label = request.POST.get("against_label", "")
    summary = request.POST.get("summary") == "1"
    run_ids = verdict_comparison_runs(run, metric=metric, against=against, summary=summary)
    # two columns of one kernel in a published table differ by their label (config)
    by_label = summary and against == run.kernel.version and bool(label)
    spec = parse_spec(charts.runs_comparison_spec(
        title=f"{run.benchmark.slug} {metric.name}: run {run.pk} ({run.kernel.version}) "
              f"against {against}{f' {label}' if label else ''}",
        run_ids=run_ids, metric=metric.name, baseline=label if by_label else against,
        x="label" if by_label else "kernel"))
    author = request.user if request.user.is_authenticated else None
    return redirect(comparison_create(spec=spec, author=author))


@login_required
@require_POST
def follow_toggle(request):
    benchmark = machine = None
    if request.POST.get("benchmark", "").isdigit():
        benchmark = get_object_or_404(Benchmark, pk=int(request.POST["benchmark"]))
    elif request.POST.get("machine", "").isdigit():
        machine = get_object_or_404(Machine, pk=int(request.POST["machine"]))
    else:
        return HttpResponseBadRequest("say which benchmark or machine to follow")
    services.follow_toggle(user=request.user, benchmark=benchmark, machine=machine)
    back = request.POST.get("next", "")
    return redirect(back if back.startswith("/") and not back.startswith("//")
                    else "regression-list")

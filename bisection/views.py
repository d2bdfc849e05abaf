"""Pages: a session's page, its `git bisect log`, the list, and the start form."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_POST

from benchmarks.errors import InputError

from . import selectors, services
from .bisectlog import render_bisect_log
from .charts import bisection_figure
from .models import Bisection

FORM_FIELDS = ("good", "bad", "regression", "log", "benchmark", "machine", "metric",
               "steps_left")


def bisection_list(request):
    return render(request, "bisect/list.html",
                  {"bisections": selectors.bisections_listed()[:100]})


def bisection_detail(request, pk: int):
    bisection = get_object_or_404(selectors.bisections_listed(), pk=pk)
    state = selectors.bisection_state(bisection)
    user = request.user
    return render(request, "bisect/detail.html", {
        "bisection": bisection, "state": state, "figure": bisection_figure(state),
        "sides": [state.good, state.bad], "regression_link": _finding_url(bisection),
        "can_change": user.is_authenticated and (user.pk == bisection.owner_id
                                                 or user.is_staff)})


def _finding_url(bisection: Bisection) -> str | None:
    if not bisection.regression_id:
        return None
    try:
        return reverse("regression-detail", args=[bisection.regression_id])
    except NoReverseMatch:  # the findings' pages are another app's, maybe not served here
        return None


def bisection_log(request, pk: int):
    """The session as `git bisect log` prints it: `git bisect replay` takes it."""
    bisection = get_object_or_404(Bisection, pk=pk)
    state = selectors.bisection_state(bisection)
    text = render_bisect_log(
        bad=bisection.bad_ref, good=bisection.good_ref, bad_subject=bisection.bad_subject or (
            f"Linux {bisection.bad}" if bisection.bad_kernel_id else ""),
        good_subject=bisection.good_subject or (
            f"Linux {bisection.good}" if bisection.good_kernel_id else ""),
        steps=selectors.bisection_log(state), first_bad=bisection.first_bad,
        first_bad_subject=bisection.first_bad_subject)
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="bisect-{bisection.pk}.log"'
    return response


@login_required
def bisection_new(request):
    """The start form; also the target of "Bisect this" buttons (a POST with the ends)."""
    values = request.POST if request.method == "POST" else request.GET
    error = None
    if request.method == "POST" and "start" in request.POST:
        fields = {name: values.get(name) for name in FORM_FIELDS if values.get(name)}
        try:
            bisection = services.bisection_create(owner=request.user, **fields)
        except InputError as exc:
            error = exc
        else:
            return redirect(bisection)
    return render(request, "bisect/new.html",
                  {"values": values, "error": error, "finding": _finding_for_form(values)},
                  status=400 if error else 200)


def _finding_for_form(values):
    """The finding a "Bisect this" link names, so the form shows the ends, benchmark, machine,
    metric and params it will use (they come from the finding, not from the fields)."""
    from regressions.models import Regression

    pk = str(values.get("regression") or "").strip()
    if not pk.isdigit() or int(pk) >= 2**63:
        return None
    return Regression.objects.select_related("good", "bad", "benchmark", "machine",
                                             "metric").filter(pk=int(pk)).first()


@login_required
@require_POST
def bisection_mark(request, pk: int):
    """The page's buttons: mark a step, or end with a first bad commit."""
    bisection = get_object_or_404(Bisection, pk=pk)
    try:
        if request.POST.get("first_bad"):
            services.bisection_update(bisection=bisection, user=request.user,
                                      first_bad=request.POST["first_bad"])
        elif request.POST.get("steps_left"):
            services.bisection_update(bisection=bisection, user=request.user,
                                      steps_left=request.POST["steps_left"])
        else:
            services.bisect_step_mark(bisection=bisection, user=request.user,
                                      commit=request.POST.get("commit"),
                                      verdict=request.POST.get("verdict", ""))
    except InputError as exc:
        messages.error(request, exc.message)
    return redirect(bisection)

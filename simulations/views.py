"""Pages: the launch form, a job's live page, the jobs list. Parse, authorise, one call, render."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from benchmarks.errors import InputError
from benchmarks.models import Run
from benchmarks.selectors import calibrated_machines
from traces.models import Trace

from . import replay_points, replays, selectors, services, twins
from .expansion import JobSpecError
from .forms import form_catalog, spec_from_form
from .models import SimulationJob


def job_list(request):
    page = Paginator(selectors.jobs_listed(), 50).get_page(request.GET.get("page"))
    return render(request, "simulations/job_list.html", {"page": page})


@login_required
def job_new(request):
    error, values = None, request.GET  # ?on_machine=<id> from a machine's page
    if request.method == "POST":
        values = request.POST
        try:
            job = services.simulation_create(spec=spec_from_form(request.POST),
                                             owner=request.user)
        except JobSpecError as exc:
            error = exc
        else:
            return redirect(job)
    return render(request, "simulations/job_new.html", {
        "catalog": form_catalog(), "error": error, "values": values,
        "machines": calibrated_machines(),
        "status": 400 if error else 200}, status=400 if error else 200)


def job_detail(request, pk: int):
    job = get_object_or_404(SimulationJob.objects.select_related("owner", "comparison"), pk=pk)
    user = request.user
    replay = replay_points.is_replay(job.spec)
    return render(request, "simulations/job_detail.html", {
        "job": job, "points": job.points.order_by("index"), "replay": replay,
        "replay_rows": replay_points.replay_rows(job) if replay else [],
        "replay_warnings": replay_points.replay_trace_warnings(job) if replay else [],
        "can_cancel": job.is_active and user.is_authenticated and (
            user.pk == job.owner_id or user.is_staff)})


@login_required
@require_POST
def job_cancel(request, pk: int):
    job = get_object_or_404(SimulationJob, pk=pk)
    try:
        services.simulation_cancel(job=job, user=request.user)
    except PermissionDenied:
        messages.error(request, "Only the owner of a simulation or staff can cancel it.")
    return redirect(job)


@login_required
@require_POST
def trace_replay(request, pk: int):
    """The "replay on ..." form of a trace page: kernels (checkboxes) and an optional machine."""
    trace = get_object_or_404(Trace, pk=pk)
    try:
        job = replays.replay_job_create(trace=trace, kernels=request.POST.getlist("kernels"),
                                        machine=request.POST.get("machine") or None,
                                        user=request.user)
    except InputError as exc:
        messages.error(request, f"Replay not started: {exc.message}")
        return redirect(trace)
    return redirect(job)


@login_required
@require_POST
def run_predict(request, pk: int):
    """A measured run's "predict this run": its twin queued on its machine; the job's page."""
    run = get_object_or_404(Run.objects.select_related("benchmark", "kernel", "machine"), pk=pk)
    try:
        job = twins.predict_run(run=run, user=request.user,
                                kernel=request.POST.get("kernel") or None)
    except InputError as exc:
        messages.error(request, f"Prediction not started: {exc.message}")
        return redirect(run)
    return redirect(job)

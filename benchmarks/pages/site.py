"""Pages of issue 15: search, owners fixing their runs, two machines side by side, the harness.

Each view parses, authorises (the services check ownership), makes one domain call, renders.
"""

import re

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from benchmarks.analysis.envdiff import machine_diff
from benchmarks.errors import InputError
from benchmarks.models import Machine, Run
from benchmarks.pages.views import run_detail
from benchmarks.search import engine as site_search
from benchmarks.services.ownership import run_restore, run_update, run_withdraw


def search_page(request):
    q = request.GET.get("q", "")
    context = {"q": q, "groups": None, "error": None}
    status = 200
    if q.strip():
        try:
            cleaned = site_search.clean_query(q)
            kind = site_search.clean_kind(request.GET.get("type"))
            page = site_search.clean_page(request.GET.get("page")) if kind else 1
        except InputError as exc:
            context["error"], status = exc.message, 400
        else:
            groups = site_search.search(cleaned, kind=kind, page=page)
            context.update(kind=kind, groups=[
                (group, site_search.group_query(cleaned, group.kind, group.page + 1)
                 if group.has_next else None,
                 site_search.group_query(cleaned, group.kind, group.page - 1)
                 if kind and group.page > 1 else None)
                for group in groups])
            context["found"] = sum(len(group.hits) for group in groups)
    return render(request, "benchmarks/search.html", context, status=status)


# --- owners ---------------------------------------------------------------------------------

@login_required
@require_POST
def run_edit(request, pk: int):
    run = get_object_or_404(Run, pk=pk)
    label, tags = request.POST.get("label", ""), request.POST.get("tags", "")
    try:
        run_update(run=run, user=request.user, label=label, tags=tags)
    except InputError as exc:
        # The page again (why at its top, as before), its form holding what was typed: after
        # a redirect the form showed the stored label and tags and the typing was lost.
        messages.error(request, f"Label and tags not saved: {exc.message}")
        return run_detail(request, pk, refused_edit={"label": label, "tags": tags,
                                                     "error": exc.message})
    messages.info(request, "Label and tags saved.")
    return redirect(run)


@login_required
@require_POST
def run_withdraw_view(request, pk: int):
    run = run_withdraw(run=get_object_or_404(Run, pk=pk), user=request.user)
    messages.info(request, f"Run #{run.pk} withdrawn: it is gone from lists, search and new "
                  "comparisons. Frozen comparisons keep it and say so.")
    return redirect(run)


@login_required
@require_POST
def run_restore_view(request, pk: int):
    run = run_restore(run=get_object_or_404(Run, pk=pk), user=request.user)
    messages.info(request, f"Run #{run.pk} restored.")
    return redirect(run)


# --- machines side by side ------------------------------------------------------------------

def machine_diff_pick(request, pk: int):
    other = request.GET.get("other", "").strip().lstrip("#")
    if not (other.isascii() and other.isdigit()):
        messages.error(request, "Pick the machine to compare with.")
        return redirect("machine-detail", pk=pk)
    return redirect("machine-diff", pk=pk, other=int(other))


def machine_diff_page(request, pk: int, other: int):
    machines = Machine.objects.in_bulk([pk, other])
    if pk not in machines or other not in machines:
        raise Http404("no such machine")
    pair = [machines[pk], machines[other]]
    rows = machine_diff(pair)
    return render(request, "benchmarks/machine_diff.html",
                  {"machines": pair, "diff": rows, "differing": sum(r.differs for r in rows),
                   "show_all": request.GET.get("all") == "1"})


# --- the harness ----------------------------------------------------------------------------

HARNESS_SOURCE = re.compile(r"[a-z0-9_]{1,40}\.(c|sh)")


def _harness_dir():
    return settings.BASE_DIR / "harness"


def harness_sources() -> list:
    """The files `build` and `calibrate` need: harness/src/*.c and *.sh, nothing else."""
    folder = _harness_dir() / "src"
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.iterdir()
                  if path.is_file() and HARNESS_SOURCE.fullmatch(path.name))


def harness_features(path) -> dict:
    """Which of the later commands and options this installation's harness has, so the page
    describes what exists rather than what is planned."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    return {name: f'"{flag}"' in text for name, flag in (
        ("trace", "--trace"), ("bisect", "--bisect"), ("calibrate", "calibrate"),
        ("flush", "flush"), ("build", "build"))}


def harness_page(request):
    site = request.build_absolute_uri("/").rstrip("/")
    return render(request, "benchmarks/harness.html", {
        "site": site, "sources": [path.name for path in harness_sources()],
        "features": harness_features(_harness_dir() / "schedbench.py"),
    })


def harness_source_index(request):
    """What a downloaded harness fetches when it has no src/ beside it."""
    import hashlib

    files = [{"name": path.name, "size": path.stat().st_size,
              "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
              "url": request.build_absolute_uri(reverse("harness-source", args=[path.name]))}
             for path in harness_sources()]
    return JsonResponse({"files": files})


def harness_source(request, name: str):
    found = {path.name: path for path in harness_sources()}
    if name not in found:
        raise Http404("no such harness source")
    return FileResponse(found[name].open("rb"), content_type="text/plain; charset=utf-8")

"""Pages. Each view parses, authorises, makes one domain call, and renders."""


from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.core.paginator import Paginator
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from benchmarks import parsers, selectors
from benchmarks.analysis import charts
from benchmarks.analysis.envdiff import environment_diff
from benchmarks.analysis.exercise import CONTEXT_SWITCH_METRIC, not_exercised
from benchmarks.hooks import machine_page_sections_of, page_sections_of
from benchmarks.models import ApiToken, Machine, Run
from benchmarks.pages.choices import options_html
from benchmarks.pages.format_help import formats_html as format_help_html
from benchmarks.pages.recipes import rerun_recipe
from benchmarks.pages.rows import run_rows_html, sample_rows_html
from benchmarks.services.ownership import may_edit
from benchmarks.services.tokens import token_create, token_revoke

RUNS_PER_PAGE = 50
SAMPLES_SHOWN = 2000


def home(request):
    recent = selectors.recent_runs_listed()
    context = {
        "recent_rows": run_rows_html(recent) if recent else "",  # pages/rows.py, not a loop
        "benchmarks": selectors.benchmarks_with_counts(),
        "machines": selectors.machines_with_counts(),
        "comparisons": selectors.recent_comparisons(),
    }
    return render(request, "benchmarks/home.html", context)


def _run_list_options(choices: selectors.RunListChoices, applied: dict) -> dict:
    """The filters' <option>s. They show no counts: listing the names costs an index probe per
    name, where counting would read every run."""
    pairs = {"benchmark": choices.benchmarks,
             "kernel": ((version, version) for version in choices.kernels),
             "machine": choices.machines,
             "policy": ((policy, policy) for policy in choices.policies)}
    return {name: options_html(values, applied.get(name)) for name, values in pairs.items()}


# The options with nothing selected, for the kept choices they were made from (RunListChoices
# is immutable and kept as one object until anything changes): ~1,000 escaped names at 100k
# runs, a tenth of the unfiltered page's Python.
_unselected_options: tuple[selectors.RunListChoices | None, dict] = (None, {})


def _run_list_options_kept(choices: selectors.RunListChoices, applied: dict) -> dict:
    global _unselected_options
    if applied.keys() & {"benchmark", "kernel", "machine", "policy"}:
        return _run_list_options(choices, applied)
    if _unselected_options[0] is not choices:
        _unselected_options = (choices, _run_list_options(choices, {}))
    return _unselected_options[1]


def _first_page(runs):
    """The unfiltered list's first page: its runs (the template asks whether there are any)
    and their rows' markup, made once per kept choices and count (selectors.RunCounts: any
    change to a run, a name or a metric renews them; rows hold no per-request content)."""
    listed = selectors.runs_listed(runs.in_natural_order().listing_rows()[:RUNS_PER_PAGE])
    return listed, run_rows_html(listed, selectable=True)


def run_list(request):
    filtered = selectors.run_filter(request.GET)
    paginator = Paginator(filtered.runs.in_natural_order().listing_rows(), RUNS_PER_PAGE)
    # Counted without the rows' joins (a count of those reads every run's names: 100k runs,
    # ~200 ms where the runs alone take ~10 ms). The count of every visible run, the filter
    # choices and the first page are kept between changes (selectors.RunCounts), as the home
    # page's counts are.
    unfiltered = not filtered.applied and not filtered.problems
    first = unfiltered and request.GET.get("page") in (None, "", "1")
    visible, choices, first_page = selectors.run_list_kept(
        count=unfiltered, first_page=(lambda: _first_page(filtered.runs)) if first else None)
    paginator.count = visible if unfiltered else filtered.runs.count()
    page = paginator.get_page(request.GET.get("page"))
    if first_page is not None:
        page.object_list, rows = first_page
    else:
        page.object_list = selectors.runs_listed(page.object_list)
        rows = run_rows_html(page.object_list, selectable=True)
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "page": page,
        "rows": rows,
        "filtered": filtered,
        "query": query.urlencode(),
        "options": _run_list_options_kept(choices, filtered.applied),
        "param_filters": [(name, filtered.applied.get(f"param.{name}", ""))
                          for name in choices.params],
        "param_filtered": any(key.startswith("param.") for key in filtered.applied),
    }
    return render(request, "benchmarks/run_list.html", context)


def run_detail(request, pk: int, refused_edit: dict | None = None):
    """`refused_edit`: the label and tags the owner typed and why they were refused, shown
    back in the form (pages/site.run_edit) instead of the stored ones."""
    run = Run.objects.with_detail_relations().filter(pk=pk).first()
    if run is None:
        successor = selectors.run_successor(pk)
        if successor is None:
            raise Http404("no such run")
        return redirect("run-detail", pk=successor)  # replaced by a reparse
    values = selectors.samples_by_metric(run)
    summaries = list(run.summaries.all())
    metrics = [(s.metric.name, s.metric.unit, values[s.metric_id]) for s in summaries]
    series = list(run.series.all())
    switches = {s.run_id: s.maximum for s in summaries if s.metric.name == CONTEXT_SWITCH_METRIC}
    context = {
        "run": run,
        "sections": page_sections_of(run),  # what features add (traces)
        "can_edit": may_edit(request.user, run),
        "edit": refused_edit or {"label": run.label, "tags": " ".join(run.tags)},
        "not_exercised": not_exercised([run], switch_maxima=switches).get(run.pk),
        "recipe": rerun_recipe(run, max((s.n for s in summaries), default=1)),
        "summaries": summaries,
        "published": selectors.published_rows(run),
        "sample_tables": [(name, unit, sample_rows_html(v[:SAMPLES_SHOWN]), len(v))
                          for name, unit, v in metrics],
        "samples_shown": SAMPLES_SHOWN,
        "samples_figure": charts.samples_figure(f"{run.benchmark.name} on {run.kernel}", metrics),
        "series_figures": [
            (f"series-figure-{s.pk}", charts.series_figure(f"{s.kind}", s.columns, s.rows))
            for s in series
        ],
    }
    return render(request, "benchmarks/run_detail.html", context,
                  status=400 if refused_edit else 200)



@login_required
def upload_page(request):
    context = {
        "formats": parsers.formats(),
        "machines": selectors.machines_with_counts(),
        "max_mb": settings.MAX_UPLOAD_MB,
    }
    return render(request, "benchmarks/upload.html", context)


def format_help(request):
    """docs/formats.md as a page: every accepted layout with a copyable example."""
    context = {"body": format_help_html(), "formats": parsers.formats()}
    return render(request, "benchmarks/formats.html", context)


def run_diff_pick(request, pk: int):
    other = request.GET.get("other", "").strip().lstrip("#")
    if not other.isdigit():
        messages.error(request, "Give the number of the run to compare with, e.g. 42.")
        return redirect("run-detail", pk=pk)
    return redirect("run-diff", pk=pk, other=int(other))


def run_diff(request, pk: int, other: int):
    runs = Run.objects.select_related("benchmark", "kernel", "machine").in_bulk([pk, other])
    if pk not in runs or other not in runs:
        raise Http404("no such run")
    pair = [runs[pk], runs[other]]
    rows = environment_diff(pair)
    show_all = request.GET.get("all") == "1"
    context = {
        "runs": pair,
        "rows": rows if show_all else [row for row in rows if row.differs],
        "differing": sum(row.differs for row in rows),
        "total": len(rows),
        "show_all": show_all,
    }
    return render(request, "benchmarks/run_diff.html", context)


def machine_list(request):
    return render(
        request, "benchmarks/machine_list.html", {"machines": selectors.machines_with_counts()}
    )


def machine_detail(request, pk: int):
    machine = get_object_or_404(Machine, pk=pk)
    return render(request, "benchmarks/machine_detail.html",
                  {"machine": machine, **selectors.machine_page(machine),
                   "sections": machine_page_sections_of(machine),  # features' (twins)
                   "other_machines": Machine.objects.exclude(pk=pk).order_by("name", "id")})


def signup(request):
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        return redirect("account-settings")
    return render(request, "registration/signup.html", {"form": form})


@login_required
def account_settings(request):
    tokens = ApiToken.objects.filter(user=request.user)
    new_key = request.session.pop("new_token_key", None)
    return render(request, "benchmarks/settings.html", {"tokens": tokens, "new_key": new_key})


@login_required
@require_POST
def token_new(request):
    _, key = token_create(user=request.user, name=request.POST.get("name", ""))
    # Shown once on the next page load, then gone: only its hash is kept.
    request.session["new_token_key"] = key
    return redirect("account-settings")


@login_required
@require_POST
def token_delete(request, pk: int):
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    token_revoke(token=token)
    messages.info(request, f"Token {token.prefix}… revoked.")
    return redirect("account-settings")


def harness_download(request):
    path = settings.BASE_DIR / "harness" / "schedbench.py"
    if not path.exists():
        raise Http404("the harness is not shipped with this installation")
    return FileResponse(
        path.open("rb"), as_attachment=True, filename="schedbench.py", content_type="text/x-python"
    )

"""Every page type of the site, built from the demo data, for the whole-site browser checks.

`PAGE_TYPES` is the list the checks walk: one entry per kind of page (not per page). A branch
that adds a new kind of page (traces, regressions, bisect, ...) adds an entry here, building
what the page needs in `site_data` if the demo does not have it.
"""

from dataclasses import dataclass, field
from pathlib import Path

from django.core.management import call_command

from benchmarks.comparisons.spec import parse_spec
from benchmarks.models import Comparison, Machine, Run, RunSource
from benchmarks.services.comparisons import comparison_create
from discussions.models import Post, Thread


@dataclass
class SiteData:
    upload_run: Run
    other_run: Run
    thread: Thread
    post: Post
    comparison: Comparison
    box_comparison: Comparison
    heatmap: Comparison
    table: Comparison
    machine: Machine
    simulation: object = None
    simulation_run: Run | None = None
    extra: dict = field(default_factory=dict)


def _simulate(owner):
    """A tiny finished simulation job, its points run in this process (no worker needed)."""
    from simulations.models import SimulationJob
    from simulations.services import simulation_create
    from simulations.tasks import run_point

    spec = {"workload": "threadtest", "params": {"iterations": 5},
            "kernels": ["2.6.22", "2.6.24"], "sweep": {"loops": [100000, 1000000]},
            "repeat": 2, "seed": 7, "topology": "1x2x1"}
    job = simulation_create(spec=spec, owner=owner)
    for point in job.points.all():
        run_point.apply(args=[point.pk])
    return SimulationJob.objects.get(pk=job.pk)


RECORDED_TRACE = Path(__file__).resolve().parent.parent / "fixtures/traces/ftrace_burn.trace"


def _extras(owner, run: Run) -> dict:
    """What the trace, regression and bisection pages need: a recorded trace attached to one of
    the owner's runs and a standalone one, the demo's findings, a bisection session."""
    from bisection.services import bisection_create
    from regressions.models import Regression
    from regressions.services import regressions_detect_all
    from traces.services import trace_ingest

    traces = []
    for run_id in (run.pk, None):
        with RECORDED_TRACE.open("rb") as stream:
            traces.append(trace_ingest(stream=stream, filename=RECORDED_TRACE.name,
                                       owner=owner, run_id=run_id))
    regressions_detect_all()
    finding = Regression.objects.order_by("pk").first()
    bisection = bisection_create(owner=owner, good="2.6.22", bad="2.6.24",
                                 benchmark="threadtest")
    return {"traces": traces, "finding": finding, "bisection": bisection}


def _replay(owner):
    """A stored trace and a finished replay job of it on two kernels, run in this process."""
    from pathlib import Path

    from simulations.replays import replay_job_create
    from simulations.tasks import run_point
    from traces.services import trace_ingest

    path = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "ftrace_burn.trace"
    with path.open("rb") as stream:
        trace = trace_ingest(stream=stream, filename=path.name, owner=owner)
    job = replay_job_create(trace=trace, kernels=["2.6.22", "6.6-eevdf"], user=owner)
    for point in job.points.all():
        run_point.apply(args=[point.pk])
    return trace, job


def site_data(owner) -> SiteData:
    call_command("load_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    runs = list(Run.objects.filter(source=RunSource.DEMO).order_by("pk"))
    demo = list(Comparison.objects.order_by("pk"))
    picked = {"runs": [r.pk for r in runs[:12]], "x": "param.loops", "series": "kernel"}
    job = _simulate(owner)
    runs[0].submitter = owner  # the owner's own run: the trace attaches to it
    runs[0].save(update_fields=["submitter"])
    _, replay = _replay(owner)
    return SiteData(
        upload_run=runs[0], other_run=runs[-1],
        thread=Thread.objects.order_by("pk").first(), post=Post.objects.order_by("pk").last(),
        comparison=demo[0], box_comparison=demo[1],
        heatmap=comparison_create(spec=parse_spec({**picked, "chart": "heatmap"})),
        table=comparison_create(spec=parse_spec({**picked, "chart": "table"})),
        machine=runs[0].machine, simulation=job,
        simulation_run=Run.objects.filter(source=RunSource.SIMULATOR).order_by("pk").first(),
        extra={**_extras(owner, runs[0]), "replay": replay},
    )


# (name, path builder, selector that says the page is ready)
PAGE_TYPES = [
    ("home", lambda d: "/", "main"),
    ("run-list", lambda d: "/runs/", "table.runs"),
    ("run-list-filtered", lambda d: "/runs/?kernel=2.6.24", "table.runs"),
    ("run", lambda d: f"/runs/{d.upload_run.pk}/", "#samples-chart[data-rendered='1']"),
    ("simulator-run", lambda d: f"/runs/{d.simulation_run.pk}/",
     "#samples-chart[data-rendered='1']"),
    ("run-diff", lambda d: f"/runs/{d.upload_run.pk}/diff/{d.other_run.pk}/", "main"),
    ("machines", lambda d: "/machines/", "main"),
    ("machine", lambda d: f"/machines/{d.machine.pk}/", "main"),
    ("upload", lambda d: "/upload/", "form"),
    ("formats", lambda d: "/formats/", "main"),
    ("builder", lambda d: "/compare/?benchmark=threadtest", "#builder-chart[data-rendered='1']"),
    ("comparison", lambda d: f"/c/{d.comparison.slug}/",
     "#comparison-chart[data-rendered='1']"),
    ("comparison-box", lambda d: f"/c/{d.box_comparison.slug}/",
     "#comparison-chart[data-rendered='1']"),
    ("comparison-heatmap", lambda d: f"/c/{d.heatmap.slug}/",
     "#comparison-chart[data-rendered='1']"),
    ("comparison-table", lambda d: f"/c/{d.table.slug}/", "#comparison-chart[data-rendered='1']"),
    ("embed", lambda d: f"/c/{d.comparison.slug}/embed", "#comparison-chart .main-svg"),
    ("simulation-comparison", lambda d: f"/c/{d.simulation.comparison.slug}/",
     "#comparison-chart[data-rendered='1']"),
    ("threads", lambda d: "/threads/", "main"),
    ("thread", lambda d: f"/threads/{d.thread.pk}/", "main"),
    ("message", lambda d: f"/m/{d.post.message_id}/", "main"),
    ("thread-new", lambda d: "/threads/new/", "form"),
    ("thread-import", lambda d: "/threads/import/", "form"),
    ("simulations", lambda d: "/simulations/", "main"),
    ("simulation", lambda d: f"/simulations/{d.simulation.pk}/",
     "#simulation-chart[data-rendered='1']"),
    ("simulation-new", lambda d: "/simulations/new/", "form"),
    ("replay", lambda d: f"/simulations/{d.extra['replay'].pk}/",
     "#simulation-chart[data-rendered='1']"),
    ("settings", lambda d: "/settings/", "main"),
    ("search", lambda d: "/search/?q=2.6.24", "main"),
    ("harness", lambda d: "/harness/", "main"),
    ("machine-diff", lambda d: f"/machines/{d.machine.pk}/diff/"
     f"{Machine.objects.exclude(pk=d.machine.pk).order_by('pk').first().pk}/", "main"),
    ("traces", lambda d: "/traces/", "main"),
    ("trace", lambda d: f"/traces/{d.extra['traces'][0].pk}/",
     ".trace-timeline[data-ready='1']"),
    ("trace-versus", lambda d: f"/traces/{d.extra['traces'][0].pk}/vs/"
     f"{d.extra['traces'][1].pk}/", ".versus .panel + .panel .trace-timeline[data-ready='1']"),
    ("trace-upload", lambda d: "/traces/upload/", "form"),
    ("regressions", lambda d: "/regressions/", "main"),
    ("regression", lambda d: f"/regressions/{d.extra['finding'].pk}/", "main"),
    ("bisections", lambda d: "/bisect/", "main"),
    ("bisection", lambda d: f"/bisect/{d.extra['bisection'].pk}/", "main"),
    ("bisection-new", lambda d: "/bisect/new/", "form"),
]

# The pages the accessibility scan covers (issue 15: home, run, comparison, thread, simulation,
# upload), by PAGE_TYPES name.
AXE_PAGES = ["home", "run", "simulator-run", "comparison", "thread", "simulation", "upload",
             "trace", "trace-versus", "regression", "bisection", "search", "replay"]

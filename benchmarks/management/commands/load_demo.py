"""Load the published LKML figures shipped in benchmarks/demo/ as runs, then what the feature apps
registered as demo steps (benchmarks.hooks): the mail thread about them (its tables link these
runs), the recorded threadtest trace, the findings in their series, a bisection of the headline
finding, and the seed threads' RSDL case queued as a simulation. Safe to run again: a second
run adds nothing."""

from pathlib import Path

from django.core.management.base import BaseCommand

from benchmarks.comparisons.spec import parse_spec
from benchmarks.hooks import demo_steps
from benchmarks.models import Artifact, Comparison, RunSource
from benchmarks.services.artifacts import sha256_of_bytes
from benchmarks.services.comparisons import comparison_create
from benchmarks.services.ingest import UploadMetadata, upload_ingest
from benchmarks.services.runs import runs_stored_together

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"

DEMO_SETS = [
    {
        "file": "threadtest_2cpu_core2.csv",
        "metadata": UploadMetadata(
            benchmark="threadtest",
            machine={
                "name": "core2-duo-laptop",
                "cpu_model": "Intel Core 2 Duo 1.5 GHz",
                "arch": "i686",
                "sockets": 1,
                "cores_per_socket": 2,
                "threads_per_core": 1,
            },
            environment={"source": "LKML, Feb 2008: Scheduler(?) regression from 2.6.22 to 2.6.24"},
        ),
    },
    {
        "file": "threadtest_p4ht.csv",
        "metadata": UploadMetadata(
            benchmark="threadtest",
            params={"loops": 10000, "iterations": 500, "cpus": 2},
            machine={
                "name": "p4-ht",
                "cpu_model": "Intel Pentium 4 3 GHz with Hyper-Threading",
                "arch": "i686",
                "sockets": 1,
                "cores_per_socket": 1,
                "threads_per_core": 2,
            },
            environment={"source": "LKML, Feb 2008: Scheduler(?) regression from 2.6.22 to 2.6.24"},
        ),
    },
]


DEMO_COMPARISONS = [
    {
        "title": "threadtest on a 2-CPU Core 2: 2.6.22 to 2.6.24 by loop size (LKML, Feb 2008)",
        "filters": {"benchmark": "threadtest", "machine": "core2-duo-laptop"},
        "x": "param.loops", "series": "kernel", "baseline": {"dim": "kernel", "value": "2.6.22"},
        "x_scale": "log",
    },
    {
        "title": "threadtest on a Pentium 4 with HT: every repeat per kernel (LKML, Feb 2008)",
        "filters": {"benchmark": "threadtest", "machine": "p4-ht"},
        "x": "kernel", "chart": "box", "error": "minmax",
    },
]


class Command(BaseCommand):
    help = "Load the demo data set (published threadtest figures). Idempotent."

    def handle(self, *args, **options):
        with runs_stored_together():  # the demo's runs ask for one detection pass per series
            self._load_runs()
            for step in demo_steps():
                step.load(self.stdout.write)
        for spec in DEMO_COMPARISONS:
            existing = Comparison.objects.filter(title=spec["title"]).first()
            if existing is None:
                existing = comparison_create(spec=parse_spec(spec))
            self.stdout.write(f"comparison /c/{existing.slug}/: {existing.title}")

    def _load_runs(self):
        for demo in DEMO_SETS:
            path = DEMO_DIR / demo["file"]
            data = path.read_bytes()
            if Artifact.objects.filter(sha256=sha256_of_bytes(data), runs__source="demo").exists():
                self.stdout.write(f"{demo['file']}: already loaded")
                continue
            with path.open("rb") as stream:
                outcome = upload_ingest(
                    stream=stream,
                    filename=demo["file"],
                    metadata=demo["metadata"],
                    source=RunSource.DEMO,
                )
            self.stdout.write(f"{demo['file']}: {len(outcome.runs)} runs ({outcome.format})")

"""Load the published LKML figures shipped in benchmarks/demo/ as runs. Safe to run again."""

from pathlib import Path

from django.core.management.base import BaseCommand

from benchmarks.comparisons.spec import parse_spec
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


DEMO_MBOX = "lkml-threadtest-demo.mbox"

# A scheduler trace the project recorded with its own harness (tests/fixtures/traces/README.md
# says how), so the trace pages have something to show on a fresh site.
DEMO_TRACE = {
    "file": "threadtest_linux-6.18_2vcpu.trace.gz",
    "title": "threadtest -n 100 -l 200000 on Linux 6.18, 2-vCPU KVM guest (ftrace)",
}

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

    def _load_thread(self):
        """A short mail thread whose tables become runs (re-importing it adds nothing)."""
        from discussions.importer import mbox_import

        report = mbox_import(data=(DEMO_DIR / DEMO_MBOX).read_bytes(), user=None)
        self.stdout.write(f"{DEMO_MBOX}: {report.imported} messages imported, "
                          f"{report.skipped} already there, {report.runs_extracted} runs extracted")

    def _load_trace(self):
        from traces.models import Trace
        from traces.services import trace_ingest

        path = DEMO_DIR / DEMO_TRACE["file"]
        existing = Trace.objects.filter(artifact__sha256=sha256_of_bytes(path.read_bytes()),
                                        owner=None).first()
        if existing is None:
            with path.open("rb") as stream:
                existing = trace_ingest(stream=stream, filename=path.name, owner=None,
                                        title=DEMO_TRACE["title"])
        self.stdout.write(f"trace /traces/{existing.pk}/: {existing.events} events")

    def handle(self, *args, **options):
        with runs_stored_together():  # the demo's runs ask for one detection pass per series
            self._load_runs()
        self._load_trace()
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
        self._load_thread()

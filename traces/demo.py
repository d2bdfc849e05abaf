"""The demo's scheduler trace, recorded by the project with its own harness
(tests/fixtures/traces/README.md says how), so the trace pages have something to show."""

from pathlib import Path

from benchmarks.hooks import DemoStep
from benchmarks.services.artifacts import sha256_of_bytes

DEMO_TRACE = Path(__file__).resolve().parent / "demo" / "threadtest_linux-6.18_2vcpu.trace.gz"
DEMO_TITLE = "threadtest -n 100 -l 200000 on Linux 6.18, 2-vCPU KVM guest (ftrace)"


def load_demo_trace(write) -> None:
    from .models import Trace
    from .services import trace_ingest

    existing = Trace.objects.filter(artifact__sha256=sha256_of_bytes(DEMO_TRACE.read_bytes()),
                                    owner=None).first()
    if existing is None:
        with DEMO_TRACE.open("rb") as stream:
            existing = trace_ingest(stream=stream, filename=DEMO_TRACE.name, owner=None,
                                    title=DEMO_TITLE)
    write(f"trace /traces/{existing.pk}/: {existing.events} events")


DEMO_TRACE_STEP = DemoStep(order=20, name="trace", load=load_demo_trace)

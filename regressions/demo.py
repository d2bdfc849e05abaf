"""The demo's findings: detection over the series of the demo's runs, run here and now.

Detection normally runs in the worker once runs are stored; `load_demo` may run before any
worker is up, and the bisection step needs the finding, so the demo asks the same service
synchronously. The worker's own pass later finds the same change points and adds nothing."""

from benchmarks.hooks import DemoStep
from benchmarks.models import Run, RunSource


def demo_series_keys() -> set[str]:
    from .series import series_of_runs

    ids = list(Run.objects.filter(source=RunSource.DEMO).values_list("pk", flat=True))
    return {series.key for series in series_of_runs(ids)}


def load_demo_findings(write) -> None:
    from .models import Regression
    from .services import regressions_detect_runs

    keys = demo_series_keys()
    findings = Regression.objects.filter(series_key__in=keys)
    if not findings.exists():
        ids = list(Run.objects.filter(source=RunSource.DEMO).values_list("pk", flat=True))
        regressions_detect_runs(run_ids=ids)
    write(f"findings: {findings.count()} in the demo's {len(keys)} series")


DEMO_FINDINGS = DemoStep(order=30, name="findings", load=load_demo_findings)

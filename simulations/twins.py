"""Prediction beside measurement: a real run's simulated twin on its own (calibrated) machine.

A twin of a measured run is a simulated run on the same machine, of the same workload (the
benchmark's name), whose params hold every param the measured run names with the same value.
"Predict this run" queues one: a simulation job through the normal job path, on the run's
machine (so with its newest calibration and topology), with the run's params, on the kernel
profile nearest the run's kernel. The machine page lists the machine's measured runs that have
a twin, predicted against measured, and whether the prediction is within the band
(docs/calibration.md, "Prediction beside measurement").
"""

import re
from dataclasses import dataclass

from django.db.models import Q
from django.utils.text import slugify

import simulator
from benchmarks.errors import InputError
from benchmarks.models import Machine, MetricSummary, Run, RunSource

from .expansion import JobSpecError
from .models import SimulationJob

TIME_BAND = 0.30  # a time metric is predicted when within +-30 % of the measured median
IDX_BAND = 0.2  # threadtest-burn's idx (work / wall time) when within +-0.2
TIME_UNITS = ("ns", "us", "ms", "s")
MAX_RUNS = 500  # measured and simulated runs looked at per machine page
PREDICT_REPEAT = 3


def workload_for(benchmark_slug: str) -> str | None:
    """The simulator workload a benchmark is: its slug, or the slug with `_` as `-` (the
    harness's `threadtest_burn` is the simulator's `threadtest-burn`)."""
    workloads = simulator.catalog_view()["workloads"]
    for name in (benchmark_slug, benchmark_slug.replace("_", "-")):
        if name in workloads:
            return name
    return None


_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def nearest_profile(kernel_version: str) -> str:
    """The simulator profile nearest a real kernel: the 2.4/2.6.2x releases by their numbers,
    3.0-6.5 the last pre-EEVDF CFS profile (3.3), 6.6 and later EEVDF (6.6-eevdf)."""
    found = _VERSION.match(kernel_version.strip())
    if not found:
        return "6.6-eevdf"
    major, minor, patch = int(found[1]), int(found[2]), int(found[3] or 0)
    if (major, minor) < (2, 6):
        return "2.4"
    if (major, minor) == (2, 6):
        return {22: "2.6.22", 23: "2.6.23", 24: "2.6.24"}.get(patch, "2.6.22" if patch < 22
                                                              else "2.6.25")
    if (major, minor) < (6, 6):
        return "3.3"
    return "6.6-eevdf"


def twin_spec(run: Run, kernel: str | None = None) -> dict:
    """The simulation job spec of `run`'s twin; JobSpecError when the run cannot have one."""
    workload = workload_for(run.benchmark.slug)
    if workload is None:
        raise JobSpecError("run", f"the simulator has no workload {run.benchmark.slug!r}")
    if run.source == RunSource.SIMULATOR:
        raise JobSpecError("run", "this run is simulated; predict a measured one")
    known = simulator.catalog_view()["workloads"][workload]["params"]
    params = dict(run.params or {})
    if not params:
        raise JobSpecError("params", "this run records no params (loops, iterations, ...): a "
                           "twin with the simulator's defaults would not be the same run")
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise JobSpecError("params", f"the run's param {unknown[0]!r} is not one the "
                           f"simulator's {workload} has ({', '.join(known)})")
    return {"workload": workload, "params": params, "machine": run.machine_id,
            "kernels": [kernel or nearest_profile(run.kernel.version)],
            "repeat": PREDICT_REPEAT, "title": f"prediction of run #{run.pk}"}


def predict_run(*, run: Run, user, kernel: str | None = None) -> SimulationJob:
    """Queue `run`'s twin; InputError (400) naming the reason when it cannot be made."""
    from .services import simulation_create

    try:
        return simulation_create(spec=twin_spec(run, kernel), owner=user)
    except JobSpecError as exc:
        raise InputError(f"no prediction for run #{run.pk}: {exc.message}") from None


def _same_params(measured: dict, simulated: dict) -> bool:
    return bool(measured) and all(name in simulated and simulated[name] == value
                                  for name, value in measured.items())


def within(metric: str, predicted: float, measured: float) -> bool | None:
    """The band: idx +-0.2 absolute, a time +-30 %; None for a metric without a band."""
    if metric == "idx":
        return abs(predicted - measured) <= IDX_BAND
    if metric.rsplit("_", 1)[-1] in TIME_UNITS and metric.startswith("time"):
        return measured > 0 and abs(predicted / measured - 1) <= TIME_BAND
    return None


@dataclass
class Twin:
    measured: Run
    simulated: Run
    rows: list[dict]  # {"metric", "measured", "predicted", "ratio", "within"}
    noisy: bool  # the twin was simulated with a calibration marked noisy

    @property
    def within(self) -> bool | None:
        verdicts = [row["within"] for row in self.rows if row["within"] is not None]
        return all(verdicts) if verdicts else None


def _medians(run_ids: list[int]) -> dict[tuple[int, str], float]:
    rows = MetricSummary.objects.filter(run_id__in=run_ids).values_list(
        "run_id", "metric__name", "median")
    return {(run_id, name): median for run_id, name, median in rows}


def _noisy(run: Run) -> bool:
    machine = ((run.environment or {}).get("simulator") or {}).get("spec", {}).get("machine")
    return bool(isinstance(machine, dict) and machine.get("noisy"))


def machine_twins(machine: Machine) -> list[Twin]:
    """The machine's measured runs that have a simulated twin, newest first, each with its
    newest twin and the workload's metrics both runs have."""
    runs = list(Run.objects.visible().filter(machine=machine).filter(
        ~Q(params={})).select_related("benchmark", "kernel").order_by("-id")[:MAX_RUNS])
    simulated = [r for r in runs if r.source == RunSource.SIMULATOR]
    measured = [r for r in runs if r.source != RunSource.SIMULATOR]
    pairs = []
    for run in measured:
        twin = next((s for s in simulated if s.benchmark_id == run.benchmark_id
                     and _same_params(run.params, s.params)), None)
        if twin is not None:
            pairs.append((run, twin))
    medians = _medians([r.pk for pair in pairs for r in pair])
    twins = []
    for run, twin in pairs:
        workload = workload_for(run.benchmark.slug) or slugify(run.benchmark.slug)
        metrics = simulator.catalog_view()["workloads"].get(workload, {}).get("metrics", {})
        rows = []
        for name in metrics:
            real, predicted = medians.get((run.pk, name)), medians.get((twin.pk, name))
            if real is None or predicted is None:
                continue
            rows.append({"metric": name, "measured": real, "predicted": predicted,
                         "ratio": predicted / real if real else None,
                         "within": within(name, predicted, real)})
        twins.append(Twin(measured=run, simulated=twin, rows=rows, noisy=_noisy(twin)))
    return twins


# --- page sections (registered in apps.py through benchmarks.hooks) ---------------------------

def run_predict_section(run: Run):
    """The "predict this run" form of a measured run whose benchmark the simulator has."""
    from benchmarks.hooks import PageSection
    from benchmarks.selectors import calibration_latest

    workload = workload_for(run.benchmark.slug)
    if run.source == RunSource.SIMULATOR or workload is None:
        return None
    calibration = calibration_latest(run.machine)
    return PageSection("simulations/_predict_run.html", {
        "run": run, "workload": workload, "calibration": calibration,
        "noisy": bool(calibration and calibration.values.get("noisy")),
        "kernels": list(simulator.catalog_view()["kernels"]),
        "nearest": nearest_profile(run.kernel.version)})


def machine_twins_section(machine: Machine):
    twins = machine_twins(machine)
    if not twins:
        return None
    from benchmarks.hooks import PageSection

    return PageSection("simulations/_machine_twins.html", {
        "twins": twins, "time_band": f"{TIME_BAND:.0%}", "idx_band": IDX_BAND,
        "held": sum(1 for t in twins if t.within), "judged": sum(
            1 for t in twins if t.within is not None)})

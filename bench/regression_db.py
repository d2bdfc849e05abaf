"""The database half of bench/regression_detect.py: 1,000,000 samples in 10,000 series, then
one run stored and its incremental detection timed. Run through regression_detect.py."""

import statistics
import time

import django
import numpy as np

BENCHMARK = "regbench"
KERNELS = [f"3.{minor}" for minor in range(20)]
REPEATS = 5
MACHINES = 100


def _setup():
    django.setup()
    from django.core.management import call_command

    call_command("migrate", "--noinput", verbosity=0)


def fill(series_count: int) -> None:
    """Idempotent: skipped when the benchmark already holds the expected samples."""
    _setup()
    from benchmarks.models import Benchmark, Kernel, Machine, Metric, MetricSummary, Run, Sample
    from benchmarks.services.samples import SampleWriter

    expected = series_count * len(KERNELS) * REPEATS
    bench = Benchmark.objects.filter(slug=BENCHMARK).first()
    if bench and Sample.objects.filter(run__benchmark=bench).count() >= expected:
        print(f"incremental: reusing {expected:,} samples of {BENCHMARK}")
        return
    Run.objects.filter(benchmark__slug=BENCHMARK).delete()
    started = time.perf_counter()
    bench, _ = Benchmark.objects.get_or_create(slug=BENCHMARK, defaults={"name": BENCHMARK})
    metric, _ = Metric.objects.get_or_create(benchmark=bench, name="time_ms",
                                             defaults={"unit": "ms"})
    kernels = [Kernel.objects.get_or_create(version=v)[0] for v in KERNELS]
    machines = [Machine.objects.get_or_create(fingerprint=f"regbench-{i}",
                                              defaults={"name": f"regbench-{i}"})[0]
                for i in range(MACHINES)]
    rng = np.random.default_rng(3)
    per_machine = max(1, series_count // MACHINES)
    for start in range(0, series_count, 500):
        runs, values = [], []
        for series in range(start, min(series_count, start + 500)):
            level = 1000.0 * (1 + series % 7)
            for kernel in kernels:
                runs.append(Run(benchmark=bench, machine=machines[series // per_machine
                                                                  % MACHINES],
                                kernel=kernel, params={"loops": 1000 * (series % per_machine)},
                                source="api"))
                values.append(rng.normal(level, level * 0.03, REPEATS))
        Run.objects.bulk_create(runs, batch_size=5000)
        writer = SampleWriter()
        for run, row in zip(runs, values, strict=True):
            writer.add(run_id=run.pk, metric_id=metric.pk, values=row.tolist())
        writer.flush()
        MetricSummary.objects.bulk_create(
            [MetricSummary(run=run, metric=metric, n=REPEATS, mean=float(row.mean()),
                           median=float(np.median(row)), stdev=float(row.std(ddof=1)),
                           minimum=float(row.min()), maximum=float(row.max()))
             for run, row in zip(runs, values, strict=True)], batch_size=5000)
    total = Sample.objects.filter(run__benchmark=bench).count()
    print(f"incremental: filled {total:,} samples in {series_count:,} series "
          f"({time.perf_counter() - started:.0f} s)")


def one_run_incremental(rounds: int = 5) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from benchmarks.models import Benchmark, Kernel, Machine, Sample
    from benchmarks.services.runs import MetricInput, Provenance, run_create
    from benchmarks.signals import runs_stored
    from regressions.models import Regression
    from regressions.services import detect_on_commit, regressions_detect_runs

    # Timed apart: storing the run must not include queueing its detection.
    runs_stored.disconnect(detect_on_commit, dispatch_uid="regressions-detect")
    bench = Benchmark.objects.get(slug=BENCHMARK)
    machine = Machine.objects.get(fingerprint="regbench-0")
    Regression.objects.filter(benchmark=bench).delete()
    store_times, detect_times = [], []
    for round_ in range(rounds):
        version = f"3.{20 + round_}"
        started = time.perf_counter()
        run = run_create(benchmark=bench, machine=machine,
                         kernel=Kernel.objects.get_or_create(version=version)[0],
                         metrics={"time_ms": MetricInput([1300.0, 1302.0, 1298.0, 1301.0,
                                                          1299.0], "ms")},
                         provenance=Provenance(source="api"), params={"loops": 0})
        store_times.append(time.perf_counter() - started)
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            regressions_detect_runs(run_ids=[run.pk])
            detect_times.append(time.perf_counter() - started)
    touched = set(Regression.objects.filter(benchmark=bench).values_list("series_key",
                                                                         flat=True))
    samples = Sample.objects.count()
    store, detect = statistics.median(store_times), statistics.median(detect_times)
    print(f"incremental: database of {samples:,} samples; one run into a series of "
          f"{len(KERNELS)}+ kernels: detection task {detect * 1e3:.1f} ms (median of {rounds}), "
          f"{len(queries)} queries; storing that run with run_create {store * 1e3:.1f} ms "
          f"(detection = {detect / store:.2f}x the store); series with findings afterwards: "
          f"{len(touched)} (only the run's own)")
    Regression.objects.filter(benchmark=bench).delete()

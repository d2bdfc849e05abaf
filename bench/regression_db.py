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


def ensure_database() -> None:
    """Create the bench's PostgreSQL database when it does not exist yet (a fresh server has
    only `postgres`), before Django connects to it."""
    import os
    import subprocess
    import urllib.parse

    url = urllib.parse.urlsplit(os.environ["DATABASE_URL"])
    name = url.path.lstrip("/")
    args = ["-h", url.hostname or "127.0.0.1", "-p", str(url.port or 5432),
            "-U", url.username or "postgres"]
    found = subprocess.run(["psql", *args, "-d", "postgres", "-tAc",
                            f"SELECT 1 FROM pg_database WHERE datname = '{name}'"],
                           capture_output=True, text=True, check=True).stdout.strip()
    if found != "1":
        subprocess.run(["createdb", *args, name], check=True)
        print(f"created database {name}")


def _setup():
    ensure_database()
    django.setup()
    from django.core.management import call_command

    call_command("migrate", "--noinput", verbosity=0)


BOUNDS_KERNELS = 20


def bounds_fill(size: int) -> None:
    """One series of `size` samples: 20 kernels of one run each, +10% from kernel 12, CV 3%.
    Idempotent (kept between bench runs)."""
    _setup()
    from benchmarks.models import Benchmark, Kernel, Machine, Metric, MetricSummary, Run, Sample
    from benchmarks.services.samples import SampleWriter

    slug = f"bounds-{size}"
    bench, _ = Benchmark.objects.get_or_create(slug=slug, defaults={"name": slug})
    if Sample.objects.filter(run__benchmark=bench).count() == size:
        return
    Run.objects.filter(benchmark=bench).delete()
    started = time.perf_counter()
    metric, _ = Metric.objects.get_or_create(benchmark=bench, name="time_ms",
                                             defaults={"unit": "ms"})
    machine, _ = Machine.objects.get_or_create(fingerprint="regbench-bounds",
                                               defaults={"name": "regbench-bounds"})
    rng = np.random.default_rng(size)
    per = size // BOUNDS_KERNELS
    for k in range(BOUNDS_KERNELS):
        kernel, _ = Kernel.objects.get_or_create(version=f"4.{k}")
        run = Run.objects.create(benchmark=bench, machine=machine, kernel=kernel,
                                 source="api", params={"size": size})
        level = 1000.0 * (1.1 if k >= 12 else 1.0)
        writer = SampleWriter()  # one run of per <= 500,000 values at 10^7
        writer.add(run_id=run.pk, metric_id=metric.pk,
                   values=rng.normal(level, level * 0.03, per).tolist())
        writer.flush()
        MetricSummary.objects.create(run=run, metric=metric, n=per, mean=level,
                                     median=level, stdev=level * 0.03, minimum=0,
                                     maximum=2 * level)
    print(f"bounds: filled a series of {size:,} samples ({time.perf_counter() - started:.0f} s)")


def bounds_measure(size: int) -> None:
    """In a fresh process: detection of the series of `size` samples, its time and the growth
    of this process's peak memory; the reference is PostgreSQL reading all its values once."""
    import tracemalloc

    django.setup()
    from django.db.models import Avg

    from benchmarks.models import Run, Sample
    from regressions import detect
    from regressions.models import Regression
    from regressions.series import series_of_runs
    from regressions.services import series_detect

    runs = Run.objects.filter(benchmark__slug=f"bounds-{size}")
    series = next(iter(series_of_runs(runs.values_list("pk", flat=True)[:1])))
    warm = next(iter(series_of_runs(Run.objects.filter(
        benchmark__slug="bounds-1000").values_list("pk", flat=True)[:1])))
    series_detect(series=warm)  # imports and first-use costs outside the measure
    Regression.objects.filter(series_key=series.key).delete()
    before = _peak_kb()
    tracemalloc.start()
    started = time.perf_counter()
    series_detect(series=series)
    elapsed = time.perf_counter() - started
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    grown = max(0, _peak_kb() - before) / 1024
    started = time.perf_counter()
    Sample.objects.filter(run__in=runs).aggregate(Avg("value"))
    reference = time.perf_counter() - started
    found = Regression.objects.filter(series_key=series.key).select_related("good", "bad")
    changes = ", ".join(f"{r.good.version}->{r.bad.version}" for r in found) or "none"
    print(f"bounds: {size:>10,} samples: detection {elapsed * 1e3:8.1f} ms, peak memory +"
          f"{grown:5.1f} MB (Python/numpy allocations {traced / 2**20:5.1f} MB); PostgreSQL "
          f"reading all values once {reference * 1e3:8.1f} ms (detection = "
          f"{elapsed / reference:.2f}x); found {changes} (true 4.11->4.12); "
          f"search ceiling {detect.SEARCH_MAX_SAMPLES:,} values")


def _peak_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


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

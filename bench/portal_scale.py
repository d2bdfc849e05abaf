"""The portal on a database of a real group's size: 100,000 runs, 10 million samples.

    .venv/bin/python bench/portal_scale.py [--recreate] [--requests 20] [--only "run list"]

Creates its own PostgreSQL database (schedbench_scale on 127.0.0.1:5432, user postgres; --recreate
drops it first), migrates it and fills it with generated runs through COPY (not the API):
- 99,000 runs of 99 samples: 9 benchmarks x 50 machines x 11 loop sizes x 20 kernels, so every
  (benchmark, machine, loops) series has 20 kernels for the regression detector;
- the comparison of bench/comparison_speed.py: 200 kernels x 5 loop sizes of 200 samples each.
A filled database is kept and reused (the fill takes minutes). Then, with the portal served by
gunicorn (DEBUG=0), prints p50/p95 of the run list page, a run page, the 200-series comparison
(POST /api/v1/comparisons/preview/), search and the incremental regression task, each beside the
raw SQL that reads the same rows (for the regression task: that read plus the same change-point
detection on the values read), measured in the same run, and the load average (the machine
is shared: read the ratios more than the times). A one-row API read beside its one-row SELECT
shows the floor of any request (HTTP, middleware, rendering): pages whose SQL takes a few ms
cannot come near their SQL's time, so each request's row also gives its p95 ratio less that
floor (the floor's p50 beyond its SELECT's). Each reference does the work its page cannot skip:
every read the page shows (names, params, summaries, published summaries, filter choices with
the page's semantics) and, for the run page's verdicts, the same two verdict tests. The run
list keeps its unfiltered count, filter choices and first page between changes to the runs
and names (benchmarks.selectors.RunCounts, checked by one query per request): its row is
measured warm (nothing changed), and again with the kept values made stale before each
request, as any write makes them ("kept values stale": all read again), each against the same
reference. Target (issue 25): the comparison's p95 within 1.2x of the raw SQL aggregate; the
pages' within 1.2x of theirs.
"""

import argparse
import datetime
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import portal_support  # noqa: E402
from bench.comparison_speed import SQL as COMPARISON_SQL  # noqa: E402
from bench.comparison_speed import p95, request  # noqa: E402
from bench.portal_support import Gunicorn, api_token, bench_env, manage  # noqa: E402

DATABASE = "schedbench_scale"
URL = f"postgres://postgres@127.0.0.1:5432/{DATABASE}"
BENCHMARKS, MACHINES, LOOPS, KERNELS, SAMPLES = 9, 50, 11, 20, 99
CMP_SERIES, CMP_LOOPS, CMP_SAMPLES = 200, 5, 200
RUNS = BENCHMARKS * MACHINES * LOOPS * KERNELS + CMP_SERIES * CMP_LOOPS
TOTAL_SAMPLES = BENCHMARKS * MACHINES * LOOPS * KERNELS * SAMPLES + \
    CMP_SERIES * CMP_LOOPS * CMP_SAMPLES
CHUNK = 1000  # runs per COPY
# Runs come in over time: one a minute from here (a group's runs never share one timestamp, and
# "the newest runs" can be read through the creation-time index).
CREATED_FROM = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)


def loadavg() -> str:
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())


def psql(*args: str, database: str = "postgres") -> str:
    return subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", database,
                           "-tAc", *args], capture_output=True, text=True, check=True).stdout


def ensure_database(recreate: bool) -> None:
    if recreate:
        subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", DATABASE],
                       check=True)
    if psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'").strip() != "1":
        subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", DATABASE], check=True)
        print(f"created database {DATABASE}")


# --- the fill --------------------------------------------------------------------------------

def _binary_copy(cursor, table: str, columns: list[tuple[str, str]], arrays: dict) -> None:
    """COPY ... FROM STDIN (FORMAT binary) of numpy columns: no Python object per value."""
    count = len(next(iter(arrays.values())))
    fields = [("fields", ">i2")]
    for name, kind in columns:
        fields += [(f"{name}_len", ">i4"), (name, kind)]
    rows = np.empty(count, dtype=fields)
    rows["fields"] = len(columns)
    for name, kind in columns:
        rows[f"{name}_len"] = np.dtype(kind).itemsize
        rows[name] = arrays[name]
    payload = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8 + rows.tobytes() + b"\xff\xff"
    names = ", ".join(f'"{name}"' for name, _ in columns)
    cursor.copy_expert(f"COPY {table} ({names}) FROM STDIN WITH (FORMAT binary)",
                       io.BytesIO(payload))


def _dimensions():
    from benchmarks.models import Benchmark, Kernel, Machine, Metric

    def metric(slug):
        bench, _ = Benchmark.objects.get_or_create(slug=slug, defaults={"name": slug})
        return Metric.objects.get_or_create(benchmark=bench, name="time_ms",
                                            defaults={"unit": "ms"})[0]

    metrics = [metric(f"scale-b{b}") for b in range(BENCHMARKS)]
    machines = [Machine.objects.get_or_create(fingerprint=f"scale-m{m}",
                                              defaults={"name": f"scale-m{m}"})[0]
                for m in range(MACHINES + 1)]  # the last one runs the comparison
    kernels = [Kernel.objects.get_or_create(version=f"6.{k}")[0] for k in range(KERNELS)]
    cmp_kernels = [Kernel.objects.get_or_create(version=f"5.{k // 20}.{k % 20}")[0]
                   for k in range(CMP_SERIES)]
    return metrics, metric("cmp-bench"), machines, kernels, cmp_kernels


def _planned_runs():
    """(benchmark metric, machine, kernel, loops, samples, level) for every run, in id order."""
    metrics, cmp_metric, machines, kernels, cmp_kernels = _dimensions()
    for b, metric in enumerate(metrics):
        for m in range(MACHINES):
            for loops in range(LOOPS):
                for k, kernel in enumerate(kernels):
                    # a 10% slowdown from kernel 6.12 in every seventh series
                    step = 1.1 if (m + loops) % 7 == 0 and k >= 12 else 1.0
                    yield (metric, machines[m], kernel, 1000 * (loops + 1), SAMPLES,
                           (1000.0 + 100 * b + loops) * step)
    for k, kernel in enumerate(cmp_kernels):
        for x in range(CMP_LOOPS):
            yield (cmp_metric, machines[-1], kernel, 10 ** (6 + x), CMP_SAMPLES,
                   1000.0 + k + 300 * x)


def _copy_runs(cursor, first_id: int, plan: list) -> None:
    text = io.StringIO()
    for offset, (metric, machine, kernel, loops, _, _) in enumerate(plan):
        params = json.dumps({"loops": loops})
        created = CREATED_FROM + datetime.timedelta(minutes=first_id + offset)
        text.write(f"{first_id + offset}\t\t\t{{}}\t{params}\t{{}}\tapi\t\t\\N\t\\N\t"
                   f"{created.isoformat()}\t\\N\t{metric.benchmark_id}\t{kernel.pk}\t"
                   f"{machine.pk}\t\\N\t\t[]\t\\N\t\\N\t\\N\n")
    text.seek(0)
    cursor.copy_expert(
        "COPY benchmarks_run (id, policy, label, tunables, params, environment, source, "
        "parser_name, parser_version, idempotency_key, created, artifact_id, benchmark_id, "
        "kernel_id, machine_id, submitter_id, result_key, tags, withdrawn, withdrawn_by_id, "
        "measured_at) FROM STDIN", text)
    params = io.StringIO("".join(f"{first_id + offset}\tloops\t{row[3]}\n"
                                 for offset, row in enumerate(plan)))
    cursor.copy_expert("COPY benchmarks_runparam (run_id, name, value) FROM STDIN", params)


def _copy_samples(cursor, first_id: int, plan: list, rng) -> None:
    sizes = np.array([row[4] for row in plan])
    levels = np.repeat([row[5] for row in plan], sizes)
    values = rng.normal(levels, levels * 0.03)
    run_ids = np.repeat(np.arange(first_id, first_id + len(plan)), sizes)
    metric_ids = np.repeat([row[0].pk for row in plan], sizes)
    index = np.concatenate([np.arange(size) for size in sizes])
    _binary_copy(cursor, "benchmarks_sample",
                 [("run_id", ">i8"), ("metric_id", ">i8"), ("index", ">i4"), ("value", ">f8")],
                 {"run_id": run_ids, "metric_id": metric_ids, "index": index, "value": values})
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    parts = np.split(values, starts[1:])
    _binary_copy(cursor, "benchmarks_metricsummary",
                 [("run_id", ">i8"), ("metric_id", ">i8"), ("n", ">i4"), ("mean", ">f8"),
                  ("median", ">f8"), ("stdev", ">f8"), ("minimum", ">f8"), ("maximum", ">f8")],
                 {"run_id": np.arange(first_id, first_id + len(plan)),
                  "metric_id": [row[0].pk for row in plan], "n": sizes,
                  "mean": [p.mean() for p in parts], "median": [np.median(p) for p in parts],
                  "stdev": [p.std(ddof=1) for p in parts], "minimum": [p.min() for p in parts],
                  "maximum": [p.max() for p in parts]})


def spread_created() -> None:
    """A database filled before the runs had distinct creation times gets them (once)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(DISTINCT created) FROM benchmarks_run WHERE id <= %s",
                       [RUNS])
        if cursor.fetchone()[0] >= RUNS:
            return
        cursor.execute("UPDATE benchmarks_run SET created = %s + id * interval '1 minute' "
                       "WHERE id <= %s", [CREATED_FROM, RUNS])
        cursor.execute("VACUUM ANALYZE benchmarks_run")
    print(f"gave the {RUNS:,} runs of {DATABASE} distinct creation times")


def fill() -> None:
    from django.db import connection, transaction

    from benchmarks.models import Run, Sample

    if Run.objects.count() >= RUNS and Sample.objects.count() >= TOTAL_SAMPLES:
        print(f"reusing {DATABASE}: {RUNS:,} runs, {TOTAL_SAMPLES:,} samples")
        spread_created()
        return
    if Run.objects.exists():
        raise SystemExit(f"{DATABASE} holds a partial fill: run again with --recreate")
    started, rng = time.perf_counter(), np.random.default_rng(25)
    plan = list(_planned_runs())
    with transaction.atomic(), connection.cursor() as cursor:
        # Every reference is made here, consistent by construction: skip the per-row FK checks.
        cursor.execute("SET LOCAL session_replication_role = replica")
        for start in range(0, len(plan), CHUNK):
            _copy_runs(cursor, start + 1, plan[start:start + CHUNK])
            _copy_samples(cursor, start + 1, plan[start:start + CHUNK], rng)
        for table in ("benchmarks_run", "benchmarks_runparam", "benchmarks_sample",
                      "benchmarks_metricsummary"):
            cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                           f"(SELECT max(id) FROM {table}))")
    with connection.cursor() as cursor:
        # What autovacuum does to any database soon after a bulk load: statistics, and the
        # visibility map index-only scans need.
        cursor.execute("VACUUM ANALYZE")
    print(f"filled {len(plan):,} runs, {TOTAL_SAMPLES:,} samples with COPY in "
          f"{time.perf_counter() - started:.0f} s")


# --- the measurements ------------------------------------------------------------------------

def paired(portal, raw, count: int, before=None) -> tuple[list[float], list[float]]:
    """Each measured `count` times, alternately, so the machine's changing load (it is shared)
    weighs on both alike; a first call of each warms caches and plans. `before`, untimed, runs
    before each call of `portal` (to make a kept result stale, as a write would)."""
    portal(), raw()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(count):
        for function, into in ((portal, times[0]), (raw, times[1])):
            if before is not None and function is portal:
                before()
            started = time.perf_counter()
            function()
            into.append(time.perf_counter() - started)
    return times


def sql(*statements: tuple[str, list]):
    from django.db import connection

    def run():
        with connection.cursor() as cursor:
            for statement, params in statements:
                cursor.execute(statement, params)
                cursor.fetchall()
    return run


# What a row of the run list shows: the run's link, benchmark, kernel, machine, policy, params
# and source (a reference without params and source read less than the page shows).
PAGE_SQL = ("SELECT r.id, r.params, r.policy, r.source, b.slug, k.version, m.name "
            "FROM benchmarks_run r JOIN benchmarks_benchmark b ON b.id = r.benchmark_id "
            "JOIN benchmarks_kernel k ON k.id = r.kernel_id JOIN benchmarks_machine m "
            "ON m.id = r.machine_id WHERE r.withdrawn IS NULL "
            "ORDER BY b.slug, k.sort_key, k.version, r.id LIMIT 50")
# The names visible runs use, each distinct value found by one index probe (a loose index scan:
# the shape the portal's selectors use; a plain DISTINCT or GROUP BY reads all 100k runs).
SKIP_SQL = ("WITH RECURSIVE f(v) AS (SELECT MIN({c}) FROM benchmarks_run WHERE withdrawn IS NULL "
            "AND {c} > {low} UNION ALL SELECT (SELECT MIN({c}) FROM benchmarks_run WHERE "
            "withdrawn IS NULL AND {c} > f.v) FROM f WHERE f.v IS NOT NULL) "
            "SELECT v FROM f WHERE v IS NOT NULL")
# Benchmarks and machines no run uses yet (a calibrated machine) are choices too; those only
# withdrawn runs use are not.
KEEP_UNUSED_SQL = ("OR NOT EXISTS (SELECT 1 FROM benchmarks_run r WHERE r.{c} = n.id "
                   "AND r.withdrawn IS NOT NULL)")
RUN_LIST_CHOICES_SQL = [
    (f"SELECT n.slug, n.name FROM benchmarks_benchmark n WHERE n.id IN "
     f"({SKIP_SQL.format(c='benchmark_id', low=0)}) "
     f"{KEEP_UNUSED_SQL.format(c='benchmark_id')} ORDER BY n.slug", []),
    (f"SELECT n.id, n.name FROM benchmarks_machine n WHERE n.id IN "
     f"({SKIP_SQL.format(c='machine_id', low=0)}) "
     f"{KEEP_UNUSED_SQL.format(c='machine_id')} ORDER BY n.name, n.id", []),
    (f"SELECT id, version FROM benchmarks_kernel WHERE id IN "
     f"({SKIP_SQL.format(c='kernel_id', low=0)}) ORDER BY sort_key, version", []),
    (SKIP_SQL.format(c="policy", low="''"), []),
    ("WITH RECURSIVE f(v) AS (SELECT MIN(name) FROM benchmarks_runparam UNION ALL SELECT "
     "(SELECT MIN(name) FROM benchmarks_runparam WHERE name > f.v) FROM f WHERE f.v IS NOT "
     "NULL) SELECT v FROM f WHERE v IS NOT NULL AND (SELECT 1 FROM benchmarks_runparam p JOIN "
     "benchmarks_run r ON r.id = p.run_id WHERE p.name = f.v AND r.withdrawn IS NULL LIMIT 1) "
     "IS NOT NULL", []),
]


def run_list_sql():
    """What the run list shows: the count, the first page in natural order, its runs' medians
    (for the ids of that page: the order is computed once, as the page does) and the filter
    choices (the names visible runs use)."""
    from django.db import connection

    choices = sql(*RUN_LIST_CHOICES_SQL)

    def run():
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM benchmarks_run WHERE withdrawn IS NULL")
            cursor.fetchall()
            cursor.execute(PAGE_SQL)
            ids = [row[0] for row in cursor.fetchall()]
            cursor.execute("SELECT s.run_id, t.name, s.median, s.stdev, s.n "
                           "FROM benchmarks_metricsummary s JOIN benchmarks_metric t "
                           "ON t.id = s.metric_id WHERE s.run_id = ANY(%s) "
                           "ORDER BY t.name, s.run_id", [ids])
            cursor.fetchall()
        choices()
    return run


def run_page_sql(pk: int):
    """The run page's work, hand-written: the run with its names, raw input and submitter,
    samples, summaries, published summaries, monitor series, traces and threads about it, the
    machine's newest calibration where the page reads it (the "predict this run" section of a
    benchmark the simulator has), and its verdicts: the benchmark's thresholds, the series'
    runs by kernel with their sizes, the values of the series' oldest and previous kernels
    before the run's (the ids a hand-written page would take from that read), and the same
    verdict tests on them (as the regression task's reference runs the same detection: the
    page cannot show a verdict without computing it)."""
    from django.db import connection

    from benchmarks.models import Run
    from simulations.twins import workload_for

    run = Run.objects.select_related("kernel", "benchmark").get(pk=pk)
    series = [run.summaries.get().metric_id, run.benchmark_id, run.machine_id,
              json.dumps(run.params), pk]
    with connection.cursor() as cursor:
        cursor.execute(SERIES_KERNELS_SQL, series)
        kernels: dict[str, list[int]] = {}
        for run_id, _, version, sort_key in cursor.fetchall():
            if (sort_key, version) < (run.kernel.sort_key, run.kernel.version):
                kernels.setdefault(version, []).append(run_id)
    groups = list(kernels.values())
    targets = [groups[0], groups[-1]] if len(groups) > 1 else groups  # baseline, previous
    statements = [
        ("SELECT * FROM benchmarks_run r JOIN benchmarks_benchmark b ON b.id = r.benchmark_id "
         "JOIN benchmarks_kernel k ON k.id = r.kernel_id JOIN benchmarks_machine m "
         "ON m.id = r.machine_id LEFT JOIN benchmarks_artifact a ON a.id = r.artifact_id "
         "LEFT JOIN auth_user u ON u.id = r.submitter_id WHERE r.id = %s", [pk]),
        ("SELECT * FROM benchmarks_metricsummary s JOIN benchmarks_metric t ON t.id = s.metric_id "
         "WHERE s.run_id = %s", [pk]),
        ("SELECT * FROM benchmarks_publishedsummary s JOIN benchmarks_metric t "
         "ON t.id = s.metric_id WHERE s.run_id = %s", [pk]),
        ("SELECT * FROM benchmarks_monitorseries WHERE run_id = %s", [pk]),
        ("SELECT * FROM traces_trace WHERE run_id = %s", [pk]),
        ("SELECT * FROM discussions_thread WHERE target_type = 'run' AND target_id = %s",
         [str(pk)]),
        ("SELECT * FROM regressions_benchmarkthresholds WHERE benchmark_id = %s LIMIT 1",
         [run.benchmark_id]),
        (SERIES_KERNELS_SQL, series),
    ]
    if workload_for(run.benchmark.slug) is not None:
        statements.append(("SELECT * FROM benchmarks_machinecalibration WHERE machine_id = %s "
                           "ORDER BY created DESC, id DESC LIMIT 1", [run.machine_id]))
    rest = sql(*statements)

    def reference():
        from regressions import detect

        with connection.cursor() as cursor:
            cursor.execute("SELECT metric_id, value FROM benchmarks_sample WHERE run_id = %s "
                           "ORDER BY metric_id, index", [pk])
            own = np.array([value for _, value in cursor.fetchall()])
            values: dict[int, list[float]] = {}
            if targets:
                cursor.execute("SELECT run_id, value FROM benchmarks_sample WHERE metric_id = %s "
                               "AND run_id = ANY(%s) ORDER BY run_id, index",
                               [series[0], [pk for group in targets for pk in group]])
                for run_id, value in cursor.fetchall():
                    values.setdefault(run_id, []).append(value)
        rest()
        for group in targets:
            against = np.array([value for pk in group for value in values.get(pk, [])])
            detect.verdict(own, against, higher_is_better=False,
                           thresholds=detect.DEFAULT_THRESHOLDS, sizes=(len(own), len(against)))
    return reference


# The runs of a run's series (but the run) with their sizes, in release order.
SERIES_KERNELS_SQL = ("SELECT s.run_id, s.n, k.version, k.sort_key FROM benchmarks_metricsummary s "
                      "JOIN benchmarks_run r ON r.id = s.run_id JOIN benchmarks_kernel k "
                      "ON k.id = r.kernel_id WHERE s.metric_id = %s AND r.benchmark_id = %s "
                      "AND r.machine_id = %s AND r.params = %s::jsonb AND r.withdrawn IS NULL "
                      "AND r.id <> %s ORDER BY k.sort_key, k.version, s.run_id")


# The live run count of every benchmark or machine, exact, by the fastest shape a hand-written
# query has: every run counted per name through the name's index (an index-only scan) less the
# withdrawn ones (found through the withdrawn index), names only withdrawn runs use left out.
COUNTS_SQL = ("SELECT n.*, COALESCE(t.n, 0) - COALESCE(w.n, 0) AS run_count FROM {table} n "
              "LEFT JOIN (SELECT {column}, count(*) AS n FROM benchmarks_run GROUP BY {column}) t "
              "ON t.{column} = n.id LEFT JOIN (SELECT {column}, count(*) AS n FROM benchmarks_run "
              "WHERE withdrawn IS NOT NULL GROUP BY {column}) w ON w.{column} = n.id "
              "WHERE COALESCE(t.n, 0) = 0 OR t.n > COALESCE(w.n, 0) ORDER BY {order}")
BENCHMARK_COUNTS_SQL = (COUNTS_SQL.format(table="benchmarks_benchmark", column="benchmark_id",
                                          order="n.slug"), [])
MACHINE_COUNTS_SQL = (COUNTS_SQL.format(table="benchmarks_machine", column="machine_id",
                                        order="n.name, n.id"), [])
RECENT_SQL = ("SELECT r.*, b.*, k.*, m.* FROM benchmarks_run r JOIN benchmarks_benchmark b "
              "ON b.id = r.benchmark_id JOIN benchmarks_kernel k ON k.id = r.kernel_id "
              "JOIN benchmarks_machine m ON m.id = r.machine_id WHERE r.withdrawn IS NULL "
              "ORDER BY r.created DESC, r.id DESC LIMIT 10")


def home_sql():
    """The home page's rows: the ten newest runs with their names and summaries, every
    benchmark and machine with its live run count, the newest comparisons."""
    from django.db import connection

    rest = sql(BENCHMARK_COUNTS_SQL, MACHINE_COUNTS_SQL,
               ("SELECT id, slug, title, created, run_ids FROM benchmarks_comparison "
                "ORDER BY created DESC, id DESC LIMIT 8", []))

    def run():
        with connection.cursor() as cursor:
            cursor.execute(RECENT_SQL)
            ids = [row[0] for row in cursor.fetchall()]
            cursor.execute("SELECT * FROM benchmarks_metricsummary s JOIN benchmarks_metric t "
                           "ON t.id = s.metric_id WHERE s.run_id = ANY(%s)", [ids])
            cursor.fetchall()
        rest()
    return run


BUILDER_SQL = [BENCHMARK_COUNTS_SQL, MACHINE_COUNTS_SQL,
               (SKIP_SQL.format(c="policy", low="''"), [])]


def session_cookie(username: str = "bench") -> dict:
    """A logged-in session of `username` (made here, as a login would), for the pages that ask."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore

    user = User.objects.get(username=username)
    session = SessionStore()
    session.update({SESSION_KEY: str(user.pk), HASH_SESSION_KEY: user.get_session_auth_hash(),
                    BACKEND_SESSION_KEY: "django.contrib.auth.backends.ModelBackend"})
    session.save()
    return {"Cookie": f"sessionid={session.session_key}"}


# One series' values in release order, as the regression detector reads them.
SERIES_SQL = ("SELECT k.version, s.value FROM benchmarks_sample s JOIN benchmarks_run r "
              "ON r.id = s.run_id JOIN benchmarks_kernel k ON k.id = r.kernel_id "
              "WHERE r.benchmark_id = %s AND r.machine_id = %s AND r.params = %s::jsonb "
              "AND r.withdrawn IS NULL ORDER BY k.sort_key, k.version, s.run_id, s.index")


def search_sql(term: str) -> list:
    """The runs matching one term the way the search matches it (kernel, benchmark, machine,
    label, tags): the count and the first page, the exact kernel first."""
    like = f"%{term}%"
    match = ("r.withdrawn IS NULL AND (r.kernel_id IN (SELECT id FROM benchmarks_kernel WHERE "
             "version ILIKE %s) OR r.benchmark_id IN (SELECT id FROM benchmarks_benchmark WHERE "
             "slug ILIKE %s OR name ILIKE %s) OR r.machine_id IN (SELECT id FROM "
             "benchmarks_machine WHERE name ILIKE %s OR cpu_model ILIKE %s) "
             "OR r.label ILIKE %s OR r.tags::text ILIKE %s)")
    tables = ("FROM benchmarks_run r JOIN benchmarks_benchmark b ON b.id = r.benchmark_id "
              "JOIN benchmarks_kernel k ON k.id = r.kernel_id JOIN benchmarks_machine m "
              "ON m.id = r.machine_id")
    return [(f"SELECT count(*) FROM benchmarks_run r WHERE {match}", [like] * 7),
            (f"SELECT r.id, r.label, r.created, b.name, k.version, m.name {tables} WHERE {match} "
             "ORDER BY (k.version ILIKE %s) DESC, r.created DESC, r.id DESC LIMIT 20",
             [like] * 7 + [term])]


def regression_task(rounds: int) -> tuple[list[float], list[float]]:
    """A new run stored into one series (scale-b0, scale-m0, loops 1000), then the incremental
    detection task on it. Its reference is the work the task cannot skip: the series' samples
    read by kernel with raw SQL, the same change-point detection on those values (the
    statistics are most of the task: a reference of the read alone would be 2-3% of it), and
    the series' findings updated in one committed transaction."""
    from django.db import connection, transaction

    from benchmarks.models import Benchmark, Kernel, Machine, Run
    from benchmarks.services.runs import MetricInput, Provenance, run_create
    from benchmarks.signals import runs_stored
    from regressions import detect
    from regressions.series import series_of_runs
    from regressions.services import detect_on_commit, regressions_detect_runs

    runs_stored.disconnect(detect_on_commit, dispatch_uid="regressions-detect")
    bench = Benchmark.objects.get(slug="scale-b0")
    machine = Machine.objects.get(fingerprint="scale-m0")
    versions = [f"6.{KERNELS + i}" for i in range(rounds + 1)]  # the first one warms up
    Run.objects.filter(benchmark=bench, kernel__version__in=versions).delete()  # earlier runs

    key = series_of_runs([Run.objects.filter(benchmark=bench, machine=machine,
                                             params={"loops": 1000}).first().pk]).pop().key

    def reference():
        with connection.cursor() as cursor:
            cursor.execute(SERIES_SQL, [bench.pk, machine.pk, json.dumps({"loops": 1000})])
            groups: dict[str, list[float]] = {}
            for version, value in cursor.fetchall():
                groups.setdefault(version, []).append(value)
        points = detect.detect([np.array(values) for values in groups.values()])
        with transaction.atomic(), connection.cursor() as cursor:  # the findings written back
            cursor.execute("UPDATE regressions_regression SET updated = now() "
                           "WHERE series_key = %s AND merged_into_id IS NULL", [key])
        return points

    task, raw = [], []
    for round_, version in enumerate(versions):
        run = run_create(benchmark=bench, machine=machine,
                         kernel=Kernel.objects.get_or_create(version=version)[0],
                         metrics={"time_ms": MetricInput([1300.0, 1302.0, 1298.0], "ms")},
                         provenance=Provenance(source="api"), params={"loops": 1000})
        started = time.perf_counter()
        regressions_detect_runs(run_ids=[run.pk])
        detect_time = time.perf_counter() - started
        started = time.perf_counter()
        reference()
        if round_:
            task.append(detect_time)
            raw.append(time.perf_counter() - started)
    return task, raw


def line(name: str, times: list[float], raw: list[float], target: str = "",
         floor: float | None = None) -> str:
    """One row: p50/p95 of the portal and of its reference, the p95 ratio, and with `floor`
    (what the floor's request costs beyond its SELECT, p50) the p95 ratio less that floor."""
    less_floor = "" if floor is None else \
        f" | less the floor {(p95(times) - floor) / p95(raw):5.2f}x"
    return (f"{name:<34} p50 {statistics.median(times) * 1e3:7.1f} ms  p95 {p95(times) * 1e3:7.1f}"
            f" ms | raw SQL p50 {statistics.median(raw) * 1e3:7.1f} ms  p95 {p95(raw) * 1e3:7.1f}"
            f" ms | p95 {p95(times) / p95(raw):5.2f}x{less_floor} {target}")


def measure(env: dict, requests: int, only: str | None = None) -> None:
    from benchmarks.models import Run
    from benchmarks.selectors import RunCounts

    token = api_token(env)
    spec = json.dumps({"filters": {"benchmark": "cmp-bench"}, "x": "param.loops",
                       "series": "kernel", "metric": "time_ms", "title": "200 series"}).encode()
    auth = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    # the oldest kernel of its series (no verdicts), and one in the middle of its series
    run, judged = Run.objects.filter(benchmark__slug="scale-b4").order_by("id")[500:511:10]
    term = "6.13"
    session = session_cookie()
    rows = [  # (name, portal, reference, before each portal call)
        ("one-row API read (the floor)", lambda: request(server.url, path="/api/v1/kernels/6.0/"),
         sql(("SELECT * FROM benchmarks_kernel WHERE version = '6.0'", [])), None),
        ("run list page (GET /runs/)", lambda: request(server.url, path="/runs/"),
         run_list_sql(), None),
        # The count and choices are kept between changes (selectors.RunCounts): renewing the
        # shared generation before each request makes them stale, as any write would.
        ("run list page, kept values stale", lambda: request(server.url, path="/runs/"),
         run_list_sql(), RunCounts.renew),
        (f"run page (GET /runs/{run.pk}/)", lambda: request(server.url, path=f"/runs/{run.pk}/"),
         run_page_sql(run.pk), None),
        (f"run page with verdicts (/runs/{judged.pk}/)",
         lambda: request(server.url, path=f"/runs/{judged.pk}/"), run_page_sql(judged.pk), None),
        ("200-series comparison (preview)",
         lambda: request(server.url, "POST", "/api/v1/comparisons/preview/", spec, auth),
         sql((COMPARISON_SQL, [])), None),
        ("home page (GET /)", lambda: request(server.url, path="/"), home_sql(), None),
        ("machine list (GET /machines/)", lambda: request(server.url, path="/machines/"),
         sql(MACHINE_COUNTS_SQL), None),
        ("upload page (GET /upload/, logged in)",
         lambda: request(server.url, path="/upload/", headers=session),
         sql(MACHINE_COUNTS_SQL), None),
        ("comparison builder (GET /compare/)", lambda: request(server.url, path="/compare/"),
         sql(*BUILDER_SQL), None),
        (f"search runs (GET /search/?q={term})",
         lambda: request(server.url, path=f"/search/?q={term}&type=runs"),
         sql(*search_sql(term)), None),
    ]
    rows = [row for row in rows if row is rows[0] or not only or only in row[0]]
    server = Gunicorn(env, workers=2)
    try:
        print(f"{RUNS:,} runs, {TOTAL_SAMPLES:,} samples; {requests} requests each after one "
              f"warm-up; {os.cpu_count()} CPUs, load average {loadavg()}")
        results = [(name, *paired(portal, raw, requests, before))
                   for name, portal, raw, before in rows]
    finally:
        server.stop()
    if not only or only in "incremental regression task":
        results.append(("incremental regression task (+detect)",
                        *regression_task(max(5, requests // 4))))
    floor = statistics.median(results[0][1]) - statistics.median(results[0][2])
    for name, times, raw in results:
        target = "(target <= 1.2x)" if name.startswith(("200-series", "run list")) else ""
        request_row = not name.startswith(("one-row", "incremental"))
        print(line(name, times, raw, target, floor if request_row else None))
    print(f"less the floor: p95 less {floor * 1e3:.1f} ms (the one-row API read's p50 beyond its "
          "SELECT's: HTTP, gunicorn, Django's handler and middleware), against the raw SQL's p95")
    print(f"load average afterwards {loadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recreate", action="store_true",
                        help=f"drop {DATABASE} and fill it again")
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--only", help="measure only the rows whose name holds this text "
                        "(and the floor)")
    args = parser.parse_args()
    from tests.conftest import free_port

    portal_support.free_port = free_port  # gunicorn on this checkout's port range
    ensure_database(args.recreate)
    env = bench_env(DATABASE_URL=URL)
    manage("migrate", "--noinput", "-v0", env=env)
    manage("collectstatic", "--noinput", "-v0", env=env)  # DEBUG=0: WhiteNoise serves these
    os.environ.update(env)
    import django

    django.setup()
    fill()
    measure(env, args.requests, args.only)


if __name__ == "__main__":
    main()

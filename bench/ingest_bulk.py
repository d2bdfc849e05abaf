"""Bulk ingestion speed: 1,000,000 samples through POST /api/v1/runs/bulk/ (NDJSON, gunicorn,
PostgreSQL) against a raw COPY of the same rows into the same table, measured in the same run.

    .venv/bin/python bench/ingest_bulk.py [--runs 1000] [--samples 1000] [--rounds 3]

Needs PostgreSQL (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/schedbench_bench).
Target (issue 3): the API reaches at least 40% of COPY's samples/s.
"""

import argparse
import io
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.portal_support import (  # noqa: E402
    Gunicorn,
    api_token,
    bench_env,
    http_request,
    prepare_database,
)


def make_runs(count: int, samples: int) -> list[dict]:
    rng = random.Random(42)
    return [
        {
            "benchmark": "bulk-bench",
            "kernel": f"2.6.{20 + index % 10}",
            "machine": {"name": "bench-box", "sockets": 1, "cores_per_socket": 2,
                        "threads_per_core": 1},
            "params": {"loops": 10000 * (index + 1), "iterations": 500},
            "metrics": {"time_ms": [round(rng.lognormvariate(8, 0.2), 3) for _ in range(samples)]},
        }
        for index in range(count)
    ]


def post_ndjson(url: str, token: str, body: bytes) -> tuple[float, dict]:
    started = time.perf_counter()
    status, data = http_request(url, "POST", "/api/v1/runs/bulk/", body, timeout=900, headers={
        "Authorization": f"Token {token}", "Content-Type": "application/x-ndjson"})
    elapsed, payload = time.perf_counter() - started, json.loads(data)
    if status != 201:
        raise RuntimeError(f"bulk ingest failed: {status} {payload}")
    return elapsed, payload


def raw_copy_seconds(runs: list[dict]) -> float:
    """COPY the same sample rows into the samples table, for runs made without samples."""
    from django.db import connection, transaction

    from benchmarks.models import Run, Sample
    from benchmarks.services.catalog import (
        benchmark_get_or_create,
        kernel_get_or_create,
        machine_get_or_create,
    )
    from benchmarks.services.catalog import metric_get_or_create as metric_for

    benchmark = benchmark_get_or_create(name="copy-reference")
    metric = metric_for(benchmark=benchmark, name="time_ms", unit="ms")
    machine = machine_get_or_create(spec=runs[0]["machine"])
    kernel = kernel_get_or_create(version="2.6.24")
    placeholders = Run.objects.bulk_create(
        Run(benchmark=benchmark, machine=machine, kernel=kernel, source="api") for _ in runs)
    text = "".join(
        f"{run.pk}\t{metric.pk}\t{index}\t{value!r}\n"
        for run, body in zip(placeholders, runs, strict=True)
        for index, value in enumerate(body["metrics"]["time_ms"])
    )
    sql = f"COPY {Sample._meta.db_table} (run_id, metric_id, index, value) FROM STDIN"
    started = time.perf_counter()
    # Timed up to the commit: PostgreSQL checks Django's deferred foreign keys there.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.copy_expert(sql, io.StringIO(text))
    elapsed = time.perf_counter() - started
    Run.objects.filter(pk__in=[run.pk for run in placeholders]).delete()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=1000, help="samples per run")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    env = bench_env()
    prepare_database(env)
    os.environ.update(env)
    import django

    django.setup()
    from benchmarks.models import Run, Sample

    token = api_token(env)
    runs = make_runs(args.runs, args.samples)
    body = "".join(json.dumps(run) + "\n" for run in runs).encode()
    total = args.runs * args.samples
    print(f"{total:,} samples in {args.runs} runs, NDJSON body {len(body) / 1e6:.1f} MB")
    server = Gunicorn(env)
    api_times, copy_times = [], []
    try:
        for round_number in range(1, args.rounds + 1):
            copy_times.append(raw_copy_seconds(runs))
            elapsed, payload = post_ndjson(server.url, token, body)
            api_times.append(elapsed)
            stored = Sample.objects.filter(run_id__in=payload["ids"]).count()
            assert stored == total, f"stored {stored} samples, expected {total}"
            Run.objects.filter(pk__in=payload["ids"]).delete()
            print(f"round {round_number}/{args.rounds}: COPY {total / copy_times[-1]:,.0f} "
                  f"samples/s, API {total / elapsed:,.0f} samples/s", flush=True)
    finally:
        server.stop()
    copy_rate = total / statistics.median(copy_times)
    api_rate = total / statistics.median(api_times)
    print(f"raw COPY (median of {args.rounds}): {copy_rate:,.0f} samples/s")
    print(f"API bulk NDJSON (median of {args.rounds}): {api_rate:,.0f} samples/s "
          f"(HTTP, validation, runs, summaries, samples)")
    print(f"API / COPY = {api_rate / copy_rate:.0%} (target >= 40%)")


if __name__ == "__main__":
    main()

"""Comparison speed on PostgreSQL with 200 series x 1,000 samples.

    .venv/bin/python bench/comparison_speed.py [--requests 20] [--seconds 10]

Prints, measured in the same run:
- the raw SQL aggregate that fetches the same numbers (count, mean, stdev, min, max, median per
  cell) against the comparison JSON computed by the API (POST /api/v1/comparisons/preview/,
  through gunicorn) and the frozen permalink JSON (GET /c/<slug>.json); p50/p95 and the ratio;
  beside them, for information, the read of the runs' stored summaries, which is what the
  preview reads for one-run cells instead of aggregating the samples;
- the permalink page against a static file of the same size, both served by the same gunicorn,
  under the same closed-loop load from a Python client on loopback (requests/s);
- the first render of the 200-series chart in headless Chromium (navigation to drawn).
Creates its database (schedbench_bench) if it is missing and prints the load average beside the
figures. Targets: comparison JSON p95 within 1.2x of the SQL aggregate's (issue 25; issue 6 had
3x and p95 < 300 ms); page rate >= 1/2 of the static file's; first render < 2 s.
"""

import argparse
import json
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.portal_support import (  # noqa: E402
    ROOT,
    Gunicorn,
    api_token,
    bench_env,
    http_request,
    prepare_database,
)

SERIES, X_VALUES, SAMPLES_PER_CELL = 200, 5, 200
SQL = """
SELECT r.kernel_id, r.params->>'loops', count(*), avg(s.value), stddev_samp(s.value),
       min(s.value), max(s.value), percentile_cont(0.5) WITHIN GROUP (ORDER BY s.value)
FROM benchmarks_sample s
JOIN benchmarks_run r ON r.id = s.run_id
JOIN benchmarks_metric m ON m.id = s.metric_id
JOIN benchmarks_benchmark b ON b.id = r.benchmark_id
WHERE b.slug = 'cmp-bench' AND m.name = 'time_ms'
GROUP BY 1, 2
"""
# What the preview itself reads for these cells: each run's summary, computed from its samples
# when the run was stored (a one-run cell takes it). Printed beside the target's reference for
# information: the target is against the aggregate above.
STORED_SQL = """
SELECT r.kernel_id, r.params->>'loops', s.n, s.mean, s.stdev, s.minimum, s.maximum, s.median
FROM benchmarks_metricsummary s
JOIN benchmarks_run r ON r.id = s.run_id
JOIN benchmarks_metric m ON m.id = s.metric_id
JOIN benchmarks_benchmark b ON b.id = r.benchmark_id
WHERE b.slug = 'cmp-bench' AND m.name = 'time_ms' AND r.withdrawn IS NULL
"""


def load_runs() -> None:
    from benchmarks.services.submissions import runs_bulk_submit

    rng = random.Random(3)
    payloads = (
        (f"item {n}", {
            "benchmark": "cmp-bench", "kernel": f"5.{k // 20}.{k % 20}", "machine": "bench-box",
            "params": {"loops": 10 ** (6 + x)},
            "metrics": {"time_ms": [rng.gauss(1000 + k + 300 * x, 20)
                                    for _ in range(SAMPLES_PER_CELL)]},
        })
        for n, (k, x) in enumerate((k, x) for k in range(SERIES) for x in range(X_VALUES))
    )
    runs_bulk_submit(payloads=payloads, submitter=None)


def loadavg() -> str:
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())


def interleaved(functions: list, count: int) -> list[list[float]]:
    """Each function timed `count` times, taking turns, so the load of a shared machine weighs
    on all of them alike (after one warm-up call each)."""
    for function in functions:
        function()
    times: list[list[float]] = [[] for _ in functions]
    for _ in range(count):
        for function, into in zip(functions, times, strict=True):
            started = time.perf_counter()
            function()
            into.append(time.perf_counter() - started)
    return times


def p95(times: list[float]) -> float:
    return sorted(times)[max(0, int(round(0.95 * len(times))) - 1)]


def request(url: str, method: str = "GET", path: str = "/", body=None, headers=None) -> bytes:
    status, data = http_request(url, method, path, body, headers)
    if status >= 400:
        raise RuntimeError(f"{method} {path}: HTTP {status} {data[:200]!r}")
    return data


def closed_loop_rate(url: str, path: str, seconds: float, clients: int = 4) -> float:
    done, stop = [0] * clients, time.monotonic() + seconds

    def client(index):
        while time.monotonic() < stop:
            request(url, path=path)
            done[index] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done) / seconds


def first_render_seconds(url: str, tries: int = 5) -> list[float]:
    """Navigation to drawn chart, each try in a fresh browser context (empty caches)."""
    from playwright.sync_api import sync_playwright

    from tests.conftest import CHROMIUM, CHROMIUM_ARGS

    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(tries):
            context = browser.new_context()
            page = context.new_page()
            started = time.perf_counter()
            page.goto(url)
            page.wait_for_selector("#comparison-chart[data-rendered='1']", timeout=60000)
            times.append(time.perf_counter() - started)
            traces = page.evaluate("document.getElementById('comparison-chart').data.length")
            assert traces == SERIES, traces  # every series drawn (the legend hides past 40)
            context.close()
        browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    env = bench_env()
    prepare_database(env)
    os.environ.update(env)
    import django

    django.setup()
    from django.db import connection

    load_runs()
    token = api_token(env)
    spec = {"filters": {"benchmark": "cmp-bench"}, "x": "param.loops", "series": "kernel",
            "metric": "time_ms", "title": "200 series"}
    total = SERIES * X_VALUES * SAMPLES_PER_CELL
    print(f"{SERIES} series x {X_VALUES} loop sizes, {SERIES * X_VALUES} cells, {total:,} samples; "
          f"{os.cpu_count()} CPUs, load average {loadavg()}")

    def sql_aggregate():
        with connection.cursor() as cursor:
            cursor.execute(SQL)
            assert len(cursor.fetchall()) == SERIES * X_VALUES

    def stored_summaries():
        with connection.cursor() as cursor:
            cursor.execute(STORED_SQL)
            assert len(cursor.fetchall()) == SERIES * X_VALUES

    static_dir = ROOT / "var" / "staticfiles" / "bench"
    static_dir.mkdir(parents=True, exist_ok=True)
    server = Gunicorn(env, workers=2)
    try:
        body = json.dumps(spec).encode()
        auth = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        slug = json.loads(request(server.url, "POST", "/api/v1/comparisons/", body, auth))["slug"]
        sql_times, preview_times, frozen_times, stored_times = interleaved(
            [sql_aggregate,
             lambda: request(server.url, "POST", "/api/v1/comparisons/preview/", body, auth),
             lambda: request(server.url, path=f"/c/{slug}.json"), stored_summaries],
            args.requests)
        page = request(server.url, path=f"/c/{slug}/")
        (static_dir / "page-copy.html").write_bytes(page)
    finally:
        server.stop()
    # Whitenoise indexes static files when it starts: restart to serve the copy.
    server = Gunicorn(env, workers=2)
    try:
        request(server.url, path=f"/c/{slug}/")
        page_rate = closed_loop_rate(server.url, f"/c/{slug}/", args.seconds)
        static_rate = closed_loop_rate(server.url, "/static/bench/page-copy.html", args.seconds)
        render = first_render_seconds(f"{server.url}/c/{slug}/")
    finally:
        server.stop()
    sql, preview, frozen = (statistics.median(t) for t in (sql_times, preview_times, frozen_times))
    print(f"raw SQL aggregate:         p50 {sql * 1000:7.1f} ms  p95 "
          f"{p95(sql_times) * 1000:7.1f} ms")
    print(f"API preview (computed):    p50 {preview * 1000:7.1f} ms  p95 "
          f"{p95(preview_times) * 1000:7.1f} ms  = {preview / sql:.2f}x SQL at p50, "
          f"{p95(preview_times) / p95(sql_times):.2f}x at p95 (target <= 1.2x)")
    print(f"permalink .json (frozen):  p50 {frozen * 1000:7.1f} ms  p95 "
          f"{p95(frozen_times) * 1000:7.1f} ms  = {frozen / sql:.2f}x SQL")
    stored = statistics.median(stored_times)
    print(f"stored summaries read:     p50 {stored * 1000:7.1f} ms  p95 "
          f"{p95(stored_times) * 1000:7.1f} ms  (the rows the preview reads for its cells; "
          f"preview p95 = {p95(preview_times) / p95(stored_times):.1f}x this)")
    print(f"permalink page: {page_rate:,.0f} req/s; static file of the same size "
          f"({len(page) / 1024:.0f} KiB): {static_rate:,.0f} req/s; ratio "
          f"{page_rate / static_rate:.2f} (target >= 0.5)")
    print(f"load average afterwards {loadavg()}")
    print(f"first render of the {SERIES}-series chart in headless Chromium, fresh context each "
          f"time: median {statistics.median(render):.2f} s, best {min(render):.2f} s of "
          f"{len(render)} (target < 2 s)")


if __name__ == "__main__":
    main()

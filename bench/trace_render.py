"""First render of a 1,000,000-event trace's page in a cold Chromium profile.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sb_i13_traces_bench \\
        .venv/bin/python bench/trace_render.py [--events 1000000] [--tries 5]

Writes the synthetic trace of bench/trace_ingest.py, ingests it through the portal's service,
serves the portal with gunicorn (DEBUG=0, collectstatic) and opens /traces/<id>/ in headless
Chromium with a brand-new profile (empty cache): navigation until the timeline is drawn and the
latency histogram too. The reference, in the same run, is the run list page drawn in the same
cold way (a page with no timeline). Target (issue 13): under 2 s.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import portal_support  # noqa: E402
from bench.portal_support import ROOT, Gunicorn, bench_env, prepare_database  # noqa: E402
from bench.trace_ingest import write_trace  # noqa: E402

DRAWN = ("document.querySelector('.trace-timeline') && "
         "document.querySelector('.trace-timeline').dataset.ready === '1' && "
         "document.querySelector('#latency-chart').dataset.rendered === '1'")


def cold_seconds(playwright, url: str, ready: str) -> float:
    from tests.conftest import CHROMIUM, CHROMIUM_ARGS

    with tempfile.TemporaryDirectory(prefix="sb-profile-") as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = context.new_page()
        started = time.perf_counter()
        page.goto(url)
        while not page.evaluate(ready):
            page.wait_for_timeout(10)
        elapsed = time.perf_counter() - started
        segments = page.evaluate("(document.querySelector('.trace-timeline') || "
                                 "{dataset: {}}).dataset.segments || ''")
        context.close()
    return elapsed, segments


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--tries", type=int, default=5)
    args = parser.parse_args()
    from tests.conftest import free_port

    portal_support.free_port = lambda: free_port(8200, 8299)
    env = bench_env()
    prepare_database(env)
    os.environ.update(env)
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from benchmarks.traces.services import trace_ingest

    folder = ROOT / "var" / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"trace-render-{args.events}.trace"
    write_trace(path, args.events)
    user, _ = get_user_model().objects.get_or_create(username="bench")
    began = time.perf_counter()
    with path.open("rb") as stream:
        trace = trace_ingest(stream=stream, filename=path.name, owner=user, title="bench 1M")
    print(f"ingested {trace.events:,} events, {trace.tasks_count} tasks, {trace.cpus} CPUs in "
          f"{time.perf_counter() - began:.1f} s (in-process service call)")
    path.unlink()
    server = Gunicorn(env, workers=2)
    try:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            page_times, reference = [], []
            for _ in range(args.tries):
                elapsed, segments = cold_seconds(playwright, f"{server.url}/traces/{trace.pk}/",
                                                 DRAWN)
                page_times.append(elapsed)
                reference.append(cold_seconds(playwright, f"{server.url}/runs/",
                                              "document.readyState === 'complete'")[0])
        load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        print(f"{args.tries} cold-profile tries, median (best); {os.cpu_count()} CPUs, load "
              f"average {load}")
        print(f"trace page ({trace.events:,} events, {segments} segments drawn): "
              f"{statistics.median(page_times):.2f} s ({min(page_times):.2f}) to timeline and "
              f"histogram drawn (target < 2 s)")
        print(f"reference /runs/ cold: {statistics.median(reference):.2f} s; trace page / "
              f"reference = {statistics.median(page_times) / statistics.median(reference):.1f}x")
    finally:
        server.stop()


if __name__ == "__main__":
    main()

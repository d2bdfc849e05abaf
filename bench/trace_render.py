"""First render of a 1,000,000-event trace's page in a cold Chromium profile.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sb_i13_traces_bench \\
        .venv/bin/python bench/trace_render.py [--events 1000000] [--tries 5]

Writes the synthetic trace of bench/trace_ingest.py, ingests it through the portal's service,
serves the portal with gunicorn (DEBUG=0, collectstatic) and opens /traces/<id>/ in headless
Chromium with a brand-new profile (empty cache): navigation until the timeline is drawn and the
latency histogram too; then the same page again in that profile (warm: scripts cached).
The reference, in the same run and the same cold way, is the page of a 19-event trace: the
same HTML, CSS and scripts (no chart library: trace.js draws on a canvas), so the difference
is what a million events cost. Each figure is split at DOMContentLoaded (until then: HTML and
the deferred scripts; after it: fetching the timeline window and drawing). Target (issue 13):
under 2 s.
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


def open_page(context, url: str) -> tuple[float, float, str]:
    """(seconds to drawn, seconds to DOMContentLoaded, segments drawn)."""
    page = context.new_page()
    started = time.perf_counter()
    page.goto(url)
    while not page.evaluate(DRAWN):
        page.wait_for_timeout(10)
    elapsed = time.perf_counter() - started
    dcl = page.evaluate("performance.getEntriesByType('navigation')[0]"
                        ".domContentLoadedEventEnd") / 1000
    segments = page.evaluate("document.querySelector('.trace-timeline').dataset.segments")
    page.close()
    return elapsed, dcl, segments


def cold_and_warm(playwright, url: str) -> tuple[tuple, tuple]:
    from tests.conftest import CHROMIUM, CHROMIUM_ARGS

    with tempfile.TemporaryDirectory(prefix="sb-profile-") as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        cold = open_page(context, url)
        warm = open_page(context, url)
        context.close()
    return cold, warm


def describe(label, results) -> str:
    total = statistics.median(r[0] for r in results)
    dcl = statistics.median(r[1] for r in results)
    return (f"{label}: {total:.2f} s median (best {min(r[0] for r in results):.2f}); "
            f"DOMContentLoaded at {dcl:.2f} s, timeline and histogram {total - dcl:.2f} s after")


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

    from traces.services import trace_ingest

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
    small_path = ROOT / "tests" / "fixtures" / "traces" / "edge_cases.trace"
    with small_path.open("rb") as stream:
        small = trace_ingest(stream=stream, filename=small_path.name, owner=user)
    server = Gunicorn(env, workers=2)
    try:
        from playwright.sync_api import sync_playwright

        results = {"big": ([], []), "small": ([], [])}
        with sync_playwright() as playwright:
            for _ in range(args.tries):
                for key, which in (("big", trace), ("small", small)):
                    cold, warm = cold_and_warm(playwright, f"{server.url}/traces/{which.pk}/")
                    results[key][0].append(cold)
                    results[key][1].append(warm)
        load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        print(f"{args.tries} tries each; {os.cpu_count()} CPUs, load average {load} (rendering "
              "is CPU-bound: read the figures with the load)")
        big_cold, big_warm = results["big"]
        small_cold, small_warm = results["small"]
        print(describe(f"1M-event trace, cold profile ({big_cold[0][2]} segments)", big_cold))
        print(describe("1M-event trace, warm profile", big_warm))
        print(describe("19-event trace, cold profile (reference)", small_cold))
        print(describe("19-event trace, warm profile", small_warm))
        ratio = statistics.median(r[0] for r in big_cold) / \
            statistics.median(r[0] for r in small_cold)
        print(f"cold 1M / cold 19 events = {ratio:.2f}x (target: cold 1M < 2 s)")
    finally:
        server.stop()


if __name__ == "__main__":
    main()

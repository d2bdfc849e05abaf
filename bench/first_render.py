"""First render of a 200-series permalink in a cold Chromium profile, beside the warm figure.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/schedbench_bench \\
        .venv/bin/python bench/first_render.py [--tries 5] [--mbit 20] [--rtt-ms 40]

Serves the portal with gunicorn (DEBUG=0, collectstatic: hashed, gzipped static files) and
opens the permalink of a 200 series x 5 loop sizes comparison in headless Chromium:
- cold: a brand-new profile directory (empty disk cache), navigation to chart drawn;
- warm: the same profile opening the page again (Plotly.js from the cache, no request for it).
Both on loopback and on an emulated link (--mbit down, --rtt-ms), where the size of Plotly.js
matters. Also prints what Plotly.js costs on the wire and the machine's load average beside the
figures (the render is CPU-bound). Creates its database (schedbench_bench) if it is missing.
Targets (issue 25): interactive within 1 s warm and 2 s cold.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import portal_support  # noqa: E402
from bench.comparison_speed import SERIES, X_VALUES, load_runs  # noqa: E402
from bench.portal_support import (  # noqa: E402
    Gunicorn,
    api_token,
    bench_env,
    http_request,
    prepare_database,
)

CHART_DRAWN = "#comparison-chart[data-rendered='1']"


def throttle(page, mbit: float, rtt_ms: float) -> None:
    if not mbit:
        return
    session = page.context.new_cdp_session(page)
    session.send("Network.enable")
    rate = mbit * 1_000_000 / 8
    session.send("Network.emulateNetworkConditions", {
        "offline": False, "latency": rtt_ms, "downloadThroughput": rate,
        "uploadThroughput": rate})


def render_seconds(page, url: str) -> float:
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_selector(CHART_DRAWN, timeout=120000)
    elapsed = time.perf_counter() - started
    traces = page.evaluate("document.getElementById('comparison-chart').data.length")
    assert traces == SERIES, traces
    return elapsed


def cold_and_warm(url: str, tries: int, mbit: float, rtt_ms: float) -> tuple[list, list, dict]:
    from playwright.sync_api import sync_playwright

    from tests.conftest import CHROMIUM, CHROMIUM_ARGS

    cold, warm, plotly = [], [], {}
    with sync_playwright() as playwright:
        for _ in range(tries):
            with tempfile.TemporaryDirectory(prefix="sb-profile-") as profile:
                context = playwright.chromium.launch_persistent_context(
                    profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
                page = context.new_page()
                throttle(page, mbit, rtt_ms)

                def seen(response):
                    if "plotly" in response.url and response.url.endswith(".js"):
                        plotly.update(url=response.url, headers=response.all_headers(),
                                      from_cache=response.request.timing["requestStart"] < 0)
                page.on("response", seen)
                cold.append(render_seconds(page, url))
                page.close()
                again = context.new_page()
                throttle(again, mbit, rtt_ms)
                warm.append(render_seconds(again, url))
                context.close()
    return cold, warm, plotly


def loadavg() -> str:
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())


def wire_size(server_url: str, path: str) -> tuple[int, int]:
    """(bytes sent gzipped, bytes sent plain) for a static file."""
    gzipped = http_request(server_url, path=path, headers={"Accept-Encoding": "gzip"})[1]
    plain = http_request(server_url, path=path)[1]
    return len(gzipped), len(plain)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--mbit", type=float, default=20.0)
    parser.add_argument("--rtt-ms", type=float, default=40.0)
    args = parser.parse_args()
    from tests.conftest import free_port

    portal_support.free_port = free_port  # gunicorn on this checkout's port range
    env = bench_env()
    prepare_database(env)  # migrate, collectstatic, empty the run tables
    os.environ.update(env)
    import django

    django.setup()
    load_runs()
    token = api_token(env)
    spec = {"filters": {"benchmark": "cmp-bench"}, "x": "param.loops", "series": "kernel",
            "metric": "time_ms", "title": "200 series"}
    server = Gunicorn(env, workers=2)
    try:
        auth = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        status, body = http_request(server.url, "POST", "/api/v1/comparisons/",
                                    json.dumps(spec).encode(), auth)
        assert status == 201, body[:300]
        url = f"{server.url}/c/{json.loads(body)['slug']}/"
        http_request(server.url, path=url.removeprefix(server.url))  # the page cache is warm
        load = loadavg()
        print(f"{SERIES} series x {X_VALUES} loop sizes; {args.tries} tries each, "
              f"median (best); {os.cpu_count()} CPUs, load average {load} (the render is "
              "CPU-bound: read the figures with the load)")
        for label, mbit, rtt in (("loopback", 0, 0),
                                 (f"{args.mbit:g} Mbit/s, {args.rtt_ms:g} ms RTT", args.mbit,
                                  args.rtt_ms)):
            cold, warm, plotly = cold_and_warm(url, args.tries, mbit, rtt)
            print(f"{label:>28}: cold profile {statistics.median(cold):.2f} s "
                  f"({min(cold):.2f}), warm {statistics.median(warm):.2f} s ({min(warm):.2f}); "
                  f"cold/warm {statistics.median(cold) / statistics.median(warm):.2f}x "
                  f"(targets: warm < 1 s, cold < 2 s); load average {loadavg()}")
        path = plotly["url"].removeprefix(server.url)
        gzipped, plain = wire_size(server.url, path)
        headers = plotly["headers"]
        print(f"Plotly.js at {path}: {gzipped / 1e6:.2f} MB gzipped on the wire, "
              f"{plain / 1e6:.2f} MB plain ({plain / gzipped:.1f}x); "
              f"Content-Encoding {headers.get('content-encoding', 'none')}, "
              f"Cache-Control {headers.get('cache-control')}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()

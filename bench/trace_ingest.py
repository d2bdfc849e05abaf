"""Trace ingest and timeline speed on a synthetic 1,000,000-event ftrace file.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sb_i13_traces_bench \\
        .venv/bin/python bench/trace_ingest.py [--events 1000000] [--windows 300]

1. Writes a consistent synthetic trace (4 CPUs, ~300 tasks with forks, exits and pid reuse,
   wakeups across CPUs, migrations) in tracefs `trace` format.
2. In fresh subprocesses, so each has its own peak RSS: a plain line count of the file (the
   reference: the least any reader must do), and schedtrace's parse + statistics + timeline
   files (what the portal's ingest does before its database writes), with the build of
   schedtrace that runs (compiled by `make compile` / `python -m schedtrace.build`, or pure
   Python). Prints events/s and peak
   RSS of both, and the ratios.
   With --rss-events N[,N...] the same child runs on traces of those sizes too (e.g.
   1000000,10000000) and prints each one's peak RSS: what the Celery worker's ingest holds.
3. Uploads the file to a real gunicorn worker on PostgreSQL (`POST /api/v1/traces/`) with a
   real Celery worker beside it: the answer is 202 with a job (or 201 when done within
   SCHEDBENCH_IMPORT_WAIT), polled until the trace is stored; prints the request's time, the
   ingest's time and the Celery worker's peak RSS, then times
   `GET /api/v1/traces/{id}/timeline/` over many random windows (p50/p95, target p95 <
   200 ms) against the trace's detail GET (a plain database read of every task) on the same
   server in the same run.

With --instructions it prints only what does not depend on the machine's load: valgrind's
(callgrind) instructions per line of the line count and per event of the parse + stats +
timeline child, each the slope between traces of 20,000 and 100,000 events (interpreter
start-up and imports cancel out), and their ratio. Instructions are not time (a cache miss
costs nothing here); use them to compare two versions of the code.
"""

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import portal_support  # noqa: E402
from bench.portal_support import (  # noqa: E402
    PYTHON,
    ROOT,
    Gunicorn,
    api_token,
    bench_env,
    current_rss_mb,
    http_request,
    peak_rss_mb,
    prepare_database,
)
from bench.upload_memory import multipart_body  # noqa: E402

CPUS = 4


def _stamp(ns: int) -> str:
    return f"{ns // 1_000_000_000}.{ns % 1_000_000_000 // 1000:06d}"


def write_trace(path: Path, events: int, seed: int = 1) -> int:
    """A consistent random schedule as ftrace text; returns the number of event lines."""
    rng = random.Random(seed)
    now = 5_000_000_000
    running = dict.fromkeys(range(CPUS), 0)
    state = dict.fromkeys(range(1000, 1300), "S")  # S sleeping, R runnable, "cpu" running
    runnable: list[int] = []
    dead: list[int] = []
    written = 0
    with path.open("w") as out:
        out.write("# tracer: nop\n#\n")
        lines = []
        while written < events:
            now += rng.randint(200, 40_000)
            cpu = rng.randrange(CPUS)
            cur = running[cpu]
            who = f"{'<idle>' if cur == 0 else f'worker {cur % 7}'}-{cur}"
            head = f"{who:>20} [{cpu:03d}] d..2. {_stamp(now)}: "
            roll = rng.random()
            sleepers = [p for p, s in state.items() if s == "S"] if roll < 0.35 else ()
            if sleepers:
                pid = rng.choice(sleepers)
                state[pid] = "R"
                runnable.append(pid)
                lines.append(f"{head}sched_wakeup: comm=worker {pid % 7} pid={pid} prio=120 "
                             f"target_cpu={rng.randrange(CPUS):03d}")
            elif roll < 0.37 and runnable:
                pid = rng.choice(runnable)
                lines.append(f"{head}sched_migrate_task: comm=worker {pid % 7} pid={pid} "
                             f"prio=120 orig_cpu={cpu} dest_cpu={(cpu + 1) % CPUS}")
            elif roll < 0.38 and cur and dead:
                child = dead.pop(0)  # pid reuse
                state[child] = "R"
                runnable.append(child)
                lines.append(f"{head}sched_process_fork: comm=worker {cur % 7} pid={cur} "
                             f"child_comm=worker {child % 7} child_pid={child}")
                lines.append(f"{head}sched_wakeup_new: comm=worker {child % 7} pid={child} "
                             f"prio=120 target_cpu={cpu:03d}")
            else:
                nxt = runnable.pop(rng.randrange(len(runnable))) if runnable else 0
                if cur == 0 and nxt == 0:
                    continue
                prev_state = "X" if cur and rng.random() < 0.003 else rng.choice("RSSD")
                prev_state = "R" if cur == 0 else prev_state
                if cur:
                    if prev_state == "X":
                        lines.append(f"{head}sched_process_exit: comm=worker {cur % 7} "
                                     f"pid={cur} prio=120 group_dead=true")
                        del state[cur]
                        dead.append(cur)
                    else:
                        state[cur] = "R" if prev_state == "R" else "S"
                        if prev_state == "R":
                            runnable.append(cur)
                prev_comm = f"worker {cur % 7}" if cur else f"swapper/{cpu}"
                next_comm = f"worker {nxt % 7}" if nxt else f"swapper/{cpu}"
                lines.append(f"{head}sched_switch: prev_comm={prev_comm} prev_pid={cur} "
                             f"prev_prio=120 prev_state={prev_state} ==> next_comm={next_comm} "
                             f"next_pid={nxt} next_prio=120")
                if nxt:
                    state[nxt] = "cpu"
                running[cpu] = nxt
            if len(lines) >= 10_000:
                written += len(lines)
                out.write("\n".join(lines) + "\n")
                lines = []
        written += len(lines)
        out.write("\n".join(lines) + "\n" if lines else "")
    return written


CHILD = {
    "count": "n = 0\nwith open(PATH, 'rb') as f:\n    for _ in f:\n        n += 1\nprint(n)",
    "schedtrace": (
        "import tempfile, schedtrace\n"
        "from traces.timeline import TimelineWriter\n"
        "with tempfile.TemporaryDirectory() as d:\n"
        "    w = TimelineWriter(d)\n"
        "    s, t = schedtrace.analyse(PATH, on_segment=w.segment, on_wakeup=w.wakeup)\n"
        "    w.finish(cpus=t.cpus.keys(), task_table=[[x.pid, x.comm] for x in t.tasks],\n"
        "             start_ns=t.first_ns, end_ns=t.last_ns)\n"
        "print(t.events)"),
}


def child_run(kind: str, path: Path) -> tuple[float, float, int, float]:
    """(seconds, peak RSS MB, printed count, CPU seconds: user + system) of a fresh interpreter
    doing `kind`. The CPU time is what the child itself ran: less at the mercy of the other
    processes on a shared machine than the wall time (not free of them: caches are shared)."""
    code = f"PATH = {str(path)!r}\n{CHILD[kind]}"
    started = time.perf_counter()
    process = subprocess.Popen([PYTHON, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                               env={**os.environ, "DJANGO_SETTINGS_MODULE": "portal.settings"})
    output = process.stdout.read()
    # Reap it ourselves: wait4 gives this child's own peak RSS (ru_maxrss, in KB).
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    if process.returncode:
        raise SystemExit(f"{kind} child failed with {process.returncode}")
    return (elapsed, usage.ru_maxrss / 1024, int(output.split()[-1]),
            usage.ru_utime + usage.ru_stime)


def child_instructions(kind: str, path: Path) -> tuple[int, int]:
    """(instructions executed, printed count) of the `kind` child under callgrind."""
    code = f"PATH = {str(path)!r}\n{CHILD[kind]}"
    process = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", PYTHON, "-c", code],
        cwd=ROOT, capture_output=True, text=True, check=True,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "portal.settings"})
    found = re.search(r"Collected : (\d+)", process.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from callgrind:\n{process.stderr[-2000:]}")
    return int(found.group(1)), int(process.stdout.split()[-1])


def print_instructions(folder: Path, small: int = 20_000, big: int = 100_000) -> None:
    """Instructions per line (count) and per event (schedtrace): slopes between two sizes."""
    paths = {size: folder / f"trace-instructions-{size}.trace" for size in (small, big)}
    try:
        for size, path in paths.items():
            write_trace(path, size)
        per = {}
        for kind in ("count", "schedtrace"):
            (low, low_n), (high, high_n) = (child_instructions(kind, paths[size])
                                            for size in (small, big))
            per[kind] = (high - low) / (high_n - low_n)
        print(f"valgrind instructions: line count {per['count']:,.0f} a line; schedtrace parse "
              f"+ stats + timeline {per['schedtrace']:,.0f} an event "
              f"({per['schedtrace'] / per['count']:.2f}x; {small:,} -> {big:,} events)")
    finally:
        for path in paths.values():
            path.unlink(missing_ok=True)


def timed_pairs(path: Path, runs: int) -> tuple[tuple, tuple]:
    """The line count and the parse child (child_run's figures), alternated `runs` times: the
    load on a shared machine changes from second to second, so each pair's ratio is measured
    close together. Prints each pair; returns the pair with the median wall ratio."""
    pairs = []
    for run in range(runs):
        count = child_run("count", path)
        parse = child_run("schedtrace", path)
        pairs.append((count, parse))
        print(f"  run {run + 1}: line count {count[0]:.2f} s (CPU {count[3]:.2f} s), parse "
              f"{parse[0]:.2f} s (CPU {parse[3]:.2f} s) = {parse[2] / parse[0]:,.0f} events/s "
              f"({parse[2] / parse[3]:,.0f} a CPU second); {parse[0] / count[0]:.1f}x the line "
              f"count's time, {parse[3] / count[3]:.1f}x its CPU time (load {load()})",
              flush=True)
    pairs.sort(key=lambda pair: pair[1][0] / pair[0][0])
    return pairs[len(pairs) // 2]


def load() -> str:
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())


def rss_by_size(sizes: list[int], folder: Path) -> None:
    """Peak RSS of the parse + stats + timeline child on traces of these sizes."""
    for size in sizes:
        path = folder / f"trace-rss-{size}.trace"
        try:
            written = write_trace(path, size)
            seconds, rss, events, _ = child_run("schedtrace", path)
            print(f"peak RSS at {written:,} event lines ({path.stat().st_size / 2**20:.0f} MB): "
                  f"{rss:.0f} MB ({events / seconds:,.0f} events/s, load {load()})", flush=True)
        finally:
            path.unlink(missing_ok=True)


class CeleryWorker:
    """A real `celery worker` (solo pool: the ingest runs in this very process, so its
    ru_maxrss is the ingest's peak)."""

    def __init__(self, env: dict):
        self.process = subprocess.Popen(
            [PYTHON, "-m", "celery", "-A", "portal", "worker", "--pool=solo", "--loglevel=WARNING",
             "-Q", env["SCHEDBENCH_CELERY_QUEUE"], "--without-gossip", "--without-mingle"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> float:
        """Stop it; its peak RSS in MB."""
        self.process.terminate()
        _, _, usage = os.wait4(self.process.pid, 0)
        return usage.ru_maxrss / 1024


def upload_through_worker(server, token, path: Path,
                          title: str) -> tuple[dict, float, float, int]:
    """POST the trace; poll its job when the answer is 202. (201 body, request s, total s,
    the POST's HTTP status)."""
    content_type, length, body = multipart_body(path, {"title": title})
    began = time.perf_counter()
    status, data = http_request(server.url, "POST", "/api/v1/traces/", body, timeout=1800,
                                headers={"Authorization": f"Token {token}",
                                         "Content-Type": content_type,
                                         "Content-Length": str(length)})
    request_s = time.perf_counter() - began
    assert status in (201, 202), data[:500]
    answer = json.loads(data)
    print(f"POST /api/v1/traces/: HTTP {status} in {request_s:.1f} s", flush=True)
    if status == 201:
        return answer, request_s, request_s, status
    job_path = answer["url"].split("://", 1)[1].split("/", 1)[1]
    while True:
        time.sleep(1)
        _, polled = http_request(server.url, path="/" + job_path,
                                 headers={"Authorization": f"Token {token}"})
        job = json.loads(polled)
        if job["status"] not in ("queued", "running"):
            break
    assert job["status"] == "succeeded", job
    return job["result"], request_s, time.perf_counter() - began, status


def _how_ingested(status: int, size_bytes: int, env: dict) -> str:
    """Who ingested the upload and whether the request saw it done (traces.jobs: an upload of
    at most SCHEDBENCH_TRACE_INLINE_KB is ingested in the request itself, a bigger one by the
    Celery worker, which the request waits for up to SCHEDBENCH_IMPORT_WAIT seconds)."""
    inline = size_bytes <= int(env.get("SCHEDBENCH_TRACE_INLINE_KB", "1024")) * 1024
    who = "in the request itself" if inline else "by the Celery worker"
    if status == 201:
        return f"{who}, done within the request's wait (HTTP 201)"
    return f"{who}, after the request had answered (HTTP 202, job polled to the end)"


def timeline_latencies(url: str, trace_id: int, duration_ms: float, windows: int):
    rng = random.Random(5)
    times, counts = [], []
    for _ in range(windows):
        width = duration_ms * 10 ** rng.uniform(-5, 0)
        start = rng.uniform(0, duration_ms - width)
        path = (f"/api/v1/traces/{trace_id}/timeline/?start_ms={start:.6f}"
                f"&end_ms={start + width:.6f}")
        began = time.perf_counter()
        status, body = http_request(url, path=path)
        times.append(time.perf_counter() - began)
        assert status == 200, body[:300]
        counts.append(len(json.loads(body)["segments"]))
    return times, counts


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--windows", type=int, default=300)
    parser.add_argument("--rss-events", default="",
                        help="comma-separated trace sizes (events) to print peak RSS for")
    parser.add_argument("--instructions", action="store_true",
                        help="print only valgrind instruction counts (load-independent)")
    parser.add_argument("--parse-only", action="store_true",
                        help="stop after the line count and parse rows (no upload, no server)")
    parser.add_argument("--runs", type=int, default=1,
                        help="line count and parse, alternated this many times (the ratio of "
                             "each pair is printed, then the median pair's)")
    args = parser.parse_args()
    from tests.conftest import free_port

    portal_support.free_port = lambda: free_port(8200, 8299)
    folder = ROOT / "var" / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    if args.instructions:
        import schedtrace._compiled

        print(f"schedtrace: {schedtrace._compiled.STATE}", flush=True)
        print_instructions(folder)
        return
    path = folder / f"trace-{args.events}.trace"
    started = time.perf_counter()
    lines = write_trace(path, args.events)
    size = path.stat().st_size / 2**20
    print(f"input: {lines:,} event lines, {size:.0f} MB, written in "
          f"{time.perf_counter() - started:.1f} s ({os.cpu_count()} CPUs, load {load()})")
    import schedtrace._compiled

    print(f"schedtrace: {schedtrace._compiled.STATE}", flush=True)
    (count_s, count_rss, counted, count_cpu), (parse_s, parse_rss, events, parse_cpu) = \
        timed_pairs(path, args.runs)
    print(f"reference line count: {counted:,} lines in {count_s:.2f} s = "
          f"{counted / count_s:,.0f} lines/s (CPU {count_cpu:.2f} s), peak RSS "
          f"{count_rss:.0f} MB (load {load()})")
    print(f"schedtrace parse + stats + timeline files: {events:,} events in {parse_s:.2f} s = "
          f"{events / parse_s:,.0f} events/s (CPU {parse_cpu:.2f} s: {events / parse_cpu:,.0f} "
          f"a CPU second), peak RSS {parse_rss:.0f} MB ({parse_s / count_s:.1f}x the line "
          f"count's time, {parse_cpu / count_cpu:.1f}x its CPU time, {parse_rss / count_rss:.2f}x"
          f" its RSS; file {size:.0f} MB; load {load()})", flush=True)
    if args.rss_events:
        rss_by_size([int(n) for n in args.rss_events.split(",")], folder)
    if args.parse_only:
        path.unlink()
        return

    env = bench_env(SCHEDBENCH_TRACE_MAX_MB=str(int(size) + 64),
                    SCHEDBENCH_CELERY_QUEUE=f"bench-traces-{os.getpid()}")
    prepare_database(env)
    token = api_token(env)
    server = Gunicorn(env, workers=1)
    worker = CeleryWorker(env)
    try:
        [web] = server.worker_pids()
        idle = current_rss_mb(web)
        created, request_s, total_s, status = upload_through_worker(server, token, path,
                                                                    "bench 1M")
        web_peak = peak_rss_mb(web)
        worker_peak = worker.stop()
        worker = None
        print(f"ingest {_how_ingested(status, path.stat().st_size, env)}: "
              f"{created['events']:,} events stored "
              f"{total_s:.1f} s after the POST ({created['events'] / total_s:,.0f} events/s end "
              f"to end, {created['tasks']} tasks); request held {request_s:.1f} s; gunicorn "
              f"worker RSS {idle:.0f} MB idle, peak {web_peak:.0f} MB; Celery worker peak RSS "
              f"{worker_peak:.0f} MB for a {size:.0f} MB trace (load {load()})")
        times, counts = timeline_latencies(server.url, created["id"], created["duration_ms"],
                                           args.windows)
        reference = []
        for _ in range(50):
            began = time.perf_counter()
            http_request(server.url, path=f"/api/v1/traces/{created['id']}/")
            reference.append(time.perf_counter() - began)
        p95 = percentile(times, 0.95)
        print(f"timeline over {args.windows} random windows (1e-5 .. 1 x the trace): "
              f"p50 {statistics.median(times) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, max "
              f"{max(times) * 1000:.1f} ms (target p95 < 200 ms); segments per answer median "
              f"{statistics.median(counts):.0f}, max {max(counts)}")
        print(f"reference GET /api/v1/traces/{{id}}/ (every task): p50 "
              f"{statistics.median(reference) * 1000:.1f} ms; timeline p95 / reference p50 = "
              f"{p95 / statistics.median(reference):.1f}x (load {load()})")
    finally:
        if worker is not None:
            worker.stop()
        server.stop()
        path.unlink()


if __name__ == "__main__":
    main()

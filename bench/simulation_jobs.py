"""Simulation jobs fanned out over real Celery workers (Redis broker, PostgreSQL).

    .venv/bin/python bench/simulation_jobs.py [--points-empty 40]

Prints, measured in the same run:
- a sweep of 4 kernels x 8 loop sizes x 5 repeats (threadtest, 32 points) on 1 worker, then on
  2 workers (separate `celery worker --concurrency 1` processes), the wall time of each from
  launch to the job's `succeeded`, and the ratio (target, issue 5: 2 workers <= 60% of 1);
- the queueing overhead per point: a job of trivial points (1 iteration, loops 0) on 1 worker,
  wall time per point minus the simulator's own time.
Each phase uses a fresh seed and empty tables, so no run is re-used from an earlier phase; the
1- and 2-worker phases alternate for --rounds rounds and their medians are compared.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.portal_support import PYTHON, ROOT, bench_env, prepare_database  # noqa: E402

KERNELS = ["2.6.22", "2.6.23", "2.6.24", "2.6.25"]
LOOPS = [1_000_000, 2_000_000, 5_000_000, 10_000_000, 15_000_000, 20_000_000, 30_000_000,
         40_000_000]
QUEUE = f"bench-sim-{uuid.uuid4().hex[:8]}"
ENV = bench_env(DATABASE_URL="postgres://postgres@127.0.0.1:5432/schedbench_sim_bench",
                CELERY_BROKER_URL=os.environ.get("CELERY_BROKER_URL",
                                                 "redis://127.0.0.1:6379/0"),
                SCHEDBENCH_CELERY_QUEUE=QUEUE, LOG_LEVEL="WARNING")


def start_workers(count: int) -> list[subprocess.Popen]:
    log = (ROOT / "var" / "bench-simulation-workers.log").open("ab")
    return [subprocess.Popen(
        [PYTHON, "-m", "celery", "-A", "portal", "worker", "--concurrency", "1",
         "--loglevel", "WARNING", "-Q", QUEUE, "-n", f"{QUEUE}-{n}@%h", "--without-gossip",
         "--without-mingle", "--without-heartbeat"],
        cwd=ROOT, env=ENV, stdout=log, stderr=subprocess.STDOUT) for n in range(count)]


def stop_workers(workers: list[subprocess.Popen]) -> None:
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.wait(timeout=60)


def machine_busy_seconds() -> float:
    """CPU seconds every process on the machine has used so far (from /proc/stat)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def workers_cpu_seconds(workers: list[subprocess.Popen]) -> float:
    """CPU seconds used by the worker processes and their pool children."""
    pids = []
    for worker in workers:
        pids.append(worker.pid)
        children = Path(f"/proc/{worker.pid}/task/{worker.pid}/children")
        pids += [int(pid) for pid in children.read_text().split()] if children.exists() else []
    total = 0
    for pid in pids:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(stat[11]) + int(stat[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def clear_tables() -> None:
    from benchmarks.models import Comparison, Run
    from simulations.models import SimulationJob

    SimulationJob.objects.all().delete()
    Comparison.objects.all().delete()
    Run.objects.all().delete()


def run_job(spec: dict, owner) -> tuple[float, object]:
    """Launch, wait for the end; the wall time from launch to the last point's commit."""
    from simulations.models import ACTIVE
    from simulations.services import simulation_create

    started = time.perf_counter()
    job = simulation_create(spec=spec, owner=owner)
    while True:
        job.refresh_from_db()
        if job.status not in ACTIVE:
            break
        time.sleep(0.1)
    elapsed = time.perf_counter() - started
    if job.status != "succeeded":
        raise SystemExit(f"job {job.pk} ended {job.status}: {job.error}")
    return elapsed, job


def sweep_phase(workers: int, seed: int, owner) -> float:
    clear_tables()
    pool = start_workers(workers)
    try:
        run_job({"workload": "threadtest", "kernels": KERNELS[:1], "repeat": 1,
                 "params": {"iterations": 1}, "seed": 10_000 + seed,
                 "sweep": {"loops": list(range(workers * 2))}}, owner)  # warm every worker
        busy, own = machine_busy_seconds(), workers_cpu_seconds(pool)
        elapsed, job = run_job({"workload": "threadtest", "kernels": KERNELS, "repeat": 5,
                                "sweep": {"loops": LOOPS}, "seed": seed}, owner)
        own = workers_cpu_seconds(pool) - own
        others = machine_busy_seconds() - busy - own
        rows = list(job.points.values_list("worker", "started", "finished", "wall_seconds"))
        busy = sum((end - start).total_seconds() for _, start, end, _ in rows)
        simulated = sum(wall for *_, wall in rows)
        print(f"{workers} worker(s): {job.total} points, {job.events:,} events, "
              f"{elapsed:.2f} s wall; points spread over {len({r[0] for r in rows})} worker(s), "
              f"{busy / elapsed:.2f} points in flight on average, simulator time "
              f"{simulated:.2f} s in all; CPU: workers {own:.1f} s, everything else on the "
              f"machine {others:.1f} s, of {os.cpu_count() * elapsed:.1f} s available")
        return elapsed
    finally:
        stop_workers(pool)


def overhead_phase(count: int, owner) -> None:
    clear_tables()
    pool = start_workers(1)
    try:
        run_job({"workload": "threadtest", "kernels": ["2.6.24"], "params": {"iterations": 1},
                 "sweep": {"loops": [0, 1]}, "seed": 99}, owner)  # warm-up
        elapsed, job = run_job({"workload": "threadtest", "kernels": ["2.6.24"],
                                "params": {"iterations": 1},
                                "sweep": {"loops": list(range(count))}, "seed": 5}, owner)
        simulated = sum(p.wall_seconds or 0 for p in job.points.all())
        print(f"empty workload, 1 worker: {count} points in {elapsed:.2f} s = "
              f"{1000 * elapsed / count:.1f} ms per point end to end; simulator time "
              f"{1000 * simulated / count:.2f} ms per point; queueing + storing overhead "
              f"{1000 * (elapsed - simulated) / count:.1f} ms per point")
    finally:
        stop_workers(pool)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points-empty", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternate 1 and 2 workers this many times; medians are compared")
    args = parser.parse_args()
    prepare_database(ENV)
    os.environ.update(ENV)
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    owner, _ = get_user_model().objects.get_or_create(username="bench-simulations")
    print(f"broker {ENV['CELERY_BROKER_URL']}, database {ENV['DATABASE_URL']}, "
          f"queue {QUEUE}, {os.cpu_count()} CPUs")
    # Alternating rounds and medians: the machine may be shared, and its load drifts.
    ones, twos = [], []
    for round_number in range(args.rounds):
        ones.append(sweep_phase(1, seed=1 + 2 * round_number, owner=owner))
        twos.append(sweep_phase(2, seed=2 + 2 * round_number, owner=owner))
    one, two = statistics.median(ones), statistics.median(twos)
    print(f"median of {args.rounds}: 1 worker {one:.2f} s, 2 workers {two:.2f} s; "
          f"ratio 2 workers / 1 worker: {100 * two / one:.0f}% (target <= 60%)")
    overhead_phase(args.points_empty, owner)


if __name__ == "__main__":
    main()

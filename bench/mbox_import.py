"""mbox import speed on PostgreSQL, through the import job a worker runs.

    .venv/bin/python bench/mbox_import.py [--messages 100000 [25000 ...]]

1. Generates an archive of --messages messages (threads of 20, every reply quotes its parent,
   one in four pastes its own results table: bench/discussions_speed.py's generator).
2. Creates (if needed), migrates and empties its database (DATABASE_URL, default
   postgres://postgres@127.0.0.1:5432/sb_mbox_import_bench).
3. In a fresh process: the portal's import job function (what the Celery worker runs: read,
   thread, store, extract tables as runs in batches, link them), with its progress stages
   timed, then the reference, Python's own mailbox + email parsing of every message (the
   least any importer does). Prints messages/s of both, the ratio, runs extracted and the load,
   and the CPU time of the importing process and of its PostgreSQL server process (when the
   server runs on this machine), and its peak RSS (VmHWM).
4. Given more than one --messages, each size runs in its own fresh process and a summary
   compares their peak RSS with their archive sizes: an import whose memory does not follow
   the archive shows a peak RSS ratio near 1 while the archive grows 4x.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.discussions_speed import thread_mbox  # noqa: E402
from bench.portal_support import PYTHON, bench_env, prepare_database  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/sb_mbox_import_bench"
PER_THREAD = 20


def load() -> str:
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())


def server_process(connection) -> int | None:
    """The PostgreSQL server process serving this connection, when it runs on this machine
    (its CPU time is then readable in /proc), else None."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    return pid if Path(f"/proc/{pid}/stat").exists() else None


def process_cpu(pid: int | None) -> float:
    """User plus system CPU seconds of a process (0 when unknown)."""
    if not pid:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def write_archive(path: Path, messages: int) -> None:
    with path.open("w") as out:
        for thread in range(max(1, messages // PER_THREAD)):
            out.write(thread_mbox(thread, PER_THREAD, 3))


def reference(path: Path) -> tuple[int, float]:
    """Messages parsed by the standard library, and the seconds it took."""
    import email
    import email.policy
    import mailbox

    started = time.perf_counter()
    count = 0
    for message in mailbox.mbox(str(path), factory=None, create=False):
        parsed = email.message_from_bytes(message.as_bytes(), policy=email.policy.default)
        parsed.get_body(("plain",))
        count += 1
    return count, time.perf_counter() - started


def _status_mb(field: str) -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def reset_peak_rss() -> float | None:
    """Start the process's peak RSS (VmHWM) afresh, so what ran before the import (Django's
    setup, storing the archive) does not count; the RSS now, or None where Linux's
    clear_refs is not there."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return None
    return _status_mb("VmRSS")


def peak_rss_mb() -> float | None:
    return _status_mb("VmHWM")


def inner(path: Path, result_path: Path | None = None) -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.files import File
    from django.db import connection

    from discussions import importjobs
    from discussions.models import ImportJob, Thread

    Thread.objects.all().delete()
    if connection.vendor == "postgresql":
        # Earlier runs deleted the same message ids: without this every lookup of an id would
        # visit the dead rows of every earlier run (not what a real database looks like).
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE discussions_post")
            cursor.execute("VACUUM ANALYZE discussions_thread")
    user, _ = get_user_model().objects.get_or_create(username="bench-mbox-importer")
    with path.open("rb") as handle:
        job = ImportJob(owner=user, filename=path.name, size=path.stat().st_size)
        job.file.save(path.name, File(handle), save=True)
    stages: dict[str, float] = {}
    real = importjobs._progress

    def timed(job_id):
        report = real(job_id)
        last = {"stage": None, "at": time.perf_counter()}

        def both(stage, done, total):
            now = time.perf_counter()
            if stage != last["stage"]:
                if last["stage"]:
                    stages[last["stage"]] = stages.get(last["stage"], 0) + now - last["at"]
                last.update(stage=stage, at=now)
                print(f"  {stage} ({total:,} to do) at load {load()}", flush=True)
            report(stage, done, total)
        timed.last = last
        return both

    importjobs._progress = timed
    backend = server_process(connection)
    rss_before = reset_peak_rss()  # Django set up and the archive stored: the import's start
    started, cpu_started = time.perf_counter(), time.process_time()
    server_started = process_cpu(backend)
    outcome = importjobs.import_job_run(job_id=job.pk)
    peak = peak_rss_mb()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    server_cpu = process_cpu(backend) - server_started if backend else None
    last = getattr(timed, "last", None)
    if last and last["stage"]:
        stages[last["stage"]] = stages.get(last["stage"], 0) + time.perf_counter() - last["at"]
    job.refresh_from_db()
    # The reference runs after the import: run first, what it left in the process (a
    # different amount each time) was the baseline of the import's peak RSS.
    counted, ref_s = reference(path)
    print(f"reference (mailbox + email parse of every message): {counted:,} messages in "
          f"{ref_s:.1f} s = {counted / ref_s:,.0f} messages/s (load {load()})", flush=True)
    result = job.report or {}
    imported = result.get("imported", 0)
    print(f"import job: {outcome}; {imported:,} messages in {seconds:.1f} s = "
          f"{imported / seconds:,.0f} messages/s including extraction "
          f"({seconds / ref_s:.1f}x the reference's time); {result.get('runs_extracted')} runs "
          f"extracted, {len(result.get('repeated', []))} repeats linked, "
          f"{len(result.get('problems', []))} problems; {Thread.objects.count():,} threads "
          f"(load {load()})")
    print("  stages: " + ", ".join(f"{name} {value:.1f} s" for name, value in stages.items()))
    # On a shared machine the wall time is mostly waiting for a CPU: the import process's own
    # CPU time (the database server's is not in it) says what the import itself costs.
    print(f"  CPU time of the importing process: {cpu:.1f} s ({imported / cpu:,.0f} messages "
          f"per CPU-second)")
    if result_path is not None:
        result_path.write_text(json.dumps({"archive_mb": path.stat().st_size / 2**20,
                                           "peak_mb": peak, "before_mb": rss_before,
                                           "messages": imported, "seconds": seconds}))
    if peak is not None and rss_before is not None:
        archive_mb = path.stat().st_size / 2**20
        print(f"  peak RSS of the importing process: {peak:.0f} MB ({rss_before:.0f} MB before "
              f"the import): {(peak - rss_before) / archive_mb:.1f}x the archive's "
              f"{archive_mb:.0f} MB")
    if server_cpu is not None:
        # The importer's writer thread overlaps the two: with a CPU free for each, the wall
        # time tends to the larger of them rather than their sum.
        print(f"  CPU time of its PostgreSQL server process: {server_cpu:.1f} s")
    job.file.delete(save=False)


def run_size(messages: int, folder: Path, env: dict) -> dict:
    """One archive of `messages` imported in a fresh process; its figures."""
    path = folder / f"bench-{messages}.mbox"
    result = folder / f"bench-{messages}.json"
    started = time.perf_counter()
    write_archive(path, messages)
    prepare_database(env)  # the run tables emptied: each size finds the same runs new
    print(f"archive: {messages:,} messages, {path.stat().st_size / 2**20:.0f} MB, written "
          f"in {time.perf_counter() - started:.1f} s ({os.cpu_count()} CPUs, load {load()})",
          flush=True)
    try:
        subprocess.run([PYTHON, __file__, "--inner", str(path), "--result", str(result)],
                       cwd=ROOT, env=env, check=True)
        return json.loads(result.read_text())
    finally:
        path.unlink()
        result.unlink(missing_ok=True)


def memory_summary(figures: list[dict]) -> None:
    """Peak RSS against archive size, each size against the smallest."""
    base = figures[0]
    print("peak RSS against archive size (each import in a fresh process):")
    for item in figures:
        print(f"  {item['messages']:>9,} messages, archive {item['archive_mb']:6.0f} MB: peak RSS "
              f"{item['peak_mb']:5.0f} MB ({item['peak_mb'] - item['before_mb']:4.0f} MB over "
              f"the {item['before_mb']:.0f} MB before the import)")
    base_growth = base["peak_mb"] - base["before_mb"]
    for item in figures[1:]:
        growth = item["peak_mb"] - item["before_mb"]
        print(f"  {item['messages']:,} against {base['messages']:,} messages: archive "
              f"{item['archive_mb'] / base['archive_mb']:.2f}x, peak RSS "
              f"{item['peak_mb'] / base['peak_mb']:.2f}x, RSS over the start "
              f"{growth / base_growth:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, nargs="+", default=[100_000])
    parser.add_argument("--inner", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        return inner(Path(args.inner), Path(args.result) if args.result else None)
    folder = ROOT / "var" / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    env = bench_env(DATABASE_URL=os.environ.get("DATABASE_URL", DEFAULT_DB),
                    SCHEDBENCH_MAX_UPLOAD_MB="4096")
    figures = [run_size(messages, folder, env) for messages in sorted(args.messages)]
    if len(figures) > 1 and all(item["peak_mb"] for item in figures):
        memory_summary(figures)


if __name__ == "__main__":
    main()

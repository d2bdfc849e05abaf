"""Peak memory of the server while it ingests a 200 MB raw upload (parsed by streaming).

    .venv/bin/python bench/upload_memory.py [--mb 200]

Writes a file of `<loops> loops time <ms> ms` lines (what the loop-size variant of threadtest
prints, one line per repeat), uploads it with a streamed multipart body to a real gunicorn
worker on PostgreSQL, and reads the worker's VmHWM (peak resident set) from /proc before and
after. Target (issue 3): peak RSS under 300 MB.
"""

import argparse
import json
import random
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.portal_support import (  # noqa: E402
    ROOT,
    Gunicorn,
    api_token,
    bench_env,
    current_rss_mb,
    http_request,
    peak_rss_mb,
    prepare_database,
)

CHUNK = 1024 * 1024


def write_input(path: Path, megabytes: int) -> int:
    rng, lines, written = random.Random(1), 0, 0
    target = megabytes * 1024 * 1024
    with path.open("w") as out:
        while written < target:
            block = "".join(
                f"{10_000_000} loops time {rng.randint(13000, 16000)} ms\n" for _ in range(10_000))
            out.write(block)
            written += len(block)
            lines += 10_000
    return lines


def multipart_body(path: Path, fields: dict) -> tuple[str, int, object]:
    boundary = uuid.uuid4().hex
    head = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
        for k, v in fields.items())
    head += (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
             f'filename="{path.name}"\r\nContent-Type: text/plain\r\n\r\n').encode()
    tail = f"\r\n--{boundary}--\r\n".encode()

    def chunks():
        yield head
        with path.open("rb") as source:
            while block := source.read(CHUNK):
                yield block
        yield tail

    length = len(head) + path.stat().st_size + len(tail)
    return f"multipart/form-data; boundary={boundary}", length, chunks()


def upload(url: str, token: str, path: Path) -> tuple[float, int, dict]:
    content_type, length, body = multipart_body(
        path, {"benchmark": "threadtest", "kernel": "2.6.24", "machine": "bench-box"})
    started = time.perf_counter()
    status, data = http_request(url, "POST", "/api/v1/uploads/", body, timeout=1800, headers={
        "Authorization": f"Token {token}", "Content-Type": content_type,
        "Content-Length": str(length)})
    return time.perf_counter() - started, status, json.loads(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    args = parser.parse_args()
    env = bench_env(SCHEDBENCH_MAX_UPLOAD_MB=str(args.mb + 50))
    prepare_database(env)
    token = api_token(env)
    folder = ROOT / "var" / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"loops-time-{args.mb}mb.txt"
    lines = write_input(path, args.mb)
    print(f"input: {path.stat().st_size / 2**20:.0f} MB, {lines:,} result lines")
    server = Gunicorn(env, workers=1)
    try:
        [worker] = server.worker_pids()
        idle_rss = current_rss_mb(worker)
        elapsed, status, payload = upload(server.url, token, path)
        peak = peak_rss_mb(worker)
    finally:
        server.stop()
        path.unlink()
    if status != 201:
        raise SystemExit(f"upload failed: HTTP {status}: {payload}")
    n = sum(m["n"] for run in payload["runs"] for m in run["metrics"].values())
    print(f"HTTP {status} in {elapsed:.1f} s: {len(payload['runs'])} run(s), {n:,} samples "
          f"({n / elapsed:,.0f} samples/s, {args.mb / elapsed:.1f} MB/s)")
    print(f"gunicorn worker RSS: {idle_rss:.0f} MB idle, peak {peak:.0f} MB during the upload "
          f"(target < 300 MB)")


if __name__ == "__main__":
    main()

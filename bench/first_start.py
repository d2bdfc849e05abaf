"""A newcomer's first start (issue 23): time from `make run` in a fresh clone to the first page,
then the same for a warm start (the clone's second `make run`), with the machine's load average
beside each figure, since on a shared 2-core machine the load moves them most.

    .venv/bin/python bench/first_start.py [--repo .] [--keep] [--compile-wait 600]

The clone is `git clone` of the repository's committed HEAD into a temporary folder, so the fresh
start creates its own .venv (pip uses whatever package cache or wheel folder the machine has:
run it once before measuring if the cache is cold), its own database, demo and, in the
background, the compiled simulator. The script also waits for that background build and says
how long it took and whether the worker moved to it. The reference, measured in the same run,
is Django's own start-up in the clone (`manage.py check`): a warm start is printed as a ratio of
it. Targets: first page within 60 s, warm start within 10 s.
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

# what must not leak from the caller into the clone's `make run`
CLEARED = ("SCHEDBENCH_DATA_DIR", "DATABASE_URL", "CELERY_BROKER_URL", "SCHEDBENCH_MEDIA_DIR",
           "VIRTUAL_ENV", "DJANGO_SETTINGS_MODULE")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f} (5 min {five:.2f}) on {os.cpu_count()} CPUs"


class MakeRun:
    """`make run` in the clone, its output kept with the second each line came."""

    def __init__(self, clone: Path, port: int):
        env = {k: v for k, v in os.environ.items() if k not in CLEARED}
        self.started = time.monotonic()
        self.proc = subprocess.Popen(["make", "run", f"PORT={port}"], cwd=clone, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.lines: list[tuple[float, str]] = []
        self.url = f"http://127.0.0.1:{port}/"
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append((time.monotonic() - self.started, line.rstrip("\n")))

    def first_page(self, timeout: float) -> float:
        deadline = self.started + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit("make run stopped:\n" + self.output())
            try:
                with urllib.request.urlopen(self.url, timeout=60) as answer:
                    if answer.status == 200:
                        return time.monotonic() - self.started
            except OSError:
                time.sleep(0.2)
        raise SystemExit(f"no page within {timeout} s:\n" + self.output())

    def wait_for(self, text: str, timeout: float) -> float | None:
        deadline = self.started + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            for at, line in self.lines:
                if text in line:
                    return at
            time.sleep(0.5)
        return None

    def stop(self):
        os.killpg(self.proc.pid, signal.SIGINT)  # what Ctrl-C in the terminal sends
        try:
            self.proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def output(self) -> str:
        return "\n".join(f"  {at:6.1f} s  {line}" for at, line in self.lines)


def django_start(clone: Path) -> float:
    started = time.monotonic()
    subprocess.run([str(clone / ".venv/bin/python"), "manage.py", "check"], cwd=clone,
                   check=True, capture_output=True,
                   env={k: v for k, v in os.environ.items() if k not in CLEARED})
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--keep", action="store_true", help="keep the clone")
    parser.add_argument("--compile-wait", type=float, default=600,
                        help="seconds to wait for the background build after the first page")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="schedbench-first-start-"))
    clone = workdir / "schedbench"
    subprocess.run(["git", "clone", "--quiet", args.repo, str(clone)], check=True)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, check=True,
                          capture_output=True, text=True).stdout.strip()
    print(f"fresh clone of {args.repo} at {head} in {clone}")
    try:
        fresh = MakeRun(clone, free_port())
        print(f"load at start: {load()}")
        fresh_page = fresh.first_page(timeout=900)
        fresh_load = load()
        compiled = fresh.wait_for("the worker switches", timeout=fresh_page + args.compile_wait)
        restarted = fresh.wait_for("worker restarts to use it", timeout=(compiled or 0) + 60)
        fresh.stop()
        print("fresh start, what `make run` printed (seconds since it began):")
        print(fresh.output())
        warm = MakeRun(clone, free_port())
        warm_page = warm.first_page(timeout=300)
        warm_load = load()
        warm.stop()
        print("warm start, what `make run` printed:")
        print(warm.output())
        reference = django_start(clone)
        print()
        print(f"fresh clone, `make run` to first page: {fresh_page:6.1f} s  ({fresh_load})"
              f"  target 60 s")
        print(f"warm start, `make run` to first page:  {warm_page:6.1f} s  ({warm_load})"
              f"  target 10 s")
        print(f"reference, `manage.py check` in the clone: {reference:.1f} s ({load()}); "
              f"warm start = {warm_page / reference:.1f} x Django's own start-up")
        if compiled is None:
            print("background build: not finished (or not possible) within the wait")
        else:
            print(f"background build finished {compiled:.0f} s after `make run` began"
                  f" ({compiled - fresh_page:.0f} s after the first page); worker "
                  f"{'restarted on it' if restarted else 'restart not seen'}")
    finally:
        if args.keep:
            print(f"kept {clone}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

"""`make run`: the development server and one Celery worker, started quietly.

One line per phase and the URL last. The site serves as soon as the database and the demo are
ready; the compiled builds of the trace parser and the simulator (schedtrace/build.py, seconds;
simulator/build.py, a minute or more the first time) run in the background at low priority,
their progress in <data dir>/simulator-build.log, and the worker moves to them when they are
done (portal/celery.py). What the server and the worker print
passes through, less their start-up banners and the lines every start repeats; the server's
line per request goes to <data dir>/requests.log instead, unless the request failed (5xx).

    python -m portal.devrun [--port 8000] [--no-compile]
"""

import argparse
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

# Start-up lines of runserver and the worker that say nothing a newcomer needs (the URL is
# printed once the server answers); anything else, errors first, passes through.
NOISE = re.compile("|".join([
    r"^Watching for file changes", r"^Performing system checks", r"^System check identified no",
    r"^\w+ \d\d, \d{4} - \d\d:\d\d:\d\d$", r"^Django version ", r"^Starting development server",
    r"^Quit the server with", r"^WARNING: This is a development server",
    r"^For more information on production servers", r"^worker: Hitting Ctrl\+C again",
    r"^worker: Warm shutdown", r"^\s*$",
]))
# runserver's line per request: `[01/Dec/2026 15:54:51] "GET / HTTP/1.1" 200 1234`. A page
# load is a dozen of them (static files, fragments); they scroll the URL and any error away.
REQUEST = re.compile(r'^\[[^\]]+\] "[^"]*" (?P<status>\d{3}) ')
# Django's own warning for each 4xx answer ("Not Found: /favicon.ico"): the request line says it.
CLIENT_ERROR = re.compile(r"^(?:Not Found|Bad Request|Forbidden|Method Not Allowed|Gone|"
                          r"Unauthorized|Too Many Requests)(?: \([^)]*\))?: /")
# The superuser warning Celery prints when a development container runs as root.
QUIET_WARNINGS = "ignore:You're running the worker with superuser privileges"
# How long a child may take to stop after its signal (the worker finishing a task) before it
# is killed.
STOP_TIMEOUT_S = 60


def say(phase: str, text: str) -> None:
    print(f"{phase:<11} {text}", flush=True)


def prepare() -> None:
    """Migrate when a migration is pending and load the demo, in this one process (each
    `manage.py` call would start Django again)."""
    import django
    from django.core.checks import run_checks
    from django.core.management import call_command
    from django.db import connection, connections
    from django.db.migrations.executor import MigrationExecutor

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    django.setup()
    errors = [check for check in run_checks() if check.is_serious()]
    if errors:
        raise SystemExit("\n".join(str(error) for error in errors))
    started = time.monotonic()
    executor = MigrationExecutor(connection)
    pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if pending:
        call_command("migrate", interactive=False, verbosity=0)
        say("database", f"{len(pending)} migrations applied ({time.monotonic() - started:.0f} s)")
    else:
        say("database", "up to date")
    from benchmarks.models import Run

    started = time.monotonic()
    runs_before = Run.objects.count()
    call_command("load_demo", stdout=_Lines([]))
    added = Run.objects.count() - runs_before
    say("demo data", (f"loaded ({added} runs, a mail thread, a trace, a finding with a "
                       "bisection, a simulation for the worker, two comparisons)"
                      if added else "already there") + f" ({time.monotonic() - started:.0f} s)")
    connections.close_all()


class _Lines:
    def __init__(self, into):
        self.into = into

    def write(self, text):
        self.into.extend(line for line in text.splitlines() if line)

    def flush(self):
        pass


class RequestLog:
    """Where the server's request lines go: a file, appended to and flushed line by line (so
    `tail -f` follows it). A failed request (5xx) is also shown: its traceback is printed
    above it and the two belong together."""

    def __init__(self, path: Path):
        self.path = path
        self.file = path.open("a", buffering=1)

    def keeps(self, line: str) -> bool:
        """True when the line is a request line, now in the file; False for anything else."""
        match = REQUEST.match(line)
        if match is None and not CLIENT_ERROR.match(line):
            return False
        self.file.write(line + "\n")
        return match is None or not match.group("status").startswith("5")


def pipe_output(proc: subprocess.Popen, on_line=None,
                requests: RequestLog | None = None) -> threading.Thread:
    """Copy a child's output to ours, less the noise and the request lines (into `requests`),
    each line once however many handlers logged it."""
    def copy():
        last = None
        for line in proc.stdout:
            line = line.rstrip("\n")
            if on_line is not None:
                on_line(line)
            if (requests is not None and requests.keeps(line)) or NOISE.search(line) \
                    or line == last:
                continue
            last = line
            print(line, flush=True)
    thread = threading.Thread(target=copy, daemon=True)
    thread.start()
    return thread


def spawn(cmd, **kwargs) -> subprocess.Popen:
    """A child in its own session: Ctrl-C reaches this launcher only, which stops the children
    in order (the worker finishes its task) instead of each printing its own shutdown."""
    return subprocess.Popen(cmd, cwd=ROOT, stdout=kwargs.pop("stdout", subprocess.PIPE),
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            **kwargs)


def _shown(path: Path) -> Path:
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


# schedtrace first (seconds): the worker restarts once, when the simulator's manifest appears, and
# then imports both compiled builds.
COMPILED_TARGETS = ("schedtrace/_compiled.manifest", "simulator/_compiled.manifest")


def start_build(log: Path, url: str) -> subprocess.Popen | None:
    """The compiled trace parser and simulator, built by make (which knows when they are up to
    date) at low priority in the background; None when both are already current."""
    check = subprocess.run(["make", "-q", *COMPILED_TARGETS], cwd=ROOT, capture_output=True)
    if check.returncode == 0:
        say("simulator", "compiled build up to date")
        return None
    with log.open("w") as out:
        proc = spawn(["nice", "-n", "10", "make", "-s", "--no-print-directory",
                      *COMPILED_TARGETS], stdout=out)
    say("simulator", f"compiling in the background, pure Python until then "
                     f"(progress: tail -f {_shown(log)})")

    def report():
        proc.wait()
        lines = [line for line in log.read_text().splitlines() if line.strip()]
        last = lines[-1] if lines else f"make exited with {proc.returncode}"
        if (ROOT / "simulator" / "_compiled.manifest").exists():
            say("simulator", f"{last.removeprefix('simulator.build: ').split(' (')[0]}; "
                             f"the worker switches to it after its current task ({url})")
        else:
            say("simulator", last.removeprefix("simulator.build: "))
    threading.Thread(target=report, daemon=True).start()
    return proc


def wait_until_serving(url: str, server: subprocess.Popen, timeout: float = 120) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and server.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=30) as answer:
                return answer.status == 200
        except OSError:
            time.sleep(0.2)
    return False


def stop(children) -> None:
    """Each child gets its signal: the server's process group SIGINT (its reloader and the
    serving process, as a terminal's Ctrl-C would), the worker's main process SIGTERM (a warm
    shutdown that lets its pool finish the task in hand), the build's group SIGTERM."""
    for _name, proc, sig, group in children:
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                (os.killpg if group else os.kill)(proc.pid, sig)
    for name, proc, _sig, _group in children:
        if proc is None:
            continue
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            say("schedbench", f"the {name} did not stop within {STOP_TIMEOUT_S} s of its "
                "signal: killed")
            os.killpg(proc.pid, signal.SIGKILL)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--no-compile", action="store_true")
    args = parser.parse_args(argv)
    url = f"http://127.0.0.1:{args.port}/"
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    # A shell starts a background job (`make run &` in a script, nohup) with SIGINT ignored,
    # and children inherit an ignored signal across exec: the server would then ignore the
    # SIGINT that stops it and be killed a minute later. A handler is not inherited (exec
    # resets it to the default), so installing Python's own gives the children the default.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    prepare()
    from django.conf import settings

    env = {**os.environ, "DJANGO_RUNSERVER_HIDE_WARNING": "true",
           "PYTHONWARNINGS": QUIET_WARNINGS}
    build = None if args.no_compile else start_build(Path(settings.DATA_DIR) /
                                                     "simulator-build.log", url)
    worker = spawn([BIN / "celery", "-A", "portal", "--quiet", "worker", "--concurrency=1",
                    "--loglevel=WARNING"], env=env)
    pipe_output(worker)
    say("worker", "started (one Celery worker: simulations, imports, regression scans)")
    server = spawn([sys.executable, "manage.py", "runserver", "--skip-checks",
                    f"127.0.0.1:{args.port}"], env=env)
    starts = []

    def on_server_line(line):
        if line.startswith("Starting development server"):
            starts.append(line)
            if len(starts) > 1:
                say("server", "reloaded after a code change")

    requests = RequestLog(Path(settings.DATA_DIR) / "requests.log")
    pipe_output(server, on_line=on_server_line, requests=requests)
    children = [("server", server, signal.SIGINT, True), ("worker", worker, signal.SIGTERM, False),
                ("build", build, signal.SIGTERM, True)]
    try:
        if not wait_until_serving(f"{url}?started", server):
            say("server", "did not start: see the lines above")
            return 1
        say("server", f"requests logged to {_shown(requests.path)} (failures shown here too)")
        say("schedbench", f"serving {url}  (Ctrl-C stops the server and the worker)")
        while server.poll() is None and worker.poll() is None:
            time.sleep(0.5)
        say("schedbench", "the server or the worker stopped: see the lines above")
        return 1
    except KeyboardInterrupt:
        print(flush=True)
        say("schedbench", "stopping (the worker finishes its current task)")
        return 0
    finally:
        stop(children)


if __name__ == "__main__":
    sys.exit(main())

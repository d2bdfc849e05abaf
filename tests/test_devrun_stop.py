"""`make run` (portal.devrun) stops its server and worker when it is told to, even when it was
started as a shell's background job: such a job starts with SIGINT ignored, the children
inherit an ignored signal across exec, and the server, stopped by SIGINT, used to be killed
only after the launcher's minute of waiting."""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the launcher must run on its embedded default, never on the database or broker CI exports
CLEARED = ("SCHEDBENCH_DATA_DIR", "DATABASE_URL", "CELERY_BROKER_URL", "SCHEDBENCH_MEDIA_DIR",
           "DJANGO_SETTINGS_MODULE")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ignore_sigint() -> None:
    """What a non-interactive shell does to a job it starts with `&`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_a_background_make_run_stops_its_children_on_sigterm(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in CLEARED}
    env["SCHEDBENCH_DATA_DIR"] = str(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "portal.devrun", "--no-compile", "--port",
                             str(free_port())], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, preexec_fn=ignore_sigint,
                            start_new_session=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 240
        while not any("serving http" in line for line in lines):
            assert proc.poll() is None, "make run stopped:\n" + "".join(lines)
            assert time.monotonic() < deadline, "never served:\n" + "".join(lines)
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=200)
        reader.join(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    output = "".join(lines)
    assert rc == 0, output
    assert "stopping" in output, output
    assert "did not stop" not in output, output  # each child ended on its own signal

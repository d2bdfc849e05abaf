"""Submission, retries, spooling and flush against a real HTTP receiver on 127.0.0.1."""

import http.server
import json
import os
import socket
import sys
import threading

import pytest

FAST = ["--retries", "2", "--backoff", "0.01", "--timeout", "5"]
BENCH = [sys.executable, "-c", "print('time 42 ms')"]
ACCEPTED = {"artifact": 7, "format": "time-ms",
            "runs": [{"id": 11, "url": "/runs/11/"}, {"id": 12, "url": "http://other/runs/12/"}],
            "warnings": ["kernel 2.6.24.1-smp seen for the first time"]}


class Receiver:
    """A tiny portal stand-in: answers with the scripted statuses in order, then the last."""

    def __init__(self, script, port=0):
        self.script = list(script)
        self.requests = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                receiver.requests.append({"path": self.path, "headers": dict(self.headers),
                                          "json": json.loads(self.rfile.read(length))})
                status, body = receiver.script.pop(0) if len(receiver.script) > 1 \
                    else receiver.script[0]
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True,
                                       kwargs={"poll_interval": 0.02})
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    @property
    def keys(self):
        return [r["json"]["idempotency_key"] for r in self.requests]


@pytest.fixture()
def receivers():
    started = []

    def start(script, port=0):
        receiver = Receiver(script, port)
        started.append(receiver)
        return receiver

    yield start
    for receiver in started:
        receiver.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spooled(tmp_path):
    spool = tmp_path / "spool"
    return sorted(spool.glob("*.json")) if spool.exists() else []


def run(sb, url, *extra):
    return sb.main(["run", "--benchmark", "threadtest", "--url", url, "--token", "s3cret",
                    "-q", *FAST, *extra, "--", *BENCH])


def test_accepted_prints_absolute_run_urls_and_warnings(sb, receivers, capsys, tmp_path):
    portal = receivers([(201, ACCEPTED)])
    assert run(sb, portal.url + "/") == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [portal.url + "/runs/11/", "http://other/runs/12/"]
    assert "kernel 2.6.24.1-smp seen for the first time" in captured.err
    request = portal.requests[0]
    assert request["path"] == "/api/v1/uploads/"
    assert request["headers"]["Authorization"] == "Token s3cret"
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["json"]["text"] == "time 42 ms\n"
    assert spooled(tmp_path) == []


def test_503_then_201_retries_with_the_same_key(sb, receivers, capsys, tmp_path):
    portal = receivers([(503, {"error": "busy"}), (502, {}), (201, ACCEPTED)])
    assert run(sb, portal.url) == 0
    assert len(portal.requests) == 3
    assert len(set(portal.keys)) == 1
    assert spooled(tmp_path) == []


def test_unreachable_spools_then_flush_sends_it(sb, receivers, capsys, tmp_path, monkeypatch):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    assert run(sb, url) == sb.EXIT_SPOOLED
    assert "spooled" in capsys.readouterr().err
    [path] = spooled(tmp_path)
    entry = json.loads(path.read_text())
    assert entry["url"] == url
    assert "s3cret" not in path.read_text()  # the token is never written to disk
    assert oct(path.stat().st_mode & 0o777) == "0o600"

    # The portal comes up, still overloaded at first: the file must survive a 503.
    portal = receivers([(503, {"error": "busy"})], port=port)
    monkeypatch.setenv("SCHEDBENCH_TOKEN", "s3cret")
    assert sb.main(["flush", "--retries", "0", "--backoff", "0.01"]) == sb.EXIT_SPOOLED
    assert spooled(tmp_path) == [path]

    portal.script = [(201, ACCEPTED)]
    capsys.readouterr()
    assert sb.main(["flush", "--retries", "0"]) == 0
    assert spooled(tmp_path) == []
    assert portal.url + "/runs/11/" in capsys.readouterr().out
    assert set(portal.keys) == {entry["payload"]["idempotency_key"]}
    assert portal.requests[-1]["headers"]["Authorization"] == "Token s3cret"


def test_flush_url_override_and_several_files(sb, receivers, capsys, tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    for _ in range(3):
        assert run(sb, dead, "--retries", "0") == sb.EXIT_SPOOLED
    assert len(spooled(tmp_path)) == 3
    portal = receivers([(200, ACCEPTED)])  # 200: a key the portal had already seen
    assert sb.main(["flush", "--url", portal.url, "--token", "s3cret"]) == 0
    assert spooled(tmp_path) == []
    assert len(set(portal.keys)) == 3


def test_flush_gives_up_quickly_on_a_dead_portal(sb, capsys, tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    for _ in range(3):
        run(sb, dead, "--retries", "0")
    capsys.readouterr()
    status = sb.main(["flush", "--token", "t", "--retries", "1", "--backoff", "0.01"])
    assert status == sb.EXIT_SPOOLED
    assert len(spooled(tmp_path)) == 3
    assert capsys.readouterr().err.count("could not deliver") == 1


def test_400_is_printed_and_not_spooled(sb, receivers, capsys, tmp_path):
    portal = receivers([(400, {"error": "unrecognised line", "line": 3,
                               "formats": ["time-ms", "vmstat"]})])
    assert run(sb, portal.url) == sb.EXIT_ERROR
    err = capsys.readouterr().err
    assert "unrecognised line (line 3)" in err
    assert "time-ms, vmstat" in err
    assert len(portal.requests) == 1  # no retry: the same data would fail the same way
    assert spooled(tmp_path) == []
    assert sb.main(["flush", "--token", "t"]) == 0  # nothing to flush
    assert len(list((tmp_path / "spool" / "rejected").glob("*.json"))) == 1


def test_401_spools_so_a_fixed_token_can_flush(sb, receivers, capsys, tmp_path):
    portal = receivers([(401, {"error": "invalid token"})])
    assert run(sb, portal.url) == sb.EXIT_SPOOLED
    assert "invalid token" in capsys.readouterr().err
    assert len(portal.requests) == 1
    assert len(spooled(tmp_path)) == 1
    portal.script = [(201, ACCEPTED)]
    assert sb.main(["flush", "--token", "good"]) == 0
    assert spooled(tmp_path) == []


def test_flush_moves_a_rejected_file_aside(sb, receivers, capsys, tmp_path):
    run(sb, f"http://127.0.0.1:{free_port()}", "--retries", "0")
    portal = receivers([(400, {"error": "bad"})])
    assert sb.main(["flush", "--url", portal.url, "--token", "t"]) == sb.EXIT_ERROR
    assert spooled(tmp_path) == []
    assert len(list((tmp_path / "spool" / "rejected").glob("*.json"))) == 1


def test_spool_dir_option_and_corrupt_file(sb, capsys, tmp_path):
    spool = tmp_path / "elsewhere"
    spool.mkdir()
    (spool / "broken.json").write_text("{not json")
    assert sb.main(["flush", "--spool-dir", str(spool), "--token", "t"]) == sb.EXIT_ERROR
    assert not (spool / "broken.json").exists()
    assert (spool / "rejected" / "broken.json").exists()


def test_redirect_is_not_followed_as_get(sb, receivers, capsys, tmp_path):
    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.send_response(301)
            self.send_header("Location", "https://portal.example/api/v1/uploads/")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True,
                     kwargs={"poll_interval": 0.02}).start()
    try:
        status = run(sb, f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()
    assert status == sb.EXIT_SPOOLED
    assert "https://portal.example/api/v1/uploads/" in capsys.readouterr().err


def test_env_token_and_url(sb, receivers, capsys, monkeypatch):
    portal = receivers([(201, ACCEPTED)])
    monkeypatch.setenv("SCHEDBENCH_URL", portal.url)
    monkeypatch.setenv("SCHEDBENCH_TOKEN", "from-env")
    argv = ["run", "--benchmark", "b", "-q", *FAST, "--", *BENCH]
    assert sb.main(argv) == 0
    assert portal.requests[0]["headers"]["Authorization"] == "Token from-env"


def test_retry_delay(sb):
    assert sb.retry_delay(0, 1.0, None) == 1.0
    assert sb.retry_delay(3, 1.0, None) == 8.0
    assert sb.retry_delay(10, 1.0, None) == sb.MAX_BACKOFF
    assert sb.retry_delay(0, 1.0, {"Retry-After": "3"}) == 3.0


def test_classify(sb):
    assert [sb.classify(s) for s in (200, 201, 400, 413, 401, 403, 301, 429, 500, 503)] == [
        "ok", "ok", "rejected", "rejected", "config", "config", "config", "retry", "retry",
        "retry"]


def test_spool_write_is_atomic(sb, tmp_path):
    path = sb.spool_write(str(tmp_path / "s"), "http://x", {"idempotency_key": "k"})
    assert os.path.basename(path).endswith("-k.json")
    assert [p.name for p in (tmp_path / "s").iterdir()] == [os.path.basename(path)]

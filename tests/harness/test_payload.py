"""The submission JSON, checked through `run --dry-run` against a fake tree."""

import json
import sys
import uuid

import pytest

PRINT_TWO_LINES = "import sys; print('time 5210 ms'); sys.stdout.write('time 5300 ms')"


def dry_run(sb, capsys, oldbox, *extra, command=None):
    command = command or [sys.executable, "-c", PRINT_TWO_LINES]
    argv = ["run", "--benchmark", "threadtest", "--root", oldbox, "--dry-run", "-q", *extra,
            "--", *command]
    status = sb.main(argv)
    out = capsys.readouterr().out
    return status, out


def test_dry_run_prints_the_full_payload(sb, capsys, oldbox):
    status, out = dry_run(sb, capsys, oldbox, "--repeat", "2", "--param", "loops=40M",
                          "--param", "iterations=500", "--param", "burn_us=1.5",
                          "--param", "variant=yield", "--label", "sched_yield in spin")
    assert status == 0
    payload = json.loads(out)  # stdout is nothing but the JSON
    assert set(payload) == {"text", "filename", "benchmark", "kernel", "machine", "policy",
                            "params", "tunables", "series", "environment", "measured",
                            "idempotency_key"}
    # Both repeats, in order, and the missing final newline does not glue lines together.
    assert payload["text"] == "time 5210 ms\ntime 5300 ms\ntime 5210 ms\ntime 5300 ms\n"
    assert payload["filename"].startswith("threadtest-oldbox-")
    assert payload["filename"].endswith("Z.txt")
    assert payload["benchmark"] == "threadtest"
    assert payload["kernel"] == "2.6.24.1-smp"
    assert payload["machine"]["name"] == "oldbox"
    assert payload["machine"]["caches"] == {"L1d": "16K", "L1i": "12K", "L2": "2048K"}
    assert payload["policy"] == "sched_yield in spin"
    assert payload["params"] == {"loops": 40000000, "iterations": 500, "burn_us": 1.5,
                                 "variant": "yield"}
    assert payload["tunables"]["sched_child_runs_first"] == 1
    assert payload["series"] == {}
    uuid.UUID(payload["idempotency_key"], version=4)


def test_dry_run_environment_block(sb, capsys, oldbox):
    _, out = dry_run(sb, capsys, oldbox, "--repeat", "3")
    env = json.loads(out)["environment"]
    assert env["cmdline"] == "ro root=/dev/sda1 nohz=off"
    assert env["governor"] == "ondemand,performance"
    assert env["sched_features"].startswith("NEW_FAIR_SLEEPERS")
    assert env["uname"]["release"] == "2.6.24.1-smp"
    assert env["command"] == [sys.executable, "-c", PRINT_TWO_LINES]
    assert env["repeat"] == 3
    assert len(env["durations_s"]) == 3
    assert env["harness_version"] == sb.HARNESS_VERSION


def test_policy_alias_and_no_label(sb, capsys, oldbox):
    _, out = dry_run(sb, capsys, oldbox, "--policy", "SCHED_BATCH")
    assert json.loads(out)["policy"] == "SCHED_BATCH"
    _, out = dry_run(sb, capsys, oldbox)
    assert json.loads(out)["policy"] is None


def test_vmstat_series_attached(sb, capsys, oldbox):
    # The fake tree has no vmstat binary behind it, so this uses the /proc sampler.
    command = [sys.executable, "-c", "import time; time.sleep(0.2); print('time 1 ms')"]
    _, out = dry_run(sb, capsys, oldbox, "--vmstat", "0.03", command=command)
    series = json.loads(out)["series"]["vmstat"]
    assert series["columns"] == sb.VMSTAT_COLUMNS
    assert series["rows"]


def test_each_submission_gets_a_new_key(sb, capsys, oldbox):
    keys = {json.loads(dry_run(sb, capsys, oldbox)[1])["idempotency_key"] for _ in range(2)}
    assert len(keys) == 2


def test_failing_command_submits_nothing(sb, capsys, oldbox):
    status, out = dry_run(sb, capsys, oldbox, command=[sys.executable, "-c", "exit(3)"])
    assert status == 3
    assert out == ""


def test_missing_command(sb, capsys, oldbox):
    status, out = dry_run(sb, capsys, oldbox, command=["/nonexistent/benchmark"])
    assert status == 127
    assert sb.main(["run", "--benchmark", "x", "--dry-run"]) == sb.EXIT_USAGE


def test_token_and_url_checked_before_running(sb, capsys, tmp_path):
    marker = tmp_path / "ran"
    command = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    status = sb.main(["run", "--benchmark", "x", "--url", "http://127.0.0.1:9", "--", *command])
    assert status == sb.EXIT_USAGE
    assert "SCHEDBENCH_TOKEN" in capsys.readouterr().err
    assert not marker.exists()
    status = sb.main(["run", "--benchmark", "x", "--url", "ftp://x", "--token", "t", "--",
                      *command])
    assert status == sb.EXIT_USAGE
    assert not marker.exists()


@pytest.mark.parametrize("bad", ["novalue", "=3"])
def test_bad_param(sb, capsys, oldbox, bad):
    status, _ = dry_run(sb, capsys, oldbox, "--param", bad)
    assert status == sb.EXIT_USAGE


def test_filename_is_safe(sb):
    name = sb.make_filename("perf bench/sched", "host.example.org", 0)
    assert name == "perf_bench_sched-host.example.org-19700101T000000Z.txt"
    assert len(sb.make_filename("b" * 300, "h" * 300, 0)) < 200


def test_cflags_may_start_with_a_dash(sb):
    assert sb.glue_cflags(["build", "--cflags", "-O0 -g", "--out", "x"]) == [
        "build", "--cflags=-O0 -g", "--out", "x"]


def test_env_command_prints_json(sb, capsys, modernvm):
    assert sb.main(["env", "--root", modernvm]) == 0
    env = json.loads(capsys.readouterr().out)
    assert env["kernel"] == "6.6.0-eevdf"
    assert env["machine"]["virtualization"] == "qemu"
    assert env["tunables"]["sched_base_slice_ns"] == 3000000


@pytest.mark.parametrize("url", ["ftp://portal", "portal:8000", "http://h:abc", "http://[::1"])
def test_bad_urls_are_usage_errors(sb, url):
    with pytest.raises(sb.UsageError):
        sb.check_url(url)

"""The harness passes what it knows: the tool's options as params, stderr with stdout, and a
refusal's line and closest layout."""

import json
import shutil
import subprocess
import sys

import pytest

from tests.harness.test_submit import FAST, receivers  # noqa: F401 - the fixture is used


@pytest.mark.parametrize(("command", "params"), [
    (["hackbench", "-p", "-T", "-g", "4", "-l", "200"],
     {"mode": "thread", "transport": "pipe", "groups": 4, "loops": 200}),
    (["/usr/bin/hackbench", "--groups", "2", "-s", "512"],
     {"mode": "process", "transport": "socket", "groups": 2, "message_bytes": 512}),
    (["sysbench", "threads", "--threads=4", "--time=2", "run"], {"test": "threads", "threads": 4}),
    (["sysbench", "--cpu-max-prime=5000", "cpu", "run"], {"test": "cpu", "prime_limit": 5000}),
    (["perf", "bench", "sched", "pipe", "-l", "100000"], {"ops": 100000}),
    (["perf", "bench", "sched", "messaging", "-p", "-g", "4", "-l", "50"],
     {"transport": "pipe", "groups": 4, "loops": 50}),
    (["stress-ng", "--switch", "2", "--metrics-brief", "-t", "5"],
     {"stressor": "switch", "instances": 2, "timeout_s": 5}),
    (["stress-ng", "--cpu", "1", "--switch", "1", "--metrics-brief"], {}),
    (["cyclictest", "-t", "2", "-q", "-p", "80", "-h", "100", "-D", "1"],
     {"threads": 2, "priority": 80, "histogram_buckets": 100}),
    (["./threadtest", "-n", "20"], {"iterations": 20, "loops": 10000, "yield_in_spin": False,
                                    "pin": False, "head_start_us": 0, "counter": "register"}),
    (["bin/threadtest-O0", "-l", "1M", "-y", "-s"],
     {"iterations": 500, "loops": 1000000, "yield_in_spin": True, "pin": False,
      "head_start_us": 1, "counter": "memory"}),
    (["threadtest_burn", "-b", "500", "-c"],
     {"iterations": 100, "burn_us": 500, "yield_in_spin": False, "clock": "cpu"}),
])
def test_tool_options_become_params(sb, command, params):
    assert sb.command_params(command) == params


def test_explicit_params_win_over_the_command_line(sb, capsys):
    command = [sys.executable, "-c", "print('Time: 0.5')"]
    assert sb.command_params(["hackbench", "-p"])["transport"] == "pipe"
    sb.main(["run", "--benchmark", "hackbench", "--dry-run", "-q", "--param", "loops=7",
             "--", *command])
    payload = json.loads(capsys.readouterr().out)
    assert payload["params"] == {"loops": 7}


def test_stderr_is_captured_with_stdout_in_order(sb, capsys):
    script = ("import sys\nprint('out 1', flush=True)\nsys.stderr.write('err 2\\n')\n"
              "sys.stderr.flush()\nprint('out 3')")
    sb.main(["run", "--benchmark", "x", "--dry-run", "-q", "--", sys.executable, "-c", script])
    payload = json.loads(capsys.readouterr().out)
    assert payload["text"] == "out 1\nerr 2\nout 3\n"


def test_a_refusal_names_the_line_and_the_closest_layout(sb, receivers, capsys):  # noqa: F811
    body = {"error": "sysbench failed: Cannot find benchmark 'nosuch'", "line": 3,
            "layout": "sysbench", "help": "/formats/#sysbench"}
    portal = receivers([(400, body)])
    status = sb.main(["run", "--benchmark", "sysbench", "--url", portal.url, "--token", "t",
                      "-q", *FAST, "--", sys.executable, "-c", "print('FATAL: x')"])
    err = capsys.readouterr().err
    assert status != 0
    assert "(line 3)" in err
    assert "closest layout: sysbench (example: /formats/#sysbench)" in err


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("stress-ng") is None, reason="stress-ng is not installed")
def test_stress_ng_through_the_harness_reaches_the_portal(live_server, django_user_model,
                                                           tmp_path):
    from benchmarks.models import Run
    from benchmarks.services.tokens import token_create
    from tests.harness.conftest import SCRIPT

    token = token_create(user=django_user_model.objects.create_user("h"), name="e2e")[1]
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "run", "--url", live_server.url, "--token", token,
         "--benchmark", "stress-ng", "--spool-dir", str(tmp_path / "spool"), "--",
         "stress-ng", "--switch", "1", "-t", "1", "--metrics-brief"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    run = Run.objects.get()
    uname = subprocess.run(["uname", "-r"], capture_output=True, text=True).stdout.strip()
    assert run.kernel.version == uname and run.parser_name == "stress-ng"
    assert run.params == {"stressor": "switch", "instances": 1, "timeout_s": 1}
    bogo = run.samples.filter(metric__name="bogo_ops").values_list("value", flat=True)
    assert len(bogo) == 1 and bogo[0] > 0


@pytest.mark.parametrize(("given", "command"), [
    (["loops=10k", "iterations=500"], ["./threadtest", "-l", "10000"]),
    (["yield_in_spin=true", "counter=memory"], ["./threadtest-O0", "-y"]),
    (["yield_in_spin=0", "groups=4"], ["hackbench", "-g", "4"]),
])
def test_a_param_the_command_agrees_with_is_kept(sb, given, command):
    params = sb.run_params(command, given)
    assert {key: params[key] for key in sb.parse_params(given)} == sb.parse_params(given)


@pytest.mark.parametrize(("given", "command", "said"), [
    ("loops=1M", ["./threadtest", "-l", "10k"], "loops=1000000 disagrees with the command, "
     "which runs loops=10000"),
    ("counter=memory", ["./schedbench-bin/threadtest"], "which runs counter=register"),
    ("yield_in_spin=false", ["./threadtest", "-y"], "which runs yield_in_spin=True"),
    ("groups=8", ["hackbench", "-g", "4"], "which runs groups=4"),
])
def test_a_param_the_command_contradicts_is_refused(sb, capsys, given, command, said):
    """Stored, the run would carry a value it never ran with (none of these commands exists
    here: running one would fail otherwise, not with this usage error)."""
    status = sb.main(["run", "--benchmark", "b", "--dry-run", "-q", "--param", given, "--",
                      *command])
    assert status == sb.EXIT_USAGE
    assert said in capsys.readouterr().err

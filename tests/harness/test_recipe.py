"""What a harness run records so it can be run again: its own command line (without the
token), the vmstat interval, and the tunables it set for the run (and put back after)."""

import json
import shutil
import sys

from tests.harness.test_payload import PRINT_TWO_LINES, dry_run


def test_the_full_command_line_and_vmstat_interval_are_recorded(sb, capsys, oldbox):
    _, out = dry_run(sb, capsys, oldbox, "--param", "loops=1M", "--vmstat", "0.05",
                     "--token", "secret-token-value", "--url", "http://portal.example")
    assert "secret-token-value" not in out
    env = json.loads(out)["environment"]
    assert env["harness_argv"] == [
        "run", "--benchmark", "threadtest", "--root", oldbox, "--dry-run", "-q",
        "--param", "loops=1M", "--vmstat", "0.05", "--token", "$SCHEDBENCH_TOKEN",
        "--url", "$SCHEDBENCH_URL", "--", sys.executable, "-c", PRINT_TWO_LINES]
    assert env["vmstat_interval_s"] == 0.05
    assert env["tunables_set"] == {}


def test_set_writes_the_tunable_for_the_run_and_restores_it(sb, capsys, oldbox, tmp_path):
    root = tmp_path / "box"
    shutil.copytree(oldbox, root)
    knob = root / "proc/sys/kernel/sched_compat_yield"
    before = knob.read_text()
    probe = f"print('time', open({str(knob)!r}).read().strip(), 'ms')"
    status, out = dry_run(sb, capsys, str(root), "--set", "kernel.sched_compat_yield=1",
                          command=[sys.executable, "-c", probe])
    assert status == 0
    payload = json.loads(out)
    assert payload["text"] == "time 1 ms\n"  # the benchmark ran with the value set
    assert payload["environment"]["tunables_set"] == {"sched_compat_yield": 1}
    assert payload["tunables"]["sched_compat_yield"] == 1
    assert knob.read_text().strip() == before.strip()  # put back afterwards


def test_set_of_an_unknown_tunable_is_a_usage_error_before_anything_runs(sb, capsys, oldbox):
    status = sb.main(["run", "--benchmark", "threadtest", "--root", oldbox, "--dry-run",
                      "--set", "sched_nonexistent=1", "--", sys.executable, "-c",
                      "print('ran')"])
    captured = capsys.readouterr()
    assert status == sb.EXIT_USAGE and captured.out == ""
    assert "no tunable sched_nonexistent" in captured.err

"""`schedbench.py calibrate` against a live portal: measured here, stored on the runs' machine."""

import json
import shutil
import subprocess
import sys

import pytest

from benchmarks.models import MachineCalibration, Run
from benchmarks.services.tokens import token_create
from simulator.machine import MachineModel
from tests.harness.conftest import SCRIPT

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow,
              pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")]


@pytest.fixture
def token(django_user_model):
    user = django_user_model.objects.create_user("calibrator")
    return token_create(user=user, name="e2e")[1]


def harness(*args, timeout=300):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_calibrate_submits_to_the_machine_of_the_runs(live_server, token, tmp_path):
    spool = str(tmp_path / "spool")
    ran = harness("run", "--url", live_server.url, "--token", token, "--benchmark", "sleeper",
                  "--spool-dir", spool, "--", "sh", "-c", "echo 'time 1 ms'")
    assert ran.returncode == 0, ran.stderr
    result = harness("calibrate", "--url", live_server.url, "--token", token, "--scale", "0.05",
                     "--repeat", "3", "--bin", str(tmp_path), "--spool-dir", spool,
                     "--accept-noisy")
    assert result.returncode == 0, result.stderr
    stored = MachineCalibration.objects.select_related("machine").get()
    run = Run.objects.get()
    assert stored.machine == run.machine  # same description, same fingerprint
    assert result.stdout.strip() == f"{live_server.url}/machines/{run.machine_id}/"
    assert stored.submitter.username == "calibrator"
    assert stored.values["loop_ns"] > 0 and isinstance(stored.values["virtualised"], bool)
    assert MachineModel.from_calibration(stored.values).loop_ns == stored.values["loop_ns"]
    assert stored.details["figures"]["loop_ns"]["runs"] == 3
    # calibrate's verdict travels: the mark in the values, the reasons in details
    assert stored.values["noisy"] is stored.details["quality"]["noisy"]
    assert stored.values["loop_memory_ns"] > 0


def test_refused_calibration_is_kept_and_can_be_resent(live_server, token, tmp_path):
    spool = tmp_path / "spool"
    result = harness("calibrate", "--url", live_server.url, "--token", "sbt_wrong",
                     "--scale", "0.02", "--repeat", "1", "--bin", str(tmp_path),
                     "--spool-dir", str(spool), "--retries", "0", "--accept-noisy")
    assert result.returncode != 0 and "refused" in result.stderr
    kept = list((spool / "calibrations").glob("*.json"))
    assert len(kept) == 1 and "calibrate --submit" in result.stderr
    assert not MachineCalibration.objects.exists()
    resent = harness("calibrate", "--url", live_server.url, "--token", token,
                     "--submit", str(kept[0]))
    assert resent.returncode == 0, resent.stderr
    assert MachineCalibration.objects.get().values == json.loads(kept[0].read_text())[
        "calibration"]

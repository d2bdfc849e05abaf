"""Machine calibrations over the API: POST by machine id and by description, GET, the page."""

import copy
import io
import json

import pytest
from django.test import Client

from benchmarks.models import Machine, MachineCalibration
from benchmarks.services.catalog import machine_fingerprint, machine_get_or_create
from benchmarks.services.tokens import token_create
from simulator.cli import main as simulator_cli
from tests.factories import CORE2, make_run

pytestmark = pytest.mark.django_db

BOX = {"name": "calbox", "cpu_model": "AMD EPYC", "arch": "x86_64", "sockets": 1,
       "cores_per_socket": 2, "threads_per_core": 1, "caches": {"L2": "1024K"},
       "memory_mb": 2048, "virtualization": "kvm"}
PAYLOAD = {
    "machine": BOX, "kernel": "6.8.0-45-generic", "measured_at": "2026-11-30T18:40:02Z",
    "calibration": {"loop_ns": 0.2763, "thread_create_join_us": 20.58,
                    "wakeup_remote_us": 40.53, "wakeup_local_us": 2.80,
                    "context_switch_us": 1.311, "virtualised": True, "idle_exit_us": 0.0,
                    "ipi_us": 21.08, "vcpu_wake_us": 1.49, "contention": 1.02},
    "details": {"harness_version": "1.0.0", "cpus": {"a": 0, "b": 1, "loaded": [1]}},
}
BY_DESCRIPTION = "/api/v1/machines/calibration/"


def by_id(machine_id):
    return f"/api/v1/machines/{machine_id}/calibration/"


def post(client, url, body):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.post(url, data=data, content_type="application/json")


def client_for(user):
    return Client(HTTP_AUTHORIZATION=f"Token {token_create(user=user, name='t')[1]}")


def payload(**calibration):
    body = copy.deepcopy(PAYLOAD)
    body["calibration"].update(calibration)
    return body


def test_round_trip_by_description(api_client, api_user):
    response = post(api_client, BY_DESCRIPTION, PAYLOAD)
    assert response.status_code == 201, response.content
    body = response.json()
    machine = Machine.objects.get(pk=body["machine"]["id"])
    # The same fingerprint a run submission with this machine object gets.
    assert machine.fingerprint == machine_fingerprint(BOX)
    assert body["url"] == f"http://testserver/machines/{machine.pk}/"
    assert body["calibration"] == PAYLOAD["calibration"]
    assert body["kernel"] == "6.8.0-45-generic" and body["submitter"] == api_user.username
    stored = MachineCalibration.objects.get()
    assert stored.values == PAYLOAD["calibration"] and stored.details == PAYLOAD["details"]
    again = Client().get(by_id(machine.pk))  # public read, no token
    assert again.status_code == 200
    assert again.json()["calibration"] == PAYLOAD["calibration"]
    assert again.json()["measured_at"].startswith("2026-11-30T18:40:02")


def test_calibration_lands_on_the_machine_runs_use(api_client, api_user):
    run = make_run(machine=BOX, submitter=api_user)
    response = post(api_client, BY_DESCRIPTION, PAYLOAD)
    assert response.status_code == 201
    assert response.json()["machine"]["id"] == run.machine_id
    assert Machine.objects.count() == 1


def test_post_by_id_without_a_machine_object(api_client, api_user):
    machine = machine_get_or_create(spec=BOX)
    body = {k: v for k, v in PAYLOAD.items() if k != "machine"}
    response = post(api_client, by_id(machine.pk), body)
    assert response.status_code == 201, response.content
    assert MachineCalibration.objects.get().machine == machine


def test_newest_calibration_wins_and_history_is_kept(api_client):
    machine = machine_get_or_create(spec=BOX)
    post(api_client, by_id(machine.pk), PAYLOAD)
    assert post(api_client, by_id(machine.pk), payload(loop_ns=0.5)).status_code == 201
    assert MachineCalibration.objects.filter(machine=machine).count() == 2
    assert Client().get(by_id(machine.pk)).json()["calibration"]["loop_ns"] == 0.5


def test_a_body_describing_another_machine_is_refused(api_client):
    other = machine_get_or_create(spec=CORE2)
    response = post(api_client, by_id(other.pk), PAYLOAD)
    assert response.status_code == 400
    assert "machine" in response.json()["error"]
    assert not MachineCalibration.objects.exists()


def test_writes_need_a_token():
    machine = machine_get_or_create(spec=BOX)
    assert post(Client(), BY_DESCRIPTION, PAYLOAD).status_code in (401, 403)
    assert post(Client(), by_id(machine.pk), PAYLOAD).status_code in (401, 403)
    bad = Client(HTTP_AUTHORIZATION="Token sbt_not_a_token")
    assert post(bad, BY_DESCRIPTION, PAYLOAD).status_code == 401
    assert not MachineCalibration.objects.exists()


def test_only_those_with_data_on_a_machine_may_calibrate_it(django_user_model):
    alice = django_user_model.objects.create_user("alice")
    bob = django_user_model.objects.create_user("bob")
    staff = django_user_model.objects.create_user("root", is_staff=True)
    run = make_run(machine=BOX, submitter=alice)
    refused = post(client_for(bob), by_id(run.machine_id), PAYLOAD)
    assert refused.status_code == 403 and "error" in refused.json()
    assert post(client_for(bob), BY_DESCRIPTION, PAYLOAD).status_code == 403
    assert not MachineCalibration.objects.exists()
    assert post(client_for(alice), by_id(run.machine_id), PAYLOAD).status_code == 201
    assert post(client_for(staff), by_id(run.machine_id), PAYLOAD).status_code == 201
    # A box nobody has put data on yet may be calibrated by whoever describes it first.
    fresh = {**PAYLOAD, "machine": {**BOX, "name": "bobs-box"}}
    assert post(client_for(bob), BY_DESCRIPTION, fresh).status_code == 201


def test_demo_machines_are_not_anyones(api_client):
    run = make_run(machine=BOX, source="demo")
    assert post(api_client, by_id(run.machine_id), PAYLOAD).status_code == 403


@pytest.mark.parametrize("body,needle", [
    (payload(loop_ns="fast"), "loop_ns"),
    (payload(loop_ns=0), "loop_ns"),
    (payload(loop_ns=True), "loop_ns"),
    (payload(context_switch_us=-1), "context_switch_us"),
    (payload(ipi_us=1e9), "ipi_us"),
    (payload(virtualised=1), "virtualised"),
    (payload(virtualised="true"), "virtualised"),
    (payload(noisy="yes"), "noisy"),
    (payload(loop_memory_ns=0), "loop_memory_ns"),
    (payload(halt_poll_us=-1), "halt_poll_us"),
    (payload(halt_poll_us="200"), "halt_poll_us"),
    (payload(frequency_mhz=3000), "frequency_mhz"),
    ({k: v for k, v in PAYLOAD.items() if k != "kernel"}, "kernel"),
    ({k: v for k, v in PAYLOAD.items() if k != "calibration"}, "calibration"),
    ({**PAYLOAD, "calibration": [1, 2]}, "calibration"),
    ({**PAYLOAD, "measured_at": "yesterday"}, "measured_at"),
    ({**PAYLOAD, "kernel": "6.8\x00"}, "kernel"),
    ({**PAYLOAD, "kernel": "6.8\u202e-evil"}, "kernel"),  # bidi override, refused like elsewhere
    ({**PAYLOAD, "machine": "calbox"}, "machine"),
    ({**PAYLOAD, "machine": {**BOX, "sockets": "one"}}, "machine"),
    ({**PAYLOAD, "machine": {**BOX, "colour": "red"}}, "machine"),
    ({k: v for k, v in PAYLOAD.items() if k != "machine"}, "machine"),
    ({**PAYLOAD, "details": {"blob": "x" * 70_000}}, "details"),
    ({**PAYLOAD, "details": [1]}, "details"),
    ([PAYLOAD], ""),
])
def test_bad_input_is_a_400_naming_the_field(api_client, body, needle):
    response = post(api_client, BY_DESCRIPTION, body)
    assert response.status_code == 400, response.content
    assert needle in response.json()["error"]
    assert not MachineCalibration.objects.exists() and not Machine.objects.exists()


@pytest.mark.parametrize("raw", ['{"calibration": {"loop_ns": NaN}}', "{not json", ""])
def test_unparseable_bodies_are_400(api_client, raw):
    response = post(api_client, BY_DESCRIPTION, raw)
    assert response.status_code == 400 and "error" in response.json()


@pytest.mark.parametrize("window", [187.5, None])
def test_the_halt_polling_window_is_stored_measured_or_null(api_client, window):
    # calibrate writes the window it found in a guest, or null when it found no step
    response = post(api_client, BY_DESCRIPTION, payload(halt_poll_us=window))
    assert response.status_code == 201, response.content
    assert MachineCalibration.objects.get().values["halt_poll_us"] == window


@pytest.mark.parametrize("body", ["", "\n", " \r\n\t "])
def test_an_empty_body_says_it_is_empty(api_client, body):
    # What `calibrate --dry-run > cal.json` leaves when calibrate refuses, then sent as it is
    # (a shell's `echo` or an editor may have left a newline: still empty, not a parse error).
    machine = machine_get_or_create(spec=BOX)
    for url in (BY_DESCRIPTION, by_id(machine.pk)):
        response = post(api_client, url, body)
        assert response.status_code == 400, response.content
        assert "the body is empty" in response.json()["error"]
        assert "refused" in response.json()["error"]
    assert not MachineCalibration.objects.exists()


def test_unknown_machine_is_404(api_client):
    assert post(api_client, by_id(999), PAYLOAD).status_code == 404
    assert Client().get(by_id(999)).status_code == 404


def test_uncalibrated_machine_get_is_404():
    machine = machine_get_or_create(spec=BOX)
    response = Client().get(by_id(machine.pk))
    assert response.status_code == 404 and "no calibration" in response.json()["error"]


def test_machine_page_shows_the_calibration(api_client, client):
    machine_id = post(api_client, BY_DESCRIPTION, PAYLOAD).json()["machine"]["id"]
    make_run(machine=BOX, source="demo")
    page = client.get(f"/machines/{machine_id}/")
    assert page.status_code == 200
    text = page.content.decode()
    assert 'id="calibration-table"' in text and "6.8.0-45-generic" in text
    assert "40.53" in text and "0.2763" in text and "harness-user" in text
    assert f"/simulations/new/?on_machine={machine_id}" in text
    assert "threadtest" in text  # the runs table
    listing = client.get("/machines/").content.decode()
    assert f'href="/machines/{machine_id}/"' in listing


def test_uncalibrated_machine_page_says_how(client):
    machine = machine_get_or_create(spec={**BOX, "name": "<script>x</script>"})
    text = client.get(f"/machines/{machine.pk}/").content.decode()
    assert 'id="no-calibration"' in text and "schedbench.py calibrate" in text
    assert "<script>x</script>" not in text


def test_machine_page_queries_are_pinned(api_client, client, django_assert_num_queries):
    machine_id = post(api_client, BY_DESCRIPTION, PAYLOAD).json()["machine"]["id"]
    for _ in range(3):
        post(api_client, by_id(machine_id), PAYLOAD)
    # machine, run counts, calibrations, the other machines for "side by side", and the runs
    # that could have a simulated twin (simulations' section; none here, so no medians)
    with django_assert_num_queries(5):
        assert client.get(f"/machines/{machine_id}/").status_code == 200


def test_the_stored_calibration_feeds_the_simulator_cli(api_client, tmp_path):
    machine_id = post(api_client, BY_DESCRIPTION, PAYLOAD).json()["machine"]["id"]
    path = tmp_path / "calibration.json"
    path.write_bytes(Client().get(by_id(machine_id)).content)
    out, err = io.StringIO(), io.StringIO()
    args = ["run", "--workload", "threadtest", "--kernel", "2.6.24", "--param", "iterations=2",
            "--param", "loops=1000", "--machine", str(path), "--format", "json"]
    # This document predates loop_memory_ns: a register counter runs, a memory one is refused
    status = simulator_cli([*args, "--param", "counter=register"], out=out, err=err)
    assert status == 0, err.getvalue()
    assert json.loads(out.getvalue())["topology"] == "1x2x1"  # the machine's 1 x 2 x 1
    assert simulator_cli(args, out=io.StringIO(), err=err) == 2
    assert "no loop_memory_ns" in err.getvalue()


def test_the_noisy_mark_and_its_reasons_are_stored_and_shown(api_client, client):
    noisy = {**PAYLOAD, "calibration": {**PAYLOAD["calibration"], "noisy": True,
                                        "loop_memory_ns": 0.9},
             "details": {"quality": {"noisy": True, "reasons": ["steal time 12% of CPU time"]}}}
    body = post(api_client, BY_DESCRIPTION, noisy).json()
    assert body["calibration"]["noisy"] is True and body["calibration"]["loop_memory_ns"] == 0.9
    page = client.get(f"/machines/{body['machine']['id']}/").content.decode()
    assert 'id="calibration-noisy"' in page and "steal time 12% of CPU time" in page
    post(api_client, BY_DESCRIPTION, PAYLOAD)  # a newer, quiet calibration of the same machine
    quiet = client.get(f"/machines/{body['machine']['id']}/").content.decode()
    assert 'id="calibration-noisy"' not in quiet and "<span class=\"tag\">noisy</span>" in quiet


@pytest.mark.parametrize("quality", [{"reasons": "busy"}, {"reasons": [1]},
                                     {"reasons": ["x" * 301]}, {"reasons": ["a"] * 21}, []])
def test_bad_quality_reasons_are_refused(api_client, quality):
    bad = {**PAYLOAD, "details": {"quality": quality}}
    response = post(api_client, BY_DESCRIPTION, bad)
    assert response.status_code == 400 and "quality.reasons" in response.content.decode()


def test_naming_someone_elses_machine_in_a_run_does_not_let_you_calibrate_it(
        django_user_model):
    alice = django_user_model.objects.create_user("alice")
    mallory = django_user_model.objects.create_user("mallory")
    first = make_run(machine=BOX, submitter=alice)
    make_run(machine=BOX, submitter=mallory)  # the same description, so alice's machine
    assert post(client_for(mallory), by_id(first.machine_id), PAYLOAD).status_code == 403
    assert post(client_for(mallory), BY_DESCRIPTION, PAYLOAD).status_code == 403
    assert not MachineCalibration.objects.exists()
    assert post(client_for(alice), by_id(first.machine_id), PAYLOAD).status_code == 201


def test_the_first_calibration_of_a_fresh_machine_makes_it_the_calibrators(django_user_model):
    alice = django_user_model.objects.create_user("alice")
    bob = django_user_model.objects.create_user("bob")
    assert post(client_for(alice), BY_DESCRIPTION, PAYLOAD).status_code == 201
    machine = MachineCalibration.objects.get().machine
    make_run(machine=BOX, submitter=bob)
    assert post(client_for(bob), by_id(machine.pk), PAYLOAD).status_code == 403
    assert post(client_for(alice), by_id(machine.pk), PAYLOAD).status_code == 201

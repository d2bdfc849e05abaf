"""Simulating "on machine X": a calibrated real machine's costs and topology, runs beside its
measured ones in one comparison."""

import pytest

import simulator
from benchmarks.comparisons.compute import resolve_runs
from benchmarks.comparisons.spec import parse_spec
from benchmarks.models import Comparison, Machine, MachineCalibration, Run
from benchmarks.services.calibrations import calibration_create
from benchmarks.services.catalog import machine_get_or_create
from simulations.comparison import comparison_spec, measured_beside
from simulations.expansion import JobSpecError
from simulations.models import Status
from simulations.services import simulation_create
from simulator.machine import MachineModel
from tests.conftest import wait_until
from tests.factories import make_run

BOX = {"name": "calbox", "cpu_model": "AMD EPYC", "arch": "x86_64", "sockets": 1,
       "cores_per_socket": 2, "threads_per_core": 1, "virtualization": "kvm"}
CALIBRATION = {"loop_ns": 0.5, "loop_memory_ns": 1.5, "thread_create_join_us": 30.0,
               "wakeup_remote_us": 40.0, "wakeup_local_us": 3.0, "context_switch_us": 1.5,
               "virtualised": True, "idle_exit_us": 0.0, "ipi_us": 20.0, "vcpu_wake_us": 5.0,
               "contention": None}
SPEC = {"workload": "threadtest", "params": {"iterations": 5}, "kernels": ["2.6.24"],
        "sweep": {"loops": [100000, 1000000]}, "repeat": 2, "seed": 7}


def calibrated(owner, spec=BOX, **values):
    machine = machine_get_or_create(spec=spec)
    calibration_create(machine=machine, submitter=owner, kernel="6.8.0",
                       measured_at="2026-11-30T18:00:00Z", values={**CALIBRATION, **values},
                       details={})
    return machine


def measured(owner, machine_spec=BOX, loops=(100000, 1000000), kernel="6.8.0-45-generic"):
    return [make_run(kernel, machine=machine_spec, submitter=owner,
                     params={"loops": n, "iterations": 5}) for n in loops]


@pytest.mark.django_db
def test_points_carry_the_calibration_and_the_machines_topology(owner):
    machine = calibrated(owner)
    job = simulation_create(spec={**SPEC, "machine": machine.pk}, owner=owner)
    assert job.spec["machine"]["id"] == machine.pk and job.spec["topology"] == "1x2x1"
    point = job.points.first()
    assert point.spec["topology"] == "1x2x1"
    assert MachineModel(**point.spec["machine"]) == MachineModel.from_calibration(CALIBRATION)
    assert point.spec == simulator.validate(point.spec)


@pytest.mark.django_db
def test_the_newest_calibration_is_used(owner):
    machine = calibrated(owner)
    calibrated(owner, loop_ns=0.25)
    job = simulation_create(spec={**SPEC, "machine": machine.pk}, owner=owner)
    newest = MachineCalibration.objects.filter(machine=machine).newest_first().first()
    assert job.spec["machine"]["calibration_id"] == newest.pk
    assert job.points.first().spec["machine"]["loop_ns"] == 0.25


@pytest.mark.django_db
def test_identical_calibrations_on_two_machines_never_share_runs(owner):
    one = calibrated(owner)
    two = calibrated(owner, spec={**BOX, "name": "calbox-2"})
    hashes = [simulation_create(spec={**SPEC, "machine": m.pk}, owner=owner).points
              .order_by("index").values_list("spec_hash", flat=True) for m in (one, two)]
    assert set(hashes[0]).isdisjoint(hashes[1])


@pytest.mark.django_db
@pytest.mark.parametrize("extra,needle", [
    ({"machine": 999999}, "no machine"),
    ({"machine": "calbox"}, "machine id"),
    ({"machine": True}, "machine id"),
    ({"topology": "2x2x1"}, "fixes the topology"),
    ({"cpus": 4}, "fixes the topology"),
    ({"sweep": {"cpus": [1, 2]}}, "fixes the topology"),
])
def test_bad_machine_choices_name_the_field(owner, extra, needle):
    machine = calibrated(owner)
    with pytest.raises(JobSpecError) as raised:
        simulation_create(spec={**SPEC, "machine": machine.pk, **extra}, owner=owner)
    assert raised.value.field == "machine" and needle in raised.value.message


@pytest.mark.django_db
def test_an_uncalibrated_machine_is_refused(owner, client):
    machine = machine_get_or_create(spec=BOX)
    with pytest.raises(JobSpecError, match="no calibration"):
        simulation_create(spec={**SPEC, "machine": machine.pk}, owner=owner)
    client.force_login(owner)
    response = client.post("/api/v1/simulations/", {**SPEC, "machine": machine.pk},
                           content_type="application/json")
    assert response.status_code == 400 and response.json()["field"] == "machine"


@pytest.mark.django_db
def test_the_form_offers_only_calibrated_machines(owner, client):
    machine = calibrated(owner)
    machine_get_or_create(spec={**BOX, "name": "never-calibrated"})
    client.force_login(owner)
    page = client.get(f"/simulations/new/?on_machine={machine.pk}").content.decode()
    assert f'<option value="{machine.pk}" selected>calbox (1x2x1, kvm)</option>' in page
    assert "never-calibrated" not in page


@pytest.mark.django_db
def test_the_form_launches_on_the_machine(owner, client):
    machine = calibrated(owner)
    client.force_login(owner)
    response = client.post("/simulations/new/", {
        "workload": "threadtest", "kernels": ["2.6.24"], "param.threadtest.iterations": "5",
        "sweep_axis_1": "loops", "sweep_values_1": "100000", "repeat": "1", "seed": "1",
        "machine": "4", "on_machine": str(machine.pk)})
    assert response.status_code == 302, response.content.decode()[:2000]
    job = owner.simulation_jobs.get()
    assert job.spec["machine"]["id"] == machine.pk and job.spec["topology"] == "1x2x1"


@pytest.mark.django_db
def test_measured_runs_chosen_to_stand_beside_the_points(owner):
    machine = calibrated(owner)
    keep = measured(owner)
    make_run("6.8.0", machine=BOX, submitter=owner, params={"loops": 100000, "iterations": 9})
    make_run("6.8.0", machine=BOX, submitter=owner, params={"iterations": 5})  # no loops
    make_run("6.8.0", machine=BOX, submitter=owner, benchmark="hackbench",
             params={"loops": 100000})
    measured(owner, machine_spec={**BOX, "name": "elsewhere"})
    job = simulation_create(spec={**SPEC, "machine": machine.pk}, owner=owner)
    points = [p.spec["params"] for p in job.points.all()]
    assert measured_beside(job, points) == [run.pk for run in keep]


@pytest.mark.django_db
def test_with_several_profiles_a_same_named_real_kernel_keeps_out_of_their_cells(owner):
    machine = calibrated(owner)
    clash = measured(owner, kernel="2.6.24", loops=(100000,))
    fine = measured(owner, kernel="6.8.0", loops=(100000,))
    spec = {**SPEC, "kernels": ["2.6.22", "2.6.24"], "machine": machine.pk,
            "sweep": {"loops": [100000], "iterations": [5]}}
    job = simulation_create(spec=spec, owner=owner)
    layout = comparison_spec(job, [1])
    assert (layout["x"], layout["series"], layout["facet"]) == (
        "param.loops", "kernel", "param.iterations")
    points = [p.spec["params"] for p in job.points.all()]
    assert measured_beside(job, points) == [fine[0].pk]
    assert clash[0].pk not in measured_beside(job, points)


@pytest.mark.worker
@pytest.mark.slow
def test_simulated_runs_sit_beside_the_measured_ones(celery_worker_factory, owner, client):
    machine = calibrated(owner)
    real = measured(owner)
    job = simulation_create(spec={**SPEC, "machine": machine.pk}, owner=owner)
    celery_worker_factory()
    wait_until(lambda: (job.refresh_from_db() or job.status not in (
        Status.QUEUED, Status.RUNNING)), timeout=90, what="the job to finish")
    assert job.status == Status.SUCCEEDED, job.error
    simulated = Run.objects.filter(simulation_points__job=job).distinct()
    assert simulated.count() == 2
    for run in simulated:
        assert run.machine_id == machine.pk and run.source == "simulator"
        assert run.benchmark.slug == "threadtest"
        assert run.environment["simulator"]["machine"]["id"] == machine.pk
        assert "--machine calibration.json" in run.environment["simulator"]["command"]
    assert Machine.objects.filter(name__startswith="sim-").count() == 0
    comparison = Comparison.objects.get(pk=job.comparison_id)
    assert comparison.spec["x"] == "param.loops" and comparison.spec["series"] == "source"
    assert sorted(comparison.run_ids) == sorted([*simulated.values_list("pk", flat=True),
                                                 *(r.pk for r in real)])
    cells = client.get(f"/c/{comparison.slug}.json").json()["cells"]
    assert {(c["x"], c["series"]) for c in cells} == {
        ("100000", "simulator"), ("1000000", "simulator"), ("100000", "api"), ("1000000", "api")}
    assert all(c["n"] == 2 if c["series"] == "simulator" else c["n"] == 3 for c in cells)
    # The same runs are found again by an ordinary comparison of the machine's runs by source.
    again = resolve_runs(parse_spec({"filters": {"machine": str(machine.pk),
                                                 "benchmark": "threadtest"},
                                     "x": "param.loops", "series": "source"}))
    assert {r.pk for r in again} == set(comparison.run_ids)
    page = client.get(f"/machines/{machine.pk}/").content.decode()
    assert "simulator" in page and "api" in page
    job_page = client.get(f"/simulations/{job.pk}/").content.decode()
    assert f'<a href="/machines/{machine.pk}/" id="job-machine">calbox</a>' in job_page

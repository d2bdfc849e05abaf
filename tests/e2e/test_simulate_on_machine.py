"""From a calibrated machine's page to a simulation on it, and the comparison that puts the
simulated runs beside the measured ones."""

import re

import pytest

from benchmarks.models import Run
from benchmarks.services.calibrations import calibration_create
from benchmarks.services.catalog import machine_get_or_create
from tests.factories import make_run

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]
BOX = {"name": "calbox", "cpu_model": "AMD EPYC", "arch": "x86_64", "sockets": 1,
       "cores_per_socket": 2, "threads_per_core": 1, "virtualization": "kvm"}


def test_simulate_on_a_machine_from_its_page(signed_in, celery_worker_factory):
    page = signed_in
    machine = machine_get_or_create(spec=BOX)
    calibration_create(machine=machine, submitter=page.user, kernel="6.8.0",
                       measured_at="2026-11-30T18:00:00Z", details={},
                       values={"loop_ns": 0.5, "loop_memory_ns": 1.5,
                               "thread_create_join_us": 30.0,
                               "wakeup_local_us": 3.0, "context_switch_us": 1.5,
                               "virtualised": True})
    for loops in (100000, 1000000):
        make_run("6.8.0", machine=BOX, submitter=page.user,
                 params={"loops": loops, "iterations": 5})
    celery_worker_factory()
    page.goto(f"/machines/{machine.pk}/")
    # the five costs and the halt-polling window the calibration above leaves out
    unmeasured = page.locator("#calibration-table td.num", has_text="not measured")
    assert unmeasured.count() == 6
    page.click("#simulate-on-machine")
    assert page.input_value("#on-machine-select") == str(machine.pk)
    page.select_option("#workload-select", "threadtest")
    page.fill("input[name='param.threadtest.iterations']", "5")
    page.check("input[name=kernels][value='2.6.24']")
    page.select_option("#sweep-axis-1", "loops")
    page.fill("#sweep-values-1", "100000, 1000000")
    page.fill("#repeat-input", "2")
    page.click("#launch-button")
    page.wait_for_url(re.compile(r".*/simulations/\d+/$"))
    page.wait_for_selector("#job[data-finished='succeeded']", timeout=60000)
    assert Run.objects.filter(source="simulator", machine=machine).count() == 2
    page.wait_for_selector("#comparison-link:not([hidden])", state="attached")
    page.click("#comparison-link")
    page.wait_for_url(re.compile(r".*/c/[\w-]+/$"))
    page.wait_for_selector("#comparison-chart .scatterlayer .trace", timeout=30000)
    names = page.eval_on_selector_all("#comparison-chart .legendtext",
                                      "els => els.map(e => e.textContent)")
    assert sorted(names) == ["api", "simulator"]
    assert page.js_errors == []

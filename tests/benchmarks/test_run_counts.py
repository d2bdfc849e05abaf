"""The live run counts of the home page, machine list, upload page and comparison builder are
kept per process between changes (benchmarks.selectors.RunCounts) and read again after any
change to the runs: every number shown is the database's count at that moment. Transactional
tests: the counts are never kept inside a transaction, and on_commit must really run."""

import os
import subprocess
import sys

import pytest

from benchmarks import selectors
from benchmarks.models import Machine, Run
from benchmarks.services.catalog import machine_get_or_create
from benchmarks.services.ownership import run_restore, run_withdraw
from tests.factories import make_run

pytestmark = pytest.mark.django_db(transaction=True)

OTHER = {"name": "other-box", "cpu_model": "Other CPU"}


def machine_counts() -> dict[str, int]:
    return {m.name: m.run_count for m in selectors.machines_with_counts()}


def benchmark_counts() -> dict[str, int]:
    return {b.slug: b.run_count for b in selectors.benchmarks_with_counts()}


def test_kept_counts_cost_the_names_and_the_runs_version(django_assert_num_queries):
    make_run("2.6.20", [1.0, 2.0])
    with django_assert_num_queries(3):  # the machines, the runs' version, the runs by machine
        first = machine_counts()
    with django_assert_num_queries(2):  # kept: the machines and the runs' version
        assert machine_counts() == first == {"core2-laptop": 1}


def test_every_change_to_the_runs_shows_at_once(django_user_model):
    staff = django_user_model.objects.create_user("staff", is_staff=True)
    first = make_run("2.6.20", [1.0, 2.0], submitter=staff)
    make_run("2.6.21", [1.0, 2.0], benchmark="hackbench", machine=OTHER)
    assert machine_counts() == {"core2-laptop": 1, "other-box": 1}
    make_run("2.6.22", [1.0, 2.0])  # a new run
    assert machine_counts() == {"core2-laptop": 2, "other-box": 1}
    assert benchmark_counts() == {"hackbench": 1, "threadtest": 2}
    run_withdraw(run=first, user=staff)
    assert machine_counts() == {"core2-laptop": 1, "other-box": 1}
    run_restore(run=first, user=staff)
    assert machine_counts() == {"core2-laptop": 2, "other-box": 1}
    # an edit moving a run to another machine (the admin's form saves the run): no new id,
    # tombstone or visibility change, only the save's signal
    first.machine = Machine.objects.get(name="other-box")
    first.save()
    assert machine_counts() == {"core2-laptop": 1, "other-box": 2}
    Run.objects.filter(pk=first.pk).delete()
    assert machine_counts() == {"core2-laptop": 1, "other-box": 1}
    assert benchmark_counts() == {"hackbench": 1, "threadtest": 1}


def test_a_change_another_process_announced_is_read_again():
    run = make_run("2.6.20", [1.0, 2.0])
    assert machine_counts() == {"core2-laptop": 1}
    # another process moved the run and renewed the shared generation: this process's kept
    # counts are not used, though nothing here saw the change
    Run.objects.filter(pk=run.pk).update(machine=machine_get_or_create(spec=OTHER))
    selectors.RunCounts.renew()
    assert machine_counts() == {"core2-laptop": 0, "other-box": 1}


def test_names_only_withdrawn_runs_use_leave_and_unused_names_stay(django_user_model):
    owner = django_user_model.objects.create_user("owner")
    run = make_run("2.6.20", [1.0, 2.0], machine=OTHER, submitter=owner)
    make_run("2.6.20", [1.0, 2.0])
    machine_get_or_create(spec={"name": "calibrated-only"})
    assert machine_counts() == {"calibrated-only": 0, "core2-laptop": 1, "other-box": 1}
    run_withdraw(run=run, user=owner)
    assert machine_counts() == {"calibrated-only": 0, "core2-laptop": 1}


def test_nothing_is_kept_from_inside_a_transaction():
    from django.db import transaction

    make_run("2.6.20", [1.0, 2.0])
    with pytest.raises(RuntimeError), transaction.atomic():
        make_run("2.6.21", [1.0, 2.0])
        assert machine_counts() == {"core2-laptop": 2}  # this transaction's own view
        raise RuntimeError("rolled back")
    assert machine_counts() == {"core2-laptop": 1}


def test_the_receivers_are_connected_in_any_process():
    """A worker that stores runs never renders a page: the receivers renewing the counts must
    be connected once the apps are ready, not when a page first imports the selectors."""
    code = ("import django, sys; django.setup(); "
            "from benchmarks.signals import runs_stored, runs_visibility_changed; "
            "uids = [key[0] for s in (runs_stored, runs_visibility_changed) "
            "for key, *_ in s.receivers]; "
            "print('run-counts-stored' in uids, 'run-counts-visibility' in uids)")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={**os.environ,
                                            "DJANGO_SETTINGS_MODULE": "portal.settings"})
    assert found.stdout.split() == ["True", "True"]

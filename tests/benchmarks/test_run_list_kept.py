"""The unfiltered run list's count and every list's filter choices are kept per process between
changes (benchmarks.selectors.RunCounts, as the home page's counts) and read again after any
change to the runs or to the names: after each change the kept values equal a fresh read (the
plain path) and the page shows them. Transactional tests: nothing is kept inside a transaction,
and on_commit must really run."""

import re

import pytest
from django.test import override_settings
from django.urls import reverse

from benchmarks import selectors
from benchmarks.models import Benchmark, Kernel, Machine, Metric, Run
from benchmarks.services.catalog import machine_get_or_create
from benchmarks.services.ownership import run_restore, run_withdraw
from tests.factories import CORE2, make_run

pytestmark = pytest.mark.django_db(transaction=True)

OTHER = {**CORE2, "name": "other-box", "cpu_model": "Other CPU"}


def assert_kept_is_fresh(client=None) -> None:
    if client is not None:  # first, while what the last request kept may still be used
        assert_page_is_fresh(client)
    count, choices, _ = selectors.run_list_kept(count=True)
    assert count == Run.objects.visible().count()
    assert choices == selectors.read_run_list_choices_apart()  # one query per list


def test_the_choices_in_one_query_are_the_five_queries(django_user_model):
    """Names in several cases, accents, quotes and digits (the database's collation orders
    each list, alone or numbered in the one statement), unused and withdrawn-only names."""
    owner = django_user_model.objects.create_user("owner")
    names = ["Zeta", "alpha", "Élan", "b'quote", "10-box", "9-box", "_under", "alpha-2"]
    for number, name in enumerate(names):
        make_run(f"2.6.{number}", [1.0], benchmark=name.lower().replace("'", ""),
                 machine={**CORE2, "name": name, "cpu_model": f"CPU {number}"},
                 policy=["SCHED_OTHER", "sched_batch", "FIFO"][number % 3],
                 params={f"p{number % 3}": number, "Loops": 1}, submitter=owner)
    machine_get_or_create(spec={"name": "unused box"})
    Benchmark.objects.create(slug="unused-bench", name="Unused")
    withdrawn = make_run("9.9", [1.0], benchmark="gone", machine={"name": "gone box"},
                         policy="SCHED_GONE", params={"gone": 1}, submitter=owner)
    run_withdraw(run=withdrawn, user=owner)
    apart, together = selectors.read_run_list_choices_apart(), selectors.read_run_list_choices()
    assert together == apart
    assert len(apart.machines) == len(names) + 1 and "SCHED_GONE" not in apart.policies
    assert "gone" not in apart.params and len(apart.kernels) == len(names)
    empty = selectors.RunListChoices((), (), (), (), ())
    Run.objects.all().delete()
    Benchmark.objects.exclude(slug="unused-bench").delete()
    Machine.objects.all().delete()
    assert selectors.read_run_list_choices() == selectors.read_run_list_choices_apart() == \
        selectors.RunListChoices((("unused-bench", "Unused"),), (), (), (), ()) != empty


def shown(client) -> tuple[int, list[str]]:
    """The run list's count and its machine options, as the page shows them."""
    html = client.get(reverse("run-list")).content.decode()
    count = int(re.search(r'<span class="muted">(\d+) runs?</span>', html).group(1))
    select = re.search(r'<select name="machine">(.*?)</select>', html, re.S).group(1)
    return count, [label for label in re.findall(r"<option [^>]*>([^<]*)</option>", select)
                   if label != "any"]


def test_a_kept_run_list_reads_the_check_alone(client, django_assert_num_queries):
    make_run("2.6.20", [1.0, 2.0])
    with django_assert_num_queries(5):  # the check, the choices (one query), count, rows, summaries
        client.get(reverse("run-list"))
    with django_assert_num_queries(1):  # kept: the check; count, choices and first page kept
        assert shown(client) == (1, ["core2-laptop"])
    with django_assert_num_queries(3):  # another page: the check, its rows, their summaries
        client.get(reverse("run-list"), {"page": "2"})
    with django_assert_num_queries(5):  # filtered: the kernel looked up, the check, the count
        client.get(reverse("run-list"), {"kernel": "2.6.20"})


def assert_page_is_fresh(client) -> str:
    """The unfiltered page as served (kept or not) is the page made afresh."""
    served = client.get(reverse("run-list")).content.decode()
    selectors.RunCounts.renew()  # nothing kept is used by the next request
    assert served == client.get(reverse("run-list")).content.decode()
    return served


def test_every_change_to_the_runs_and_names_shows_at_once(client, django_user_model):
    staff = django_user_model.objects.create_user("staff", is_staff=True)
    first = make_run("2.6.20", [1.0, 2.0], submitter=staff, policy="SCHED_OTHER")
    make_run("2.6.21", [1.0, 2.0], benchmark="hackbench", machine=OTHER, params={"threads": 2})
    assert shown(client) == (2, ["core2-laptop", "other-box"])
    assert_kept_is_fresh(client)
    make_run("2.6.22", [1.0, 2.0], policy="SCHED_BATCH")  # a new run, kernel and policy
    assert_kept_is_fresh(client)
    assert shown(client)[0] == 3
    run_withdraw(run=first, user=staff)
    assert_kept_is_fresh(client)
    assert shown(client)[0] == 2
    run_restore(run=first, user=staff)
    assert_kept_is_fresh(client)
    # an edit moving a run to another machine, then one renaming the machine (the admin's
    # forms save them): no new id, tombstone or visibility change, only the saves' signals
    first.machine = Machine.objects.get(name="other-box")
    first.save()
    assert_kept_is_fresh(client)
    renamed = Machine.objects.get(name="other-box")
    renamed.name = "renamed-box"
    renamed.save()
    assert_kept_is_fresh(client)
    assert shown(client) == (3, ["core2-laptop", "renamed-box"])
    bench = Benchmark.objects.get(slug="hackbench")
    bench.name = "Hackbench (renamed)"
    bench.save()
    assert_kept_is_fresh(client)
    metric = Metric.objects.get(name="time_ms", benchmark__slug="hackbench")  # rows show it
    metric.name = "elapsed_ms"
    metric.save()
    assert "elapsed_ms" in assert_page_is_fresh(client)
    machine_get_or_create(spec={"name": "calibrated-only"})  # a machine no run uses yet
    assert_kept_is_fresh(client)
    assert shown(client) == (3, ["calibrated-only", "core2-laptop", "renamed-box"])
    Run.objects.filter(pk=first.pk).delete()
    assert_kept_is_fresh(client)
    Kernel.objects.filter(runs__isnull=True).delete()  # a kernel no run uses any more
    assert_kept_is_fresh(client)
    assert shown(client)[0] == 2


def test_a_change_another_process_announced_is_read_again():
    run = make_run("2.6.20", [1.0, 2.0], policy="SCHED_OTHER")
    assert selectors.run_list_kept(count=True)[1].policies == ("SCHED_OTHER",)
    # another process changed the run in place and renewed the shared generation: this
    # process's kept choices are not used, though nothing here saw the change
    Run.objects.filter(pk=run.pk).update(policy="SCHED_FIFO")
    selectors.RunCounts.renew()
    assert selectors.run_list_kept(count=True)[1].policies == ("SCHED_FIFO",)
    assert_kept_is_fresh()


def test_nothing_is_kept_from_inside_a_transaction():
    from django.db import transaction

    make_run("2.6.20", [1.0, 2.0])
    with pytest.raises(RuntimeError), transaction.atomic():
        make_run("2.6.21", [1.0, 2.0], machine=OTHER)
        count, choices, _ = selectors.run_list_kept(count=True)
        assert count == 2 and len(choices.machines) == 2  # this transaction's own view
        raise RuntimeError("rolled back")
    count, choices, _ = selectors.run_list_kept(count=True)
    assert count == 1 and [name for _, name in choices.machines] == ["core2-laptop"]


def test_the_kept_options_are_those_made_afresh(client):
    """The unfiltered page's <option>s are made once per kept choices; a filtered page marks
    its choice, and the next unfiltered page marks none."""
    from benchmarks.pages import views

    make_run("2.6.20", [1.0, 2.0])
    make_run("2.6.21", [1.0, 2.0], machine=OTHER)
    client.get(reverse("run-list"))
    _, choices, _ = selectors.run_list_kept(count=False)
    assert views._run_list_options_kept(choices, {}) == views._run_list_options(choices, {})
    assert views._run_list_options_kept(choices, {}) is views._run_list_options_kept(choices, {})
    filtered = client.get(reverse("run-list"), {"kernel": "2.6.21"}).content.decode()
    assert '<option value="2.6.21" selected>' in filtered
    assert " selected>" not in client.get(reverse("run-list")).content.decode()


def test_a_read_checked_under_an_older_key_is_not_kept_for_the_new_one():
    """A thread that checked, then read after another thread saw the key move, stores its read
    where only its own (older) key finds it."""
    make_run("2.6.20", [1.0, 2.0])
    older = selectors.run_counts._check()
    make_run("2.6.21", [1.0, 2.0])  # another thread's request sees the new run's id
    newer = selectors.run_counts._check()
    assert newer is not older
    assert selectors.run_counts._read("probe", lambda: "read before", older) == "read before"
    assert "probe" not in newer and "probe" not in selectors.run_counts._check()


def _host_cache(name: str) -> dict:
    return {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                        "LOCATION": name}}


def test_another_hosts_rename_shows_whatever_cache_each_host_has(client):
    """Web hosts that keep their data directories (and so their file caches) apart: a rename
    made on another host moves no id, and reaches this host's kept run list through the
    generation it reads from the database."""
    make_run("2.6.20", [1.0, 2.0])
    with override_settings(CACHES=_host_cache("this host")):
        assert shown(client) == (1, ["core2-laptop"])  # kept from here on
    with override_settings(CACHES=_host_cache("the other host")):
        Machine.objects.filter(name="core2-laptop").update(name="renamed-box")
        with override_settings(CACHES=_host_cache("this host")):
            assert shown(client) == (1, ["core2-laptop"])  # no id moved: still kept
        selectors.RunCounts.renew()  # what the other host's commit runs, with its cache
    with override_settings(CACHES=_host_cache("this host")):
        assert shown(client) == (1, ["renamed-box"])

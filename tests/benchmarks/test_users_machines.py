"""Each user's machines are theirs: runs without a machine go to a machine of their submitter's
own ("unnamed (<username>)"), never one bucket shared by everybody."""

import pytest

from benchmarks import selectors
from benchmarks.services.catalog import (
    UNKNOWN_MACHINE,
    CatalogError,
    machine_get_or_create,
    machine_of_user,
)
from tests.factories import make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice")


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob")


@pytest.mark.parametrize("spec", [None, "", UNKNOWN_MACHINE])
def test_no_machine_means_the_submitters_own_unnamed_machine(alice, bob, spec):
    alices = machine_get_or_create(spec=spec, owner=alice)
    assert alices.name == "unnamed (alice)"
    assert machine_get_or_create(spec=spec, owner=alice) == alices
    bobs = machine_get_or_create(spec=spec, owner=bob)
    assert bobs != alices and bobs.name == "unnamed (bob)"
    # without a submitter (the demo loader) the old shared placeholder stays
    assert machine_get_or_create(spec=UNKNOWN_MACHINE).name == UNKNOWN_MACHINE


def test_an_unnamed_machine_cannot_be_reached_by_another_user(alice, bob):
    alices = machine_of_user(owner=alice)
    with pytest.raises(CatalogError, match="kept for each user"):
        machine_get_or_create(spec="unnamed (alice)", owner=bob)
    with pytest.raises(CatalogError):
        machine_get_or_create(spec="unnamed (alice)")
    assert machine_get_or_create(spec="unnamed (alice)", owner=alice) == alices
    # the same description sent as an object is a different (shared-catalog) fingerprint
    assert machine_get_or_create(spec={"name": "lab box"}, owner=bob) != alices


def test_a_machine_named_after_the_upload_is_the_users_own(alice, bob):
    first = machine_of_user(owner=alice, name="bench-upload.txt")
    assert first.name == "bench-upload.txt"
    assert machine_of_user(owner=bob, name="bench-upload.txt") != first
    assert machine_of_user(owner=alice, name="bench-upload.txt") == first


def test_the_preview_note_says_where_runs_go_and_offers_known_machines(alice, bob):
    old = make_run("2.6.22", [1.0], machine="old-box", submitter=alice)
    new = make_run("2.6.24", [1.0], machine="new-box", submitter=alice)
    make_run("2.6.24", [1.0], machine="bobs-box", submitter=bob)
    note = selectors.upload_machine_note(user=alice, named=None)
    assert note["machine_name"] == "unnamed (alice)"
    assert "unnamed (alice)" in note["note"]
    assert [m["id"] for m in note["your_machines"]] == [new.machine_id, old.machine_id]
    named = selectors.upload_machine_note(user=alice, named="old-box")
    assert named["machine_name"] is None and named["note"] == ""


def test_a_bare_name_shared_by_several_machines_is_refused_unless_the_user_ran_on_one(alice, bob):
    """Two descriptions named "laptop" are two machines: a bare "laptop" means the one the
    submitter ran on, and is refused (naming the field) when that is not exactly one."""
    core2 = machine_get_or_create(spec={"name": "laptop", "cpu_model": "Core 2 Duo T7200"})
    machine_get_or_create(spec={"name": "laptop", "cpu_model": "Pentium 4 HT"})
    with pytest.raises(CatalogError, match="names 2 machines") as refused:
        machine_get_or_create(spec="laptop", owner=bob)
    assert refused.value.field == "machine"
    with pytest.raises(CatalogError, match="full machine description"):
        machine_get_or_create(spec="laptop")
    make_run("2.6.22", [1.0], machine={"name": "laptop", "cpu_model": "Core 2 Duo T7200"},
             submitter=alice)
    assert machine_get_or_create(spec="laptop", owner=alice) == core2
    # one machine of that name: the name is enough, whoever sends it
    lab = machine_get_or_create(spec={"name": "lab box", "cpu_model": "Xeon"})
    assert machine_get_or_create(spec="lab box", owner=bob) == lab

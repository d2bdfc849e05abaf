import pytest

from benchmarks.models import Machine, MetricSummary, RunParam, Sample
from benchmarks.services.catalog import (
    CatalogError,
    kernel_get_or_create,
    machine_fingerprint,
    machine_get_or_create,
)
from benchmarks.services.runs import MetricInput, Provenance, RunError, run_create
from tests.factories import CORE2, make_run

pytestmark = pytest.mark.django_db


def test_every_sample_is_kept_with_its_summary():
    run = make_run(values=[3332, 3400, 3310, 3390])
    values = list(run.samples.order_by("index").values_list("value", flat=True))
    assert values == [3332, 3400, 3310, 3390]
    summary = MetricSummary.objects.get(run=run)
    assert summary.n == 4
    assert summary.median == pytest.approx(3361)
    assert summary.mean == pytest.approx(3358)
    assert summary.minimum == 3310 and summary.maximum == 3400
    assert summary.stdev == pytest.approx(43.848, abs=0.001)  # sqrt(5768 / 3)


def test_params_are_indexed_for_filtering():
    run = make_run(params={"loops": 1000000, "iterations": 500})
    assert set(RunParam.objects.filter(run=run).values_list("name", "value")) == {
        ("loops", "1000000"),
        ("iterations", "500"),
    }


def test_machines_are_deduplicated_by_fingerprint():
    first = machine_get_or_create(spec=CORE2)
    again = machine_get_or_create(spec=dict(CORE2))
    assert machine_get_or_create(spec="core2-laptop").pk == first.pk
    other = machine_get_or_create(spec={**CORE2, "threads_per_core": 2})
    assert first.pk == again.pk != other.pk
    assert first.fingerprint == machine_fingerprint(CORE2)
    assert first.topology == "1x2x1" and first.cpus == 2
    # two descriptions now share the name: a bare name no longer says which
    with pytest.raises(CatalogError, match="names 2 machines"):
        machine_get_or_create(spec="core2-laptop")
    assert Machine.objects.count() == 2


@pytest.mark.parametrize(
    "spec, field",
    [
        ({"name": "x", "sockets": "two"}, "sockets"),
        ({"name": "x", "sockets": -1}, "sockets"),
        ({"name": "x", "colour": "red"}, "colour"),
        ({"cpu_model": "no name"}, "name"),
        ({"name": "x", "caches": ["L2"]}, "caches"),
    ],
)
def test_bad_machine_descriptions_name_the_field(spec, field):
    with pytest.raises(CatalogError, match=field):
        machine_get_or_create(spec=spec)


def test_kernel_kept_verbatim_with_family():
    kernel = kernel_get_or_create(version="2.6.22.17-cfs-v24.1-smp")
    assert kernel.version == "2.6.22.17-cfs-v24.1-smp"
    assert kernel.family == "cfs"
    assert kernel_get_or_create(version="2.6.22.17-cfs-v24.1-smp").pk == kernel.pk


@pytest.mark.parametrize(
    "values, message",
    [([], "no values"), (["fast"], "not a number"), ([float("nan")], "not finite"), ("12", "list")],
)
def test_bad_samples_are_refused_and_nothing_is_written(values, message):
    good = make_run()
    with pytest.raises(RunError, match=message):
        run_create(
            benchmark=good.benchmark,
            kernel=good.kernel,
            machine=good.machine,
            metrics={"time_ms": MetricInput(values, "ms")},
            provenance=Provenance(source="api"),
        )
    assert Sample.objects.exclude(run=good).count() == 0


def test_series_rows_must_match_columns():
    with pytest.raises(RunError, match=r"rows\[1\]"):
        make_run(series={"vmstat": {"columns": ["r", "cs"], "rows": [[1, 200], [2]]}})

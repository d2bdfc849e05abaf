"""Time as a dimension: runs carry when they were measured; comparisons put measured.day,
measured.week or measured.month on x, series or facet."""

from datetime import UTC, datetime, timedelta

import pytest

from benchmarks.comparisons.compute import compute
from benchmarks.comparisons.dimensions import available
from benchmarks.comparisons.spec import SpecError, parse_spec
from benchmarks.errors import InputError
from benchmarks.models import Run
from benchmarks.services.measured import measured_at_parse
from tests.factories import make_run

pytestmark = pytest.mark.django_db
NOW = datetime(2024, 6, 1, 12, tzinfo=UTC)


def measured(run, when: str):
    Run.objects.filter(pk=run.pk).update(measured_at=measured_at_parse(when, now=NOW))


def drifting_box():
    """The same kernel on the same box, slower each week; one run with no date."""
    for day, values in (("2024-05-06", [100.0, 101.0]), ("2024-05-08", [102.0, 103.0]),
                        ("2024-05-14", [110.0, 111.0]), ("2024-05-21", [120.0, 121.0])):
        measured(make_run("6.1", values, machine="box"), day)
    make_run("6.1", [500.0], machine="box")


def cells(result) -> dict:
    return {cell["x"]: cell for cell in result["cells"]}


def test_measured_week_on_x_shows_the_drift_and_undated_runs_apart():
    drifting_box()
    result = compute(parse_spec({"filters": {"benchmark": "threadtest"},
                                 "x": "measured.week", "series": "kernel"}))
    by_week = cells(result)
    assert list(by_week) == ["2024-W19", "2024-W20", "2024-W21", "(unset)"]
    assert by_week["2024-W19"]["n"] == 4 and by_week["2024-W19"]["median"] == 101.5
    assert by_week["2024-W21"]["median"] == 120.5


@pytest.mark.parametrize("dimension,values", [
    ("measured.day", ["2024-05-06", "2024-05-08", "2024-05-14", "2024-05-21", "(unset)"]),
    ("measured.month", ["2024-05", "(unset)"]),
])
def test_measured_as_series_and_facet(dimension, values):
    drifting_box()
    for role in ("series", "facet"):
        result = compute(parse_spec({"filters": {"benchmark": "threadtest"}, "x": "kernel",
                                     role: dimension}))
        found = {cell[role] for cell in result["cells"]}
        assert sorted(found) == sorted(values)


def test_measured_is_offered_only_when_runs_carry_it():
    run = make_run("6.1", [1.0])
    assert "measured.week" not in available([run])
    measured(run, "2024-05-06T10:00:00+02:00")
    assert {"measured.day", "measured.week", "measured.month"} <= set(
        available([Run.objects.get(pk=run.pk)]))


def test_an_unknown_period_is_refused_naming_the_field():
    with pytest.raises(SpecError, match="measured.day"):
        parse_spec({"x": "measured.hour"})


@pytest.mark.parametrize("text,expected", [
    ("2024-05-03", datetime(2024, 5, 3, tzinfo=UTC)),
    ("2024-05-03T10:00:00Z", datetime(2024, 5, 3, 10, tzinfo=UTC)),
    ("2024-05-03T12:00:00+02:00", datetime(2024, 5, 3, 10, tzinfo=UTC)),
    ("2024-06-02T06:00:00Z", datetime(2024, 6, 2, 6, tzinfo=UTC)),  # a clock a bit ahead
    (None, None), ("", None),
])
def test_measured_values_accepted(text, expected):
    assert measured_at_parse(text, now=NOW) == expected


@pytest.mark.parametrize("value,needle", [
    ("yesterday", "ISO 8601"), ("2024-13-01", "ISO 8601"), (1714730000, "as text"),
    ("2024-06-03T12:00:01Z", "future"), ("1970-01-01", "before 1991"),
])
def test_measured_values_refused_naming_the_field(value, needle):
    with pytest.raises(InputError, match=needle) as refused:
        measured_at_parse(value, field="measured", line=7, now=NOW)
    assert (refused.value.field, refused.value.line) == ("measured", 7)


def test_the_future_bound_is_a_day_from_now():
    ahead = datetime.now(UTC) + timedelta(hours=23)
    assert measured_at_parse(ahead.isoformat()) is not None

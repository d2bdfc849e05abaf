"""When a run was measured: the `measured` value of run JSON and uploads, validated."""

from datetime import UTC, datetime, timedelta

from django.utils import timezone

from benchmarks.errors import InputError

# Clocks differ and time zones are written carelessly: a day ahead is allowed, more is a typo.
FUTURE_SLACK = timedelta(days=1)
EARLIEST = datetime(1991, 1, 1, tzinfo=UTC)  # before Linux, a date is a typo too


def measured_at_parse(value, *, field: str = "measured", line: int | None = None,
                      now: datetime | None = None) -> datetime | None:
    """None for no value; else an aware datetime from ISO 8601 text ("2024-05-03",
    "2024-05-03T10:00:00+02:00", "...Z"; no zone means UTC), or InputError naming the field."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InputError(f"{field}: give an ISO 8601 date or time as text, such as "
                         "2024-05-03T10:00:00Z", field=field, line=line)
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise InputError(f"{field}: {value[:40]!r} is not an ISO 8601 date or time, such as "
                         "2024-05-03T10:00:00Z", field=field, line=line) from None
    if timezone.is_naive(moment):
        moment = moment.replace(tzinfo=UTC)
    latest = (now or timezone.now()) + FUTURE_SLACK
    if moment > latest:
        raise InputError(f"{field}: {value[:40]} is in the future", field=field, line=line)
    if moment < EARLIEST:
        raise InputError(f"{field}: {value[:40]} is before 1991", field=field, line=line)
    return moment

"""`run_id IN (...)` for a comparison's runs, one bound array on PostgreSQL.

A comparison reads several tables for the same thousand runs. Given a list, the ORM prepares
each id as a lookup parameter (some 15 us of Python per id and query: ~15 ms of a 200-series
comparison's five such reads); on PostgreSQL the list goes to the database as one array
parameter instead (`= ANY(%s)`, adapted by psycopg2 in C). The rows are the same:
tests/benchmarks/test_comparisons.py computes comparisons both ways and compares them.
"""

from django.db import connection
from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL


def one_array() -> bool:
    """Can the ids go as one array parameter? (The test of both ways turns this off.)"""
    return connection.vendor == "postgresql"


def among_runs(model, run_ids, field: str = "run_id") -> Q | RawSQL:
    """A filter() condition: `model`'s `field` (a run id column) is one of `run_ids`."""
    if not one_array():
        return Q(**{f"{field}__in": run_ids})
    column = model._meta.get_field(field).column
    return RawSQL(f'"{model._meta.db_table}"."{column}" = ANY(%s)', [list(run_ids)],
                  output_field=BooleanField())

"""Fast sample insertion: COPY on PostgreSQL, batched INSERTs elsewhere.

Samples are the bulk of everything stored (a harness sweep easily sends a million), so they skip
model instances entirely and go in as rows.
"""

import io
from collections.abc import Iterable

from django.db import connection

from benchmarks.models import Sample

BATCH = 5000
COPY_BUFFER_ROWS = 200_000


class SampleWriter:
    """Collect (run, metric, values) and write them in as few round trips as possible."""

    def __init__(self):
        self._pending: list[tuple[int, int, Iterable[float]]] = []
        self._pending_rows = 0

    def add(self, *, run_id: int, metric_id: int, values) -> None:
        self._pending.append((run_id, metric_id, values))
        self._pending_rows += len(values)
        if self._pending_rows >= COPY_BUFFER_ROWS:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        if connection.vendor == "postgresql":
            self._copy()
        else:
            self._insert()
        self._pending, self._pending_rows = [], 0

    def _copy(self) -> None:
        buffer = io.StringIO()
        write = buffer.write
        for run_id, metric_id, values in self._pending:
            prefix = f"{run_id}\t{metric_id}\t"
            for index, value in enumerate(values):
                write(f"{prefix}{index}\t{value!r}\n")
        buffer.seek(0)
        table = Sample._meta.db_table
        with connection.cursor() as cursor:
            cursor.copy_expert(
                f"COPY {table} (run_id, metric_id, index, value) FROM STDIN", buffer
            )

    def _insert(self) -> None:
        rows = (
            Sample(run_id=run_id, metric_id=metric_id, index=index, value=value)
            for run_id, metric_id, values in self._pending
            for index, value in enumerate(values)
        )
        Sample.objects.bulk_create(rows, batch_size=BATCH)

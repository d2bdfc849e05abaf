"""Fast sample insertion: COPY on PostgreSQL, batched INSERTs elsewhere.

Samples are the bulk of everything stored (a harness sweep easily sends a million), so they skip
model instances entirely and go in as rows.
"""

import io
from collections.abc import Iterable, Iterator
from itertools import islice

from django.db import connection

from benchmarks.models import Sample

BATCH = 5000
COPY_BUFFER_ROWS = 50_000


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

    def _rows(self) -> Iterator[tuple[int, int, int, float]]:
        for run_id, metric_id, values in self._pending:
            for index, value in enumerate(values):
                yield run_id, metric_id, index, value

    def _copy(self) -> None:
        # One COPY per chunk keeps the text buffer small however many samples a run has.
        sql = f"COPY {Sample._meta.db_table} (run_id, metric_id, index, value) FROM STDIN"
        rows = self._rows()
        with connection.cursor() as cursor:
            while chunk := list(islice(rows, COPY_BUFFER_ROWS)):
                text = "".join(f"{r}\t{m}\t{i}\t{v!r}\n" for r, m, i, v in chunk)
                buffer = io.BytesIO(text.encode("ascii"))
                cursor.copy_expert(sql, buffer)

    def _insert(self) -> None:
        rows = self._rows()
        while chunk := list(islice(rows, BATCH)):
            Sample.objects.bulk_create(
                [Sample(run_id=r, metric_id=m, index=i, value=v) for r, m, i, v in chunk]
            )

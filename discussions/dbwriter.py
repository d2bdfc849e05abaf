"""Statements run on a second thread while the caller prepares the next ones.

An mbox import is Python work (parsing, rendering, preparing rows) and database work (the
post INSERTs, their search-vector trigger and indexes), one after the other. psycopg2 lets go
of the GIL while the server works on a statement, so a thread that sends the INSERTs while
the caller prepares the next batch makes the import take about the longer of the two works
instead of their sum, when a second CPU is free.

The writer uses the caller's own connection: Django's connections are per thread, and another
thread's would be another session, outside the caller's transaction. Only one thread uses the
connection at a time: the caller sends no statement of its own between entering and leaving
the writer (`with StatementWriter() as writer:`), the writer thread is the only one to run
statements meanwhile, in the order they were given. The first statement to fail stops the
writer (what was queued after it is never run); its error is raised in the caller's thread at
its next `send` or when the block ends, so the caller's `transaction.atomic()` rolls back all
of it. An error in the caller's block stops the writer before the block is left, so nothing
runs after the transaction has ended.
"""

import queue
import threading

from django.db import DEFAULT_DB_ALIAS, connections

# Batches waiting for the writer: two keep it busy while the caller prepares a third, without
# holding the parameters of the whole import in memory twice.
QUEUED_BATCHES = 2
_STOP = object()


class StatementWriter:
    """`send(sql, params)` runs the statement on the writer thread (threaded) or at once in
    the caller's thread (not threaded: the plain path, same statements in the same order).
    Threaded by default on PostgreSQL, whose driver releases the GIL during a statement."""

    def __init__(self, using: str = DEFAULT_DB_ALIAS, threaded: bool | None = None):
        self.db = connections[using]
        self.threaded = self.db.vendor == "postgresql" if threaded is None else threaded
        self.error: BaseException | None = None
        self.statements = 0
        self._queue: queue.Queue = queue.Queue(maxsize=QUEUED_BATCHES)
        self._thread: threading.Thread | None = None
        self._cancelled = threading.Event()

    def __enter__(self) -> "StatementWriter":
        if self.threaded:
            self.db.ensure_connection()  # opened here: the writer thread only borrows it
            self.db.inc_thread_sharing()
            self._thread = threading.Thread(target=self._run, name="mbox-import-writer",
                                            daemon=True)
            self.db.execute_wrappers.append(self._writer_only)
            self._thread.start()
        return self

    def _writer_only(self, execute, sql, params, many, context):
        """While the writer runs, a statement from any other thread is refused: it would run
        between the writer's in no defined order."""
        if threading.get_ident() != getattr(self._thread, "ident", None):
            raise RuntimeError("the connection is lent to the import's writer thread until "
                               "its block ends")
        return execute(sql, params, many, context)

    def send(self, sql: str, params: list) -> None:
        self._raise_error()
        if self._thread is None:
            self._execute(sql, params)
        else:
            self._queue.put((sql, params))

    def _execute(self, sql: str, params: list) -> None:
        with self.db.cursor() as cursor:
            cursor.execute(sql, params)
        self.statements += 1

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            if self.error is not None or self._cancelled.is_set():
                continue  # after a failure nothing more runs; keep emptying the queue
            try:
                self._execute(*item)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                self.error = exc

    def _raise_error(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            self._cancelled.set()  # raised once; nothing queued runs after it
            raise error

    def __exit__(self, exc_type, exc, traceback) -> None:
        if self._thread is not None:
            if exc_type is not None:
                self._cancelled.set()  # the caller failed: what is queued must not run
            self._queue.put(_STOP)
            self._thread.join()
            self.db.execute_wrappers.remove(self._writer_only)
            self._thread = None
            self.db.dec_thread_sharing()
        if exc_type is None:
            self._raise_error()

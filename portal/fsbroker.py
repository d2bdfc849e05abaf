"""The embedded broker: kombu's filesystem transport, made safe for several workers.

kombu's own transport writes a message file in place under its final name, so a worker polling
the folder can take it before the producer has finished writing and die on a JSONDecodeError
(the message is lost with it). It also rewrites the exchange tables (which queues a fanout
reaches) in place after truncating them, so a worker starting next to another can read an empty
table. Here every file appears under its final name only once complete (written under a hidden
temporary name in the same folder, then renamed), a message is claimed by an atomic rename that
exactly one worker wins, and a message that still does not decode (written by an older producer,
or cut short by a full disk) is waited for briefly and then set aside in `rejected/` with an error
in the log, never raised into the worker. Settings select it with `CELERY_BROKER_TRANSPORT`
whenever the broker URL is `filesystem://`.

This is for one host (the site and its workers share the folders). Several hosts need Redis or
RabbitMQ (README, Production).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import time
import uuid
from pathlib import Path
from queue import Empty

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.json import dumps, loads

logger = logging.getLogger(__name__)

TEMP_PREFIX = ".tmp-"  # never matches `<stamp>_<uuid>.<queue>.msg`, so no reader picks it up
# How long a reader waits for a message file that does not decode yet (an older, non-atomic
# producer may still be writing it) before setting it aside.
PARTIAL_WAIT_SECONDS = 2.0


def write_atomically(path: Path, data: bytes) -> None:
    """Create or replace `path` so that readers see either nothing (or the old file) or all of
    `data`: write a temporary file in the same folder, flush it to disk, rename it."""
    temp = path.parent / f"{TEMP_PREFIX}{uuid.uuid4().hex}"
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise ChannelError(f"Cannot write {path}") from exc


def _read_complete(path: Path) -> object:
    """The decoded message at `path`, waiting a moment for a writer still filling it."""
    deadline = time.monotonic() + PARTIAL_WAIT_SECONDS
    while True:
        data = path.read_bytes()
        try:
            return loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


class Channel(filesystem.Channel):
    @property
    def _claim_folder(self) -> Path:
        # the processed folder sits next to the queue folder (settings), so the claiming rename
        # stays on one filesystem and is atomic
        return Path(self.processed_folder)

    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(time.monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        write_atomically(Path(self.data_folder_out) / name, dumps(payload).encode("utf-8"))

    def _get(self, queue):
        wanted = f"{queue}.msg"
        inbox = Path(self.data_folder_in)
        for name in sorted(os.listdir(inbox)):
            if name.partition(".")[2] != wanted:
                continue
            claimed = self._claim_folder / name
            try:
                os.rename(inbox / name, claimed)
            except FileNotFoundError:
                continue  # another worker claimed it first
            try:
                payload = _read_complete(claimed)
            except (ValueError, UnicodeDecodeError):
                self._reject(claimed)
                continue
            except OSError as exc:
                raise ChannelError(f"Cannot read file {claimed} from queue.") from exc
            if not self.store_processed:
                with contextlib.suppress(OSError):
                    claimed.unlink()
            return payload
        raise Empty()

    def _reject(self, path: Path) -> None:
        rejected = self._claim_folder.parent / "rejected"
        rejected.mkdir(exist_ok=True)
        with contextlib.suppress(OSError):
            os.replace(path, rejected / path.name)
        logger.error("broker message %s does not decode; set aside in %s", path.name, rejected)

    # The exchange tables: changed under an exclusive lock on a side file, replaced atomically,
    # so readers need no lock and never see a truncated table.

    @contextlib.contextmanager
    def _table_lock(self, exchange):
        self.control_folder.mkdir(parents=True, exist_ok=True)
        lock_path = self._exchange_file(exchange).with_suffix(".lock")
        with open(lock_path, "a") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _read_table(self, exchange) -> list:
        file = self._exchange_file(exchange)
        try:
            rows = loads(file.read_bytes().decode("utf-8"))
        except FileNotFoundError:
            return []
        except (ValueError, UnicodeDecodeError):
            # only an older transport writes tables in place; the bindings are declared again
            # by every consumer that starts, so an unreadable table is rebuilt, not fatal
            logger.warning("exchange table %s does not decode; starting it afresh", file)
            return []
        except OSError as exc:
            raise ChannelError(f"Cannot open {file}") from exc
        return [filesystem.exchange_queue_t(*row) for row in rows]

    def _write_table(self, exchange, rows) -> None:
        write_atomically(self._exchange_file(exchange), json.dumps(rows).encode("utf-8"))

    def get_table(self, exchange):
        return self._read_table(exchange)

    def _queue_bind(self, exchange, routing_key, pattern, queue):
        row = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        with self._table_lock(exchange):
            rows = self._read_table(exchange)
            if row not in rows:
                self._write_table(exchange, [row, *rows])

    def _delete(self, queue, exchange, routing_key, pattern, *args, **kwargs):
        # skip kombu's filesystem._delete (an in-place rewrite); the virtual base forgets the
        # binding in this process's state
        super(filesystem.Channel, self)._delete(queue, exchange, routing_key, pattern, *args,
                                                **kwargs)
        row = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        with self._table_lock(exchange):
            rows = self._read_table(exchange)
            if row in rows:
                self._write_table(exchange, [r for r in rows if r != row])


class Transport(filesystem.Transport):
    Channel = Channel
    driver_name = "schedbench-filesystem"

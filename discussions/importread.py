"""The mbox import's reading: messages parsed one at a time from the file (or gzip stream),
their large parts (raw source, body, attachments) put in a temporary spool file, and only a
compact record of each kept in memory for threading (ids, references, subject, date, where
its parts are in the spool). The storing reads each message's parts back when it writes its
post, a batch at a time, so the import's memory follows the number of messages, at a few
hundred bytes each, not the archive's size.
"""

import logging
import pickle
import tempfile
from collections.abc import Iterator
from datetime import datetime
from itertools import chain
from typing import BinaryIO

from django.conf import settings
from django.utils import timezone

from .mail import MailMessage, parse_message
from .mbox import (
    GZIP_MAGIC,
    MboxChunk,
    MboxStream,
    chunk_problem,
    file_blocks,
    gunzip_blocks,
    gunzip_extent,
)

logger = logging.getLogger(__name__)
TRUNCATED_NOTE = "the file ends in the middle of this message (truncated?)"


def gzip_limit() -> int:
    """Decompressed bytes an import reads of a gzip file at most."""
    return settings.MAX_UPLOAD_MB * 4 << 20


class MessageSpool:
    """Values written once and read back by the offset `put` returned, in an unnamed temporary
    file (FILE_UPLOAD_TEMP_DIR, else the system's temporary directory: it must be on disk, not
    a memory file system, or the spool is memory again). Only this process reads what it wrote
    there, so the values are pickled."""

    def __init__(self):
        # closed by __exit__: the spool lives as long as its import
        self._file = tempfile.TemporaryFile(dir=settings.FILE_UPLOAD_TEMP_DIR)  # noqa: SIM115
        self._end = 0
        self._at_end = True  # the file position is at the end: a write needs no seek

    def __enter__(self) -> "MessageSpool":
        return self

    def __exit__(self, *exc) -> None:
        self._file.close()

    def put(self, value) -> int:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        if not self._at_end:
            self._file.seek(self._end)
            self._at_end = True
        offset = self._end
        self._file.write(len(data).to_bytes(8, "little"))
        self._file.write(data)
        self._end += 8 + len(data)
        return offset

    def get(self, offset: int):
        self._file.seek(offset)
        self._at_end = False
        size = int.from_bytes(self._file.read(8), "little")
        return pickle.loads(self._file.read(size))


class MessageRecord:
    """What threading and the report need of a message; its parts are in the spool at
    `offset`. `stamp` is its date, or when it was read if it has none (the post's date)."""

    __slots__ = ("message_id", "in_reply_to", "references", "subject", "date", "stamp",
                 "position", "_notes", "offset")

    def __init__(self, message: MailMessage, offset: int, same):
        self.message_id: str = same(message.message_id)
        self.in_reply_to: str = same(message.in_reply_to)
        self.references: tuple[str, ...] = tuple(same(mid) for mid in message.references)
        self.subject: str = same(message.subject)
        self.date: datetime | None = message.date
        self.stamp: datetime = message.date or timezone.now()
        self.position: int = message.position
        self._notes: list[str] | None = message.notes or None
        self.offset = offset

    @property
    def notes(self) -> list[str]:
        return list(self._notes or ())

    def add_note(self, note: str) -> None:
        self._notes = [*(self._notes or ()), note]


def _chunk_message(chunk: MboxChunk, report) -> MailMessage | None:
    """The chunk as a message, or None with the reason in the report."""
    reason = chunk_problem(chunk)
    if reason:
        report.problem(None, reason, chunk.position)
        return None
    try:
        return parse_message(chunk.raw, envelope=chunk.envelope, position=chunk.position)
    except Exception as exc:  # noqa: BLE001 - one unreadable message must not stop the rest
        logger.warning("mbox message %s unreadable", chunk.position, exc_info=True)
        report.problem(None, f"could not be read ({type(exc).__name__})", chunk.position)
        return None


def _decompressed_blocks(source: BinaryIO, report) -> Iterator[bytes]:
    """The mbox's bytes, a block at a time: a gzip file (found by its magic bytes) is read
    twice, once to learn how much of it can be read and why not the rest (reported first, as
    it always was), then to hand on that much."""
    start = source.tell()
    head = source.read(2)
    if head != GZIP_MAGIC:
        return chain([head], file_blocks(source))
    source.seek(start)
    length, problem = gunzip_extent(file_blocks(source), gzip_limit())
    if problem:
        report.problem(None, problem)
    source.seek(start)
    return gunzip_blocks(file_blocks(source), gzip_limit(), length)


def parsed_messages(source: BinaryIO, report) -> Iterator[MailMessage]:
    """Each message of the mbox (or .mbox.gz) `source`, parsed, in file order; what cannot be
    read goes to the report. One message is held back so the last one can be noted when the
    file ends in the middle of it."""
    stream = MboxStream(_decompressed_blocks(source, report), report.problems)
    held = None
    for chunk in stream.chunks():
        message = _chunk_message(chunk, report)
        for warning in chunk.warnings:  # reported, not kept with the post
            report.problem(message, warning, chunk.position)
        if message is not None:
            if held is not None:
                yield held
            held = message
    if held is not None:
        if not stream.ends_with_newline:
            held.notes.append(TRUNCATED_NOTE)
        yield held


def message_records(source: BinaryIO, report, spool: MessageSpool) -> list[MessageRecord]:
    """Every message's record, its parts in the spool. Ids and subjects repeat (a reply names
    its parent's id; a thread shares its subject): each distinct one is kept once."""
    distinct: dict[str, str] = {}

    def same(text: str) -> str:
        return distinct.setdefault(text, text)

    records = []
    for message in parsed_messages(source, report):
        offset = spool.put((message.raw, message.body, message.envelope, message.author,
                            message.author_email, message.attachments))
        records.append(MessageRecord(message, offset, same))
    return records


def full_message(record: MessageRecord, spool: MessageSpool) -> MailMessage:
    """The message as parsed (threading's changes included), read back from the spool; its
    date is the post's (`stamp`)."""
    raw, body, envelope, author, author_email, attachments = spool.get(record.offset)
    return MailMessage(
        message_id=record.message_id, in_reply_to=record.in_reply_to,
        references=list(record.references), author=author, author_email=author_email,
        date=record.stamp, subject=record.subject, body=body, raw=raw, envelope=envelope,
        position=record.position, attachments=attachments, notes=record.notes,
    )

"""An import reads its file a block at a time and keeps a compact record per message, the
rest of each message in a spool file it reads back when the post is written: the block size
changes nothing stored, the spool gives back the message as parsed, and messages come out of
the reader before the file has been read to its end."""

import gzip
import io

import pytest

from bench.discussions_speed import thread_mbox
from benchmarks.models import Artifact, Run
from discussions import mbox
from discussions.importer import ImportReport, _read_messages, mbox_import
from discussions.importread import MessageRecord, MessageSpool, full_message, message_records
from discussions.models import Thread

from .test_import_layout import _stored_posts, messy_archive

pytestmark = pytest.mark.django_db


class _CountedReads(io.BytesIO):
    """A real in-memory file that remembers the size of every read asked of it."""

    def __init__(self, data: bytes):
        super().__init__(data)
        self.sizes: list[int | None] = []

    def read(self, size: int | None = -1) -> bytes:
        self.sizes.append(size)
        return super().read(size)


@pytest.mark.parametrize("packed", [False, True])
def test_small_blocks_store_what_whole_bytes_store(poster, mbox_bytes, monkeypatch, packed):
    data = (messy_archive(8, 25).encode() + mbox_bytes("threadtest.mbox")
            + "".join(thread_mbox(thread, 10, 3) for thread in range(4)).encode())
    data = gzip.compress(data) if packed else data
    report = mbox_import(data=data, user=poster).as_dict()
    whole = _stored_posts()
    Thread.objects.all().delete()
    Run.objects.all().delete()
    Artifact.objects.all().delete()
    monkeypatch.setattr(mbox, "READ_BLOCK", 777)  # lines, \r\n pairs and members cut anywhere
    stream = _CountedReads(data)
    again = mbox_import(data=stream, user=poster).as_dict()
    assert len(stream.sizes) > len(data) // 777 and set(stream.sizes) == {2, 777}
    for result in (report, again):  # ids differ between the two imports
        for item in result["threads"] + result["repeated"]:
            item.pop("id", None), item.pop("url", None), item.pop("run", None)
    assert again == report and report["imported"] > 200 and report["runs_extracted"]
    assert _stored_posts() == whole


def test_the_spool_gives_back_each_message_as_parsed(mbox_bytes):
    data = b"".join(mbox_bytes(name) for name in ("threadtest.mbox", "broken.mbox"))
    data += messy_archive(9, 10).encode()
    parsed = _read_messages(data, ImportReport())
    with MessageSpool() as spool:
        records = message_records(io.BytesIO(data), ImportReport(), spool)
        assert len(records) == len(parsed) > 20
        for record, message in zip(records, parsed, strict=True):
            again = full_message(record, spool)
            assert again.date == (message.date or record.stamp)
            again.date = message.date
            again.generated_id = message.generated_id  # not kept: nothing reads it after parsing
            assert again == message
            assert record.message_id == message.message_id and record.notes == message.notes
    assert not {"raw", "body", "attachments"} & set(MessageRecord.__slots__)


def test_messages_come_out_before_the_file_is_read_to_its_end():
    archive = "".join(thread_mbox(thread, 20, 3) for thread in range(20)).encode()
    blocks = [archive[start:start + 4096] for start in range(0, len(archive), 4096)]
    read = []

    def counted():
        for block in blocks:
            read.append(block)
            yield block

    chunks = mbox.MboxStream(counted(), []).chunks()
    first = next(chunks)
    assert first.position == 1 and len(read) <= 2 < len(blocks)
    assert sum(1 for _ in chunks) == 399 and len(read) == len(blocks)

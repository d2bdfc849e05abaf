"""The streaming readers (mbox.MboxStream, gunzip_extent + gunzip_blocks) give exactly what the
plain ones over bytes in memory (split_mbox, gunzip) give: the same messages, envelopes,
positions, warnings with their line numbers, and problems, whatever the block size."""

import gzip
import random
from pathlib import Path

import pytest

from bench.discussions_speed import thread_mbox
from discussions.mbox import (
    MboxStream,
    gunzip,
    gunzip_blocks,
    gunzip_extent,
    split_mbox,
)

from .test_import_layout import messy_archive

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BLOCK_SIZES = (1, 2, 3, 7, 64, 4096, 1 << 20)


def _blocks(data: bytes, size: int) -> list[bytes]:
    return [data[start:start + size] for start in range(0, len(data), size)]


def _split(data: bytes) -> tuple:
    contents = split_mbox(data)
    return ([(c.envelope, c.raw, c.position, c.warnings) for c in contents.chunks],
            contents.problems, data.endswith(b"\n"))


def _streamed(data: bytes, size: int) -> tuple:
    problems: list[dict] = []
    stream = MboxStream(_blocks(data, size), problems)
    chunks = [(c.envelope, c.raw, c.position, c.warnings) for c in stream.chunks()]
    return chunks, problems, stream.ends_with_newline if chunks else data.endswith(b"\n")


def _mangled(data: bytes, rng: random.Random) -> bytes:
    """Cut, spliced, line endings changed, blank lines and From_ lines dropped or added."""
    lines = data.splitlines(keepends=True)
    for _ in range(rng.randint(1, 8)):
        if not lines:
            break
        at = rng.randrange(len(lines))
        kind = rng.randrange(7)
        if kind == 0:
            del lines[at]
        elif kind == 1:
            lines.insert(at, b"\n")
        elif kind == 2:
            lines.insert(at, b"From x@example.org Mon Feb 11 10:00:00 2008\n")
        elif kind == 3:
            lines[at] = lines[at].rstrip(b"\r\n") + rng.choice([b"\r\n", b"\r", b"", b"\n"])
        elif kind == 4:
            lines.insert(at, b"Subject: looks like a header\n")
        elif kind == 5:
            lines.insert(at, b"   \t\n")
        else:
            lines = lines[:at]
    out = b"".join(lines)
    if rng.random() < 0.2:
        out = out.replace(b"\n", b"\r\n")
    if rng.random() < 0.1:
        out = b"\n\n" + out
    return out


def _inputs() -> list[bytes]:
    found = [path.read_bytes() for path in sorted((FIXTURES / "mbox").glob("*"))]
    found += [path.read_bytes() for path in sorted((FIXTURES / "written" / "mbox").glob("*"))]
    found += [messy_archive(3, 8).encode(), thread_mbox(1, 12, 3).encode(), b"", b"\n \n",
              b"\x00binary", b"Subject: bare\n\nFrom me Mon Feb 11 10:00:00 2008\nx\n",
              b"Subject: bare\n\nbody\n\nFrom me Mon Feb 11 10:00:00 2008\nx\n",
              b"From x Mon Feb 11 10:00:00 2008\rFrom: a\r\rbody\r"]
    rng = random.Random(25)
    found += [_mangled(rng.choice(found[:6]), rng) for _ in range(150)]
    return found


@pytest.mark.parametrize("size", BLOCK_SIZES)
def test_the_stream_cuts_what_split_mbox_cuts(size):
    inputs = _inputs()
    if size < 64:
        inputs = inputs[:40]  # a block a byte: slow, and the first inputs cover the shapes
    for number, data in enumerate(inputs):
        assert _streamed(data, size) == _split(data), (number, data[:200])
    warned = [c for data in inputs for c in split_mbox(data).chunks if c.warnings]
    assert warned  # the mangling produced unseparated From_ lines, with their line numbers


def _gzip_cases() -> list[bytes]:
    text = (FIXTURES / "mbox" / "threadtest.mbox").read_bytes()
    packed = gzip.compress(text)
    two = gzip.compress(text[:2000]) + gzip.compress(text[2000:])
    rng = random.Random(7)
    cases = [packed, two, packed[:1], packed[:10], packed[:len(packed) // 2], packed + b"junk",
             packed + b"\x1f\x8b\x08", two[:len(two) - 30], packed + gzip.compress(b"")]
    for _ in range(60):
        damaged = bytearray(rng.choice([packed, two]))
        damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
        cases.append(bytes(damaged))
    return cases


@pytest.mark.parametrize("size", (1, 5, 100, 4096))
def test_the_gzip_stream_keeps_what_gunzip_keeps(size):
    text_size = len((FIXTURES / "mbox" / "threadtest.mbox").read_bytes())
    seen = set()
    for data in _gzip_cases():
        for limit in (text_size * 3, text_size, 2000, 1999, 1, 0):
            kept, problem = gunzip(data, limit)
            length, streamed_problem = gunzip_extent(_blocks(data, size), limit)
            assert (length, streamed_problem) == (len(kept), problem), (data[:20], limit)
            assert b"".join(gunzip_blocks(_blocks(data, size), limit, length)) == kept
            seen.add((problem or "").split(" (")[0][:30])
    assert len(seen) >= 4  # none, damaged, truncated, over

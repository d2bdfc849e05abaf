"""mbox files in and out: gzip, From_ line splitting, mboxrd escaping.

Reading never raises on bad input; it returns the messages it could cut out and a list of
problems (what could not be read and why), which the import report passes on.

Two readers give the same messages and problems: `gunzip` + `split_mbox` over bytes in memory
(the plain version, kept for tests and small inputs), and `gunzip_extent` / `gunzip_blocks` +
`MboxStream` over a file read a block at a time, which the import uses so that an archive's
size is not the size of the worker's memory. tests/discussions/test_mbox_stream.py compares
them over the fixtures, generated archives and mangled input, at several block sizes.
"""

import re
import zlib
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import format_datetime, formataddr
from itertools import chain
from typing import BinaryIO

FROM_LINE_RE = re.compile(rb"^From \S*.*\d{1,2}:\d{2}")
HEADER_LINE_RE = re.compile(rb"^[!-9;-~]+:")
ESCAPE_RE = re.compile(rb"^(>*From )", re.M)
GZIP_MAGIC = b"\x1f\x8b"
BODY_FROM_RE = re.compile(rb"^From ", re.M)


@dataclass
class MboxChunk:
    envelope: str
    raw: bytes
    position: int  # 1-based number of the message in the file
    warnings: list[str] = field(default_factory=list)  # for the import report, not stored


@dataclass
class MboxContents:
    chunks: list[MboxChunk] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)


def gunzip(data: bytes, limit: int) -> tuple[bytes, str | None]:
    """Decompress every gzip member; a truncated or oversized stream keeps what was read."""
    out, problem = bytearray(), None
    while data:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += inflater.decompress(data, max(1, limit - len(out) + 1))
        except zlib.error as exc:
            return bytes(out), f"the gzip data is damaged ({exc}); imported what could be read"
        if len(out) > limit:
            return bytes(out[:limit]), f"the decompressed mbox is over {limit >> 20} MB; " \
                "imported the first part"
        if not inflater.eof:
            return bytes(out), "the gzip file is truncated; imported what could be read"
        data = inflater.unused_data
    return bytes(out), problem


# Bytes read from a file (or handed to zlib) at a time: large enough that Python's per-call
# cost is nothing beside the work on them, small beside a worker's memory.
READ_BLOCK = 1 << 20


def file_blocks(stream: BinaryIO) -> Iterator[bytes]:
    """The stream's bytes from where it is, READ_BLOCK at a time (never the whole of it)."""
    while block := stream.read(READ_BLOCK):
        yield block


def _gzip_events(blocks: Iterator[bytes], limit: int) -> Iterator[tuple[str, bytes | str]]:
    """What `gunzip` meets, member by member, with the compressed data read a block at a
    time: ("data", bytes), ("end", b"") after each whole member, then at most one of
    ("damaged", reason), ("over", b""), ("truncated", b""). Each decompress call is capped,
    as gunzip's is, so that no more than `limit` + 1 bytes come out in all."""
    total = 0
    pending = b""
    while True:
        pending = pending or next(blocks, b"")
        if not pending:
            return
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while True:
            try:
                piece = inflater.decompress(pending, max(1, limit - total + 1))
            except zlib.error as exc:
                yield "damaged", str(exc)
                return
            total += len(piece)
            if piece:
                yield "data", piece
            if total > limit:
                reason = _error_before_output(inflater, inflater.unconsumed_tail, blocks)
                yield ("damaged", reason) if reason else ("over", b"")
                return
            if inflater.eof:
                pending = inflater.unused_data
                yield "end", b""
                break
            pending = inflater.unconsumed_tail or next(blocks, b"")
            if not pending:
                yield "truncated", b""
                return


def _error_before_output(inflater, tail: bytes, blocks: Iterator[bytes]) -> str | None:
    """zlib's error if the member fails before it would give another byte. gunzip's one
    capped call had all the input: past its last byte out, zlib went on through what needs
    no output (a block's end and the next one's header, the member's checksum) and could fail
    there. Fed a byte at a time until a byte comes out, the inflater here does the same."""
    for data in chain([tail], blocks):
        for at in range(len(data)):
            if inflater.eof:
                return None
            try:
                if inflater.decompress(data[at:at + 1], 1):
                    return None
            except zlib.error as exc:
                return str(exc)
    return None


def _gzip_problem(event: str, detail: bytes | str, limit: int) -> str | None:
    if event == "damaged":
        return f"the gzip data is damaged ({detail}); imported what could be read"
    if event == "over":
        return f"the decompressed mbox is over {limit >> 20} MB; imported the first part"
    if event == "truncated":
        return "the gzip file is truncated; imported what could be read"
    return None


def gunzip_extent(blocks: Iterable[bytes], limit: int) -> tuple[int, str | None]:
    """How many decompressed bytes `gunzip` keeps of this gzip stream, and its problem,
    found without keeping any of them (the import then decompresses again, keeping that
    many: gunzip drops the whole of a member it finds damaged, which is only known at its
    end)."""
    total = kept = 0
    for event, detail in _gzip_events(iter(blocks), limit):
        if event == "data":
            total += len(detail)
        elif event == "end":
            kept = total
        else:
            kept = limit if event == "over" else total if event == "truncated" else kept
            return kept, _gzip_problem(event, detail, limit)
    return kept, None


def gunzip_blocks(blocks: Iterable[bytes], limit: int, length: int) -> Iterator[bytes]:
    """The first `length` decompressed bytes of the stream (as `gunzip_extent` counted them),
    a piece at a time."""
    left = length
    for event, detail in _gzip_events(iter(blocks), limit):
        if left <= 0:
            return
        if event == "data":
            assert isinstance(detail, bytes)
            yield detail[:left]
            left -= len(detail)
    if left > 0:
        raise RuntimeError("the gzip stream gave less on the second reading than the first")


def _lines(blocks: Iterable[bytes]) -> Iterator[bytes]:
    """bytes.splitlines(keepends=True) of the blocks joined, without joining them: a line
    cut by a block's end (or a "\r" whose "\n" may open the next block) waits for the rest."""
    waiting: list[bytes] = []
    for block in blocks:
        if b"\n" not in block and b"\r" not in block:
            waiting.append(block)  # inside one long line: joined once it ends
            continue
        if waiting:
            waiting.append(block)
            block, waiting = b"".join(waiting), []
        lines = block.splitlines(keepends=True)
        if not lines[-1].endswith(b"\n"):
            waiting.append(lines.pop())
        yield from lines
    if waiting:
        yield b"".join(waiting)


def _is_from_line(line: bytes) -> bool:
    return line.startswith(b"From ") and FROM_LINE_RE.match(line) is not None


class MboxStream:
    """split_mbox over blocks of bytes: `chunks()` yields each message as soon as the line
    that starts the next one (or the end) is read, so only one message is held. Problems go
    to `problems` (the list given) as they are found; `ends_with_newline` tells, once the
    chunks are all read, whether the data's last byte was a newline."""

    def __init__(self, blocks: Iterable[bytes], problems: list[dict]):
        self._blocks = iter(blocks)
        self.problems = problems
        self.ends_with_newline = False

    def _tracked(self, blocks: Iterable[bytes]) -> Iterator[bytes]:
        for block in blocks:
            if block:
                self.ends_with_newline = block.endswith(b"\n")
                yield block

    def _problem(self, reason: str) -> None:
        self.problems.append({"message": None, "reason": reason})

    def chunks(self) -> Iterator[MboxChunk]:
        head = []
        size = 0
        for block in self._blocks:  # split_mbox looks for NUL bytes in the first 4 KB
            head.append(block)
            size += len(block)
            if size >= 4096:
                break
        if b"\x00" in b"".join(head)[:4096]:
            self._problem("not an mbox: binary data")
            return
        lines = enumerate(_lines(self._tracked(chain(head, self._blocks))))
        for _, line in lines:
            if not line.isspace():
                break
        else:
            self._problem("the file is empty")
            return
        if _is_from_line(line):
            yield from self._messages(line, lines)
        elif HEADER_LINE_RE.match(line):
            yield from self._bare_message(line, lines)
        else:
            self._problem("not an mbox: the first line is not a 'From ' envelope line")

    def _bare_message(self, first: bytes, lines) -> Iterator[MboxChunk]:
        """One message without a From_ line, unless a From_ line after a blank line shows
        that the file is something else."""
        parts, previous = [first], first
        for _, line in lines:
            if _is_from_line(line) and previous.isspace():
                self._problem("not an mbox: the first line is not a 'From ' envelope line")
                return
            parts.append(line)
            previous = line
        yield MboxChunk("", b"".join(parts), 1)

    def _messages(self, envelope: bytes, lines) -> Iterator[MboxChunk]:
        number, parts, warnings = 1, [], []
        previous, unseparated = envelope, None
        for index, line in lines:
            if unseparated is not None:  # a From_ line inside a message, then a header?
                if HEADER_LINE_RE.match(line):
                    warnings.append(_unseparated_warning(unseparated))
                unseparated = None
            if _is_from_line(line):
                if previous.isspace():
                    yield _chunk(envelope, parts, number, warnings)
                    number, parts, warnings = number + 1, [], []
                    envelope = previous = line
                    continue
                unseparated = index
            parts.append(line)
            previous = line
        yield _chunk(envelope, parts, number, warnings)


def _chunk(envelope: bytes, parts: list[bytes], number: int, warnings: list[str]) -> MboxChunk:
    raw = b"".join(parts)
    if raw.endswith(b"\n\n"):
        raw = raw[:-1]  # the blank line that separates messages is the mbox's, not ours
    elif raw.endswith(b"\r\n\r\n"):
        raw = raw[:-2]
    return MboxChunk(envelope.rstrip(b"\r\n").decode("latin-1"), raw, number, warnings)


def _envelope_lines(lines: list[bytes], first: int) -> tuple[list[int], list[int]]:
    """Indexes of the From_ lines that start messages (at the start or after a blank line,
    as mboxo and mboxrd write them), and of those that look like a message's start without
    the blank line before them: an envelope followed by a header line. Both formats escape a
    body line starting "From " (">From "), so such a line is a missing separator or a writer
    that did not escape; which one cannot be told, so it stays in the message and is reported.
    """
    starts, unseparated = [], []
    for index in range(first, len(lines)):
        if not FROM_LINE_RE.match(lines[index]):
            continue
        if index == first or not lines[index - 1].strip():
            starts.append(index)
        elif index + 1 < len(lines) and HEADER_LINE_RE.match(lines[index + 1]):
            unseparated.append(index)
    return starts, unseparated


def _unseparated_warning(index: int) -> str:
    return (f"line {index + 1}: a 'From ' envelope line followed by headers, without the blank "
            "line that starts a new message: kept as part of this message (a missing blank "
            "line between two messages, or a writer that did not escape 'From ')")


def split_mbox(data: bytes) -> MboxContents:
    contents = MboxContents()
    if b"\x00" in data[:4096]:
        contents.problems.append({"message": None, "reason": "not an mbox: binary data"})
        return contents
    lines = data.splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        contents.problems.append({"message": None, "reason": "the file is empty"})
        return contents
    starts, unseparated = _envelope_lines(lines, first)
    if not starts or starts[0] != first:
        if starts or not HEADER_LINE_RE.match(lines[first]):
            contents.problems.append({
                "message": None,
                "reason": "not an mbox: the first line is not a 'From ' envelope line",
            })
            return contents
        # One bare message (an .eml saved from a mail client): accept it as a one-message mbox.
        contents.chunks.append(MboxChunk("", b"".join(lines[first:]), 1))
        return contents
    for number, start in enumerate(starts, 1):
        end = starts[number] if number < len(starts) else len(lines)
        envelope = lines[start].rstrip(b"\r\n").decode("latin-1")
        raw = b"".join(lines[start + 1:end])
        if raw.endswith(b"\n\n"):
            raw = raw[:-1]  # the blank line that separates messages is the mbox's, not ours
        elif raw.endswith(b"\r\n\r\n"):
            raw = raw[:-2]
        contents.chunks.append(MboxChunk(envelope, raw, number))
    for index in unseparated:
        contents.chunks[bisect_right(starts, index) - 1].warnings.append(
            _unseparated_warning(index))
    return contents


def chunk_problem(chunk: MboxChunk) -> str | None:
    """Why a cut-out message cannot be a post (no header block at all), or None."""
    head = chunk.raw.lstrip(b"\r\n")[:1000]
    if not head or not HEADER_LINE_RE.match(head):
        return "no mail headers (truncated or not a mail message)"
    return None


# --------------------------------------------------------------------------- export

def _envelope_for(post) -> bytes:
    if post.envelope:
        return post.envelope.encode("latin-1", errors="replace")
    sender = (post.author_email or "schedbench").replace(" ", "")
    return f"From {sender} {post.date.strftime('%a %b %d %H:%M:%S %Y')}".encode()


def post_as_message(post) -> bytes:
    """A post written on the site as an RFC 5322 message (UTF-8 body, quoted-printable)."""
    message = EmailMessage()
    message["From"] = formataddr((post.author, post.author_email or "nobody@schedbench.invalid"))
    message["Subject"] = post.subject
    message["Date"] = format_datetime(post.date)
    message["Message-ID"] = f"<{post.message_id}>"
    if post.in_reply_to:
        message["In-Reply-To"] = f"<{post.in_reply_to}>"
    if post.references:
        message["References"] = " ".join(f"<{mid}>" for mid in post.reference_ids)
    message.set_content(post.body or "", charset="utf-8", cte="quoted-printable")
    head, _, body = message.as_bytes(policy=message.policy.clone(linesep="\n")).partition(b"\n\n")
    # "=46" is quoted-printable for "F": no From_ escaping needed, every reader gets the text back.
    return head + b"\n\n" + BODY_FROM_RE.sub(b"=46rom ", body)


def export_mbox(posts) -> bytes:
    """Posts as an mboxrd file; imported posts are written back byte for byte."""
    out = bytearray()
    for post in posts:
        raw = bytes(post.raw) if post.raw else ESCAPE_RE.sub(rb">\1", post_as_message(post))
        out += _envelope_for(post) + b"\n" + raw
        if not raw.endswith(b"\n"):
            out += b"\n"
        out += b"\n"
    return bytes(out)

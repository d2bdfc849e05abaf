"""mbox files in and out: gzip, From_ line splitting, mboxrd escaping.

Reading never raises on bad input; it returns the messages it could cut out and a list of
problems (what could not be read and why), which the import report passes on.
"""

import re
import zlib
from bisect import bisect_right
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import format_datetime, formataddr

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

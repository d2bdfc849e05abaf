"""One mail message from raw bytes to what a post needs: headers decoded, MIME walked, text kept.

Nothing here raises on bad input: what cannot be decoded is replaced and described in `notes`,
so an import keeps what it can read and reports the rest.
"""

import codecs
import email
import hashlib
import html
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.header import decode_header
from email.message import Message
from email.utils import getaddresses, parsedate_to_datetime
from functools import lru_cache

MESSAGE_ID_RE = re.compile(r"<([^<>\s]+)>")
MAX_ID = 255
CODE_TYPES = {"application/x-patch", "application/x-diff", "application/x-sh", "text/x-diff"}
# mutt and the list archives render MIME parts inline like this.
INLINE_MARKER_RE = re.compile(r"^\[-- Attachment #(\d+)(?::\s*(.*?))?\s*--\]\s*$")
INLINE_META_RE = re.compile(r"^\[-- (Type|Encoding|Size|Name|Content-[\w-]+)[:\s].*--\]\s*$", re.I)
INLINE_TYPE_RE = re.compile(r"Type:\s*([\w.+-]+/[\w.+-]+)", re.I)
FROM_ESCAPE_RE = re.compile(rb"^>(>*From )", re.M)
CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
TAG_RE = re.compile(r"<[^>]*>")


@dataclass
class MailAttachment:
    filename: str
    content_type: str
    text: str = ""
    content: bytes = b""

    @property
    def size(self) -> int:
        return len(self.content) if self.content else len(self.text.encode("utf-8"))


@dataclass
class MailMessage:
    message_id: str
    in_reply_to: str
    references: list[str]
    author: str
    author_email: str
    date: datetime | None
    subject: str
    body: str
    raw: bytes
    envelope: str = ""
    position: int = 0
    attachments: list[MailAttachment] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    generated_id: bool = False


def clean_header_text(text: str, limit: int = 300) -> str:
    """One line of text: folded whitespace and control characters are no part of a header."""
    return " ".join(CONTROL_RE.sub(" ", text).split())[:limit]


def decode_bytes(data: bytes, charset: str | None, notes: list[str], what: str) -> str:
    """Text in its declared charset; unknown or lying charsets are replaced and noted."""
    charset = (charset or "").strip().strip('"').lower()
    if not charset or charset in ("us-ascii", "ascii"):
        try:
            return data.decode("utf-8")  # undeclared 8-bit text is UTF-8 more often than not
        except UnicodeDecodeError:
            return data.decode("latin-1")
    try:
        codecs.lookup(charset)
    except LookupError:
        notes.append(f"{what}: unknown charset {charset[:40]!r}; decoded as UTF-8, "
                     "undecodable bytes replaced")
        return data.decode("utf-8", errors="replace")
    try:
        return data.decode(charset)
    except (UnicodeDecodeError, UnicodeError):
        notes.append(f"{what}: bytes not valid in {charset[:40]}; undecodable bytes replaced")
        return data.decode(charset, errors="replace")


def decode_header_value(value, notes: list[str], what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):  # compat32 hands back Header objects for 8-bit headers
        value = str(value)
    try:
        pieces = decode_header(value)
    except Exception:  # noqa: BLE001 - a malformed encoded-word is shown as written
        notes.append(f"{what}: malformed encoded words shown as written")
        return clean_header_text(value)
    text = "".join(
        decode_bytes(part, charset, notes, what) if isinstance(part, bytes) else part
        for part, charset in pieces
    )
    return clean_header_text(text)


def _message_ids(value: str) -> list[str]:
    return [mid[:MAX_ID] for mid in MESSAGE_ID_RE.findall(value or "")]


def _date(value: str, notes: list[str]) -> datetime | None:
    try:
        parsed = parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError, IndexError, OverflowError):
        parsed = None
    if parsed is None:
        notes.append("no usable Date header")
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _author_read(value: str) -> tuple[str, str]:
    addresses = getaddresses([value]) if value else []
    name, address = addresses[0] if addresses else ("", "")
    name, address = clean_header_text(name, 200), clean_header_text(address, 254)
    return (name or address or "unknown sender"), address


# A list's messages come from a few hundred people, and getaddresses (strict since the 2023
# address-parsing fixes) is a good part of reading a message: each distinct From is read once.
_author = lru_cache(maxsize=4096)(_author_read)


def parse_message(raw: bytes, *, envelope: str = "", position: int = 0) -> MailMessage:
    """A message as stored in an mbox (From_ line removed, mboxrd escaping still in place)."""
    notes: list[str] = []
    message = email.message_from_bytes(FROM_ESCAPE_RE.sub(rb"\1", raw), policy=policy.compat32)
    header = lambda name: decode_header_value(message.get(name), notes, name)  # noqa: E731
    message_id = next(iter(_message_ids(str(message.get("Message-ID", "")))), "")
    generated = not message_id
    if generated:
        message_id = f"generated-{hashlib.sha256(raw).hexdigest()[:32]}@schedbench.invalid"
        notes.append("no Message-ID header; one was derived from the message's bytes")
    author, author_email = _author(header("From"))
    body, attachments = _body_and_attachments(message, notes)
    references = _message_ids(str(message.get("References", "")))
    in_reply_to = next(iter(_message_ids(str(message.get("In-Reply-To", "")))), "")
    return MailMessage(
        message_id=message_id, in_reply_to=in_reply_to,
        references=[mid for mid in references if mid != message_id],
        author=author, author_email=author_email,
        date=_date(str(message.get("Date", "")), notes), subject=header("Subject"),
        body=body, raw=raw, envelope=clean_header_text(envelope), position=position,
        attachments=attachments, notes=notes, generated_id=generated,
    )


def _payload(part: Message, notes: list[str], what: str) -> bytes:
    try:
        payload = part.get_payload(decode=True)
    except Exception:  # noqa: BLE001 - a broken transfer encoding: keep the text as sent
        notes.append(f"{what}: transfer encoding could not be decoded; kept as sent")
        payload = str(part.get_payload()).encode("utf-8", errors="replace")
    return payload or b""


def _defect_notes(part: Message, notes: list[str]) -> None:
    for defect in getattr(part, "defects", []):
        name = type(defect).__name__
        if name in ("CloseBoundaryNotFoundDefect", "StartBoundaryNotFoundDefect"):
            notes.append("multipart message is truncated (a MIME boundary is missing)")
        elif name in ("InvalidBase64PaddingDefect", "InvalidBase64CharactersDefect",
                      "InvalidBase64LengthDefect"):
            notes.append("damaged base64 part: decoded what could be read")


def _is_textual(content_type: str) -> bool:
    return content_type.startswith("text/") or content_type in CODE_TYPES


def _html_to_text(markup: str) -> str:
    return html.unescape(TAG_RE.sub("", re.sub(r"(?i)<br\s*/?>|</p>", "\n", markup)))


def _body_and_attachments(message: Message, notes: list[str]) -> tuple[str, list[MailAttachment]]:
    body: str | None = None
    html_body: str | None = None
    attachments: list[MailAttachment] = []
    for number, part in enumerate(message.walk(), 1):
        _defect_notes(part, notes)
        if part.is_multipart():
            continue
        content_type = part.get_content_type()
        filename = decode_header_value(part.get_filename(), notes, f"part {number} filename")
        disposition = part.get_content_disposition()
        data = _payload(part, notes, f"part {number}")
        what = f"part {number} ({content_type})"
        if content_type == "text/plain" and body is None and not filename \
                and disposition != "attachment":
            body = decode_bytes(data, part.get_content_charset(), notes, what)
        elif content_type == "text/html" and not filename and html_body is None:
            html_body = _html_to_text(decode_bytes(data, part.get_content_charset(), notes, what))
        elif _is_textual(content_type):
            text = decode_bytes(data, part.get_content_charset(), notes, what)
            attachments.append(MailAttachment(filename, content_type, text=text))
        else:
            attachments.append(MailAttachment(filename, content_type, content=data))
    text = body if body is not None else (html_body or "")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text, inline = split_inline_attachments(text)
    return text, inline + attachments


def split_inline_attachments(text: str) -> tuple[str, list[MailAttachment]]:
    """Body text and the `[-- Attachment #2: x.c --]` sections archives render inline."""
    lines = text.split("\n")
    markers = [i for i, line in enumerate(lines) if INLINE_MARKER_RE.match(line)]
    if not markers:
        return text, []
    body_lines = lines[:markers[0]]
    attachments = []
    for index, start in enumerate(markers):
        end = markers[index + 1] if index + 1 < len(markers) else len(lines)
        match = INLINE_MARKER_RE.match(lines[start])
        name = (match.group(2) or "").strip()
        content_type = "text/plain"
        section = lines[start + 1:end]
        while section and INLINE_META_RE.match(section[0]):
            found = INLINE_TYPE_RE.search(section[0])
            content_type = found.group(1).lower() if found else content_type
            section = section[1:]
        found = INLINE_TYPE_RE.search(name)
        if found:  # "[-- Attachment #3: Type: application/pgp-signature --]": no file name
            content_type, name = found.group(1).lower(), ""
        content = "\n".join(section).strip("\n")
        if match.group(1) == "1" and not name:
            body_lines.extend(section)  # mutt labels the body itself as attachment #1
            continue
        attachments.append(MailAttachment(clean_header_text(name, 255), content_type,
                                          text=content))
    return "\n".join(body_lines).rstrip("\n"), attachments

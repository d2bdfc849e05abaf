"""Reading an upload request: the file (maybe compressed) or pasted text, and its metadata."""

import bz2
import contextlib
import gzip
import json
import lzma
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings

from benchmarks.errors import InputError, TooLarge
from benchmarks.services.ingest import UploadMetadata
from benchmarks.services.jsonvalues import json_value_check, text_problem

CHUNK = 1024 * 1024
_DECOMPRESSORS = {
    b"\x1f\x8b": lambda stream: gzip.GzipFile(fileobj=stream),
    b"BZh": bz2.BZ2File,
    b"\xfd7zXZ\x00": lzma.LZMAFile,
}
JSON_FIELDS = ("params", "tunables", "series", "environment", "kernel_map", "assign")


class UploadTooLarge(TooLarge):
    """413: the file, the pasted text or what a compressed file expands to is too big."""


class UploadInvalid(InputError):
    """400: the upload request itself (not its content) is malformed."""


@dataclass
class UploadRequest:
    stream: object
    filename: str
    metadata: UploadMetadata
    format: str | None
    dry_run: bool
    idempotency_key: str | None


def max_bytes() -> int:
    return settings.MAX_UPLOAD_MB * 1024 * 1024


def _temporary_file():
    # Returned open on purpose: the caller parses it, then closes it with close_quietly().
    return tempfile.SpooledTemporaryFile(max_size=8 * CHUNK)  # noqa: SIM115


def _spool(source, limit: int, what: str):
    """Copy `source` into a temporary file, refusing more than `limit` bytes."""
    spooled = _temporary_file()
    total = 0
    while chunk := source.read(CHUNK):
        total += len(chunk)
        if total > limit:
            raise UploadTooLarge(f"{what} is larger than {settings.MAX_UPLOAD_MB} MB")
        spooled.write(chunk)
    spooled.seek(0)
    return spooled


def open_upload(uploaded) -> object:
    """A binary stream of the upload's text, decompressing gzip, bzip2 or xz on the fly."""
    if uploaded.size is not None and uploaded.size > max_bytes():
        raise UploadTooLarge(f"the file is larger than {settings.MAX_UPLOAD_MB} MB")
    stream = uploaded.open("rb")
    magic = stream.read(6)
    stream.seek(0)
    for signature, opener in _DECOMPRESSORS.items():
        if magic.startswith(signature):
            try:
                # A small archive can expand without bound: count what comes out, not what went in.
                return _spool(opener(stream), max_bytes(), "the decompressed file")
            except (OSError, EOFError, lzma.LZMAError) as exc:
                raise UploadInvalid(f"the compressed file is damaged: {exc}") from None
    return stream


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number in strict JSON")


def strict_json_loads(text: str, *, field: str):
    """json.loads without NaN/Infinity (Python's json accepts them; strict JSON does not)."""
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise UploadInvalid(f"{field} is not valid JSON: {exc.msg} at column {exc.colno}",
                            field=field) from None
    except (ValueError, RecursionError) as exc:
        raise UploadInvalid(f"{field} is not valid JSON: {exc}", field=field) from None


def _json_field(data, name):
    value = data.get(name)
    if value in (None, ""):
        return {}
    if isinstance(value, str):
        value = strict_json_loads(value, field=name)
    if not isinstance(value, dict):
        raise UploadInvalid(f"{name} must be a JSON object", field=name)
    json_value_check(value, field=name)
    return value


def _machine_field(data):
    value = data.get("machine")
    if isinstance(value, str) and value.strip().startswith("{"):
        value = strict_json_loads(value, field="machine")
    if value not in (None, "") and not isinstance(value, (str, dict)):
        raise UploadInvalid("machine must be a name or a JSON object", field="machine")
    if isinstance(value, dict):
        json_value_check(value, field="machine")
    return value or None


def _text_field(data, name, limit=200):
    value = data.get(name)
    if value in (None, ""):
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise UploadInvalid(f"{name} must be a string of at most {limit} characters", field=name)
    problem = text_problem(value)
    if problem:
        raise UploadInvalid(f"{name} {problem}", field=name)
    return value.strip()


def _flag(data, name) -> bool:
    value = data.get(name)
    if isinstance(value, bool):
        return value
    return str(value or "").strip().lower() in ("1", "true", "yes", "on")


def read_upload(data, files) -> UploadRequest:
    """Parse an upload request (multipart form or JSON body); raises UploadInvalid/TooLarge."""
    if not isinstance(data, Mapping):
        raise UploadInvalid("the JSON body must be an object such as {\"text\": \"...\"}")
    uploaded = files.get("file") if files else None
    if uploaded is not None:
        stream, filename = open_upload(uploaded), uploaded.name
    else:
        text = data.get("text")
        if not isinstance(text, str) or not text.strip():
            raise UploadInvalid("send a file in the 'file' field or text in the 'text' field",
                                field="file")
        encoded = text.encode("utf-8", "surrogatepass")
        if len(encoded) > max_bytes():
            raise UploadTooLarge(f"the text is larger than {settings.MAX_UPLOAD_MB} MB")
        stream, filename = _temporary_file(), "pasted.txt"
        stream.write(encoded)
        stream.seek(0)
    json_fields = {name: _json_field(data, name) for name in JSON_FIELDS}
    metadata = UploadMetadata(
        benchmark=_text_field(data, "benchmark"),
        kernel=_text_field(data, "kernel"),
        machine=_machine_field(data),
        policy=_text_field(data, "policy", 100),
        label=_text_field(data, "label") or "",
        **json_fields,
    )
    return UploadRequest(
        stream=stream,
        filename=(_text_field(data, "filename", 255) or filename or "upload.txt"),
        metadata=metadata,
        format=_text_field(data, "format", 64),
        dry_run=_flag(data, "dry_run"),
        idempotency_key=_text_field(data, "idempotency_key", 100),
    )


def close_quietly(stream) -> None:
    # Closing a temporary file must never mask the real answer.
    with contextlib.suppress(Exception):
        stream.close()


"""Reading an upload request: the file (maybe compressed) or pasted text, and its metadata.

An upload comes as JSON (the harness), multipart (curl -F, the upload page) or a url-encoded
form; each media type has its own request serializer, so the schema, and a client generated
from it, says how each is written (objects as objects in JSON, as JSON text in a form)."""

import bz2
import contextlib
import gzip
import lzma
import tempfile
from dataclasses import dataclass

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from benchmarks.api.jsonbody import strict_loads
from benchmarks.api.requests import (
    MACHINE_SPEC_SCHEMA,
    Integer,
    NamedErrors,
    RequestSerializer,
    Text,
)
from benchmarks.errors import InputError, TooLarge
from benchmarks.services.ingest import UploadMetadata
from benchmarks.services.jsonvalues import json_value_check
from benchmarks.services.measured import measured_at_parse

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


class UploadText(Text):
    """A metadata string of an upload: blank is absent; kept without surrounding spaces."""

    def __init__(self, **kwargs):
        super().__init__(required=False, **kwargs)

    def to_internal_value(self, data):
        return super().to_internal_value(data).strip() or None


class LenientFlag(NamedErrors, serializers.BooleanField):
    """true/false, or in a form 1, true, yes or on (anything else is false)."""

    def __init__(self, **kwargs):
        super().__init__(allow_null=True, **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool):
            return data
        return str(data or "").strip().lower() in ("1", "true", "yes", "on")


class FormInteger(Integer):
    """An integer, or in a form its digits."""

    def to_internal_value(self, data):
        if isinstance(data, str) and data.strip().isascii() and data.strip().isdigit():
            data = int(data.strip())
        return super().to_internal_value(data)


@extend_schema_field({"type": "object", "additionalProperties": True})
class ObjectOrJSONText(NamedErrors, serializers.JSONField):
    """A JSON object, or text holding one (a form's field); empty is {}."""

    default_error_messages = {"not_an_object": "{name} must be a JSON object"}

    def __init__(self, **kwargs):
        super().__init__(required=False, allow_null=True, **kwargs)

    def to_internal_value(self, data):
        name = self.field_name
        if data == "":
            return {}
        if isinstance(data, str):
            data = strict_loads(data, what=name, field=name)
        if not isinstance(data, dict):
            self.fail("not_an_object")
        json_value_check(data, field=name)
        return data


@extend_schema_field({"type": "string", "description": "a JSON object"})
class FormJSONObject(ObjectOrJSONText):
    pass


class UploadMachine(NamedErrors, serializers.JSONField):
    """A machine name, or a JSON object describing it (in a form: its JSON text)."""

    default_error_messages = {"invalid_kind": "machine must be a name or a JSON object"}

    def __init__(self, **kwargs):
        super().__init__(required=False, allow_null=True, **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, str) and data.strip().startswith("{"):
            data = strict_loads(data, what="machine", field="machine")
        if isinstance(data, str):
            return str(data) or None
        if not isinstance(data, dict):
            self.fail("invalid_kind")
        json_value_check(data, field="machine")
        return data


@extend_schema_field(MACHINE_SPEC_SCHEMA)
class JSONUploadMachine(UploadMachine):
    pass


@extend_schema_field({"type": "string", "description": "a machine name, or a JSON object"})
class FormUploadMachine(UploadMachine):
    pass


class UploadFieldsSerializer(RequestSerializer):
    """What every upload may say besides its content; the media types differ in how objects
    are written (JSON objects, or JSON text in a form field)."""

    text = Text(required=False, help_text="pasted output, instead of a file")
    benchmark = UploadText(max_length=200)
    kernel = UploadText(max_length=200)
    policy = UploadText(max_length=100)
    label = UploadText(max_length=200)
    format = UploadText(max_length=64, help_text="force a parser")
    filename = UploadText(max_length=255)
    dry_run = LenientFlag(required=False, help_text="parse and answer, store nothing")
    idempotency_key = UploadText(max_length=100)
    bisect = FormInteger(required=False, min_value=1, help_text="a bisection id: the runs "
                         "join the step of their commit")
    commit = UploadText(max_length=100, help_text="the commit under test, when the kernel "
                        "string carries none")
    measured = UploadText(max_length=40, help_text="when the runs were measured, ISO 8601 "
                          "(2024-05-03T10:00:00Z; no zone means UTC)")

    def validate_measured(self, value):
        measured_at_parse(value, field="measured")  # refused here, before anything is read
        return value

    def validate(self, attrs):
        if attrs.get("file") is None and not (attrs.get("text") or "").strip():
            raise UploadInvalid("send a file in the 'file' field or text in the 'text' field",
                                field="file")
        return attrs


ASSIGN_HELP = ('a run\'s source_key -> {"kernel", "label", "params"}; assigns an UNASSIGNED '
               'block or corrects every run of one heading')


class UploadJSONSerializer(UploadFieldsSerializer):
    """An upload as a JSON body (what the harness sends): `text` and objects as objects."""

    machine = JSONUploadMachine()
    params = ObjectOrJSONText()
    tunables = ObjectOrJSONText()
    environment = ObjectOrJSONText()
    series = ObjectOrJSONText()
    kernel_map = ObjectOrJSONText(help_text="found -> stored")
    assign = ObjectOrJSONText(help_text=ASSIGN_HELP)


class UploadFormSerializer(UploadFieldsSerializer):
    """An upload as a url-encoded form: `text`, and objects as JSON text."""

    tolerated = frozenset({"csrfmiddlewaretoken"})  # a page's form sends it with the fields
    machine = FormUploadMachine()
    params = FormJSONObject()
    tunables = FormJSONObject()
    environment = FormJSONObject()
    series = FormJSONObject()
    kernel_map = FormJSONObject(help_text="JSON: found -> stored")
    assign = FormJSONObject(help_text=f"JSON: {ASSIGN_HELP}")


class UploadMultipartSerializer(UploadFormSerializer):
    """An upload as multipart/form-data (curl -F, the upload page): a `file` or `text`."""

    file = serializers.FileField(required=False, allow_empty_file=True,
                                 help_text="raw output; gzip, bzip2, xz allowed")


def upload_serializer(request) -> type[UploadFieldsSerializer]:
    media_type = request.content_type.split(";")[0].strip().lower()
    if media_type == "application/json":
        return UploadJSONSerializer
    if media_type == "application/x-www-form-urlencoded":
        return UploadFormSerializer
    return UploadMultipartSerializer


def read_upload(clean: dict) -> UploadRequest:
    """The upload a validated body describes: its content as a stream, and its metadata."""
    uploaded = clean.get("file")
    if uploaded is not None:
        stream, filename = open_upload(uploaded), uploaded.name
    else:
        encoded = clean["text"].encode("utf-8", "surrogatepass")
        if len(encoded) > max_bytes():
            raise UploadTooLarge(f"the text is larger than {settings.MAX_UPLOAD_MB} MB")
        stream, filename = _temporary_file(), "pasted.txt"
        stream.write(encoded)
        stream.seek(0)
    metadata = UploadMetadata(
        benchmark=clean.get("benchmark"),
        kernel=clean.get("kernel"),
        machine=clean.get("machine"),
        policy=clean.get("policy"),
        label=clean.get("label") or "",
        measured=clean.get("measured"),
        **{name: clean.get(name) or {} for name in JSON_FIELDS},
    )
    return UploadRequest(
        stream=stream,
        filename=clean.get("filename") or filename or "upload.txt",
        metadata=metadata,
        format=clean.get("format"),
        dry_run=bool(clean.get("dry_run")),
        idempotency_key=clean.get("idempotency_key"),
    )


def close_quietly(stream) -> None:
    # Closing a temporary file must never mask the real answer.
    with contextlib.suppress(Exception):
        stream.close()


"""Raw input is stored first, verbatim, under its SHA-256."""

import hashlib
from typing import BinaryIO

from django.core.files import File
from django.core.files.base import ContentFile

from benchmarks.models import Artifact

CHUNK = 1024 * 1024


def sha256_of_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256_and_size(stream: BinaryIO) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    stream.seek(0)
    while chunk := stream.read(CHUNK):
        digest.update(chunk)
        size += len(chunk)
    stream.seek(0)
    return digest.hexdigest(), size


def artifact_store(
    *, stream: BinaryIO | bytes, filename: str, uploader=None, content_type: str = ""
) -> Artifact:
    """Keep the bytes exactly as received; the storage name is derived from the hash."""
    if isinstance(stream, bytes):
        stream = ContentFile(stream)
    sha256, size = _sha256_and_size(stream)
    artifact = Artifact(
        filename=(filename or "pasted.txt")[:255],
        sha256=sha256,
        size=size,
        content_type=(content_type or "")[:100],
        uploader=uploader,
    )
    existing = Artifact.objects.filter(sha256=sha256).exclude(file="").first()
    if existing:
        # Same bytes already kept: share the stored file instead of writing it again.
        artifact.file.name = existing.file.name
    else:
        artifact.file.save(f"{sha256[:2]}/{sha256}", File(stream), save=False)
    artifact.save()
    return artifact


def artifact_file_discard_if_orphaned(name: str) -> None:
    """After a rolled-back upload, remove its stored file unless another artifact uses it."""
    if name and not Artifact.objects.filter(file=name).exists():
        Artifact.file.field.storage.delete(name)

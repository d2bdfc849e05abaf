"""Get-or-create for the things a run refers to, so a harness needs no set-up step."""

import hashlib
import json

from django.db import IntegrityError, transaction
from django.utils.text import slugify

from benchmarks import versions
from benchmarks.errors import InputError
from benchmarks.models import Benchmark, Kernel, Machine, Metric

MACHINE_FIELDS = (
    "name",
    "cpu_model",
    "arch",
    "sockets",
    "cores_per_socket",
    "threads_per_core",
    "caches",
    "memory_mb",
    "virtualization",
)


# Where a submission names no machine: one shared placeholder, not one per upload.
UNKNOWN_MACHINE = "unknown machine"


class CatalogError(InputError):
    """Bad names or machine descriptions; the message says which field."""


def _get_or_create(model, lookup: dict, defaults: dict):
    # A savepoint makes a concurrent insert of the same row a lookup, not a failed transaction.
    try:
        with transaction.atomic():
            return model.objects.get_or_create(**lookup, defaults=defaults)[0]
    except IntegrityError:
        return model.objects.get(**lookup)


def benchmark_get_or_create(*, name: str) -> Benchmark:
    name = (name or "").strip()
    slug = slugify(name)[:100]
    if not slug:
        raise CatalogError(f"benchmark name {name!r} has no letters or digits")
    return _get_or_create(Benchmark, {"slug": slug}, {"name": name[:200]})


def metric_get_or_create(
    *, benchmark: Benchmark, name: str, unit: str = "", higher_is_better: bool = False
) -> Metric:
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise CatalogError(f"metric name {name!r} must be 1-100 characters")
    return _get_or_create(
        Metric,
        {"benchmark": benchmark, "name": name},
        {"unit": (unit or "")[:32], "higher_is_better": bool(higher_is_better)},
    )


def kernel_get_or_create(*, version: str) -> Kernel:
    version = (version or "").strip()
    if not version or len(version) > 200:
        raise CatalogError("kernel version must be 1-200 characters")
    if any(ord(ch) < 32 for ch in version):
        raise CatalogError(f"kernel version {version!r} contains control characters")
    family = versions.scheduler_family(version)
    return _get_or_create(Kernel, {"version": version}, {"family": family})


def _clean_machine_spec(spec: dict) -> dict:
    unknown = set(spec) - set(MACHINE_FIELDS)
    if unknown:
        raise CatalogError(f"machine: unknown field(s) {sorted(unknown)}; known: {MACHINE_FIELDS}")
    clean = {}
    for field in ("name", "cpu_model", "arch", "virtualization"):
        value = spec.get(field) or ""
        if not isinstance(value, str):
            raise CatalogError(f"machine.{field} must be a string")
        clean[field] = value.strip()[:200]
    for field in ("sockets", "cores_per_socket", "threads_per_core", "memory_mb"):
        value = spec.get(field)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise CatalogError(f"machine.{field} must be an integer")
        if value is not None and not 0 < value < 2**31:
            raise CatalogError(f"machine.{field}={value} is out of range")
        clean[field] = value
    caches = spec.get("caches") or {}
    if not isinstance(caches, dict):
        raise CatalogError("machine.caches must be an object such as {\"L2\": \"4M\"}")
    clean["caches"] = caches
    if not clean["name"]:
        raise CatalogError("machine.name is required")
    return clean


def machine_fingerprint(spec: dict) -> str:
    """Same machine description, same fingerprint, however sparsely it was written."""
    clean = _clean_machine_spec(spec)
    canonical = json.dumps({k: clean.get(k) for k in MACHINE_FIELDS}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def machine_get_or_create(*, spec: dict | str) -> Machine:
    """A machine by full description (de-duplicated by fingerprint) or by bare name."""
    if isinstance(spec, str):
        name = spec.strip()
        if not name:
            raise CatalogError("machine name is empty")
        existing = Machine.objects.filter(name=name).order_by("id").first()
        if existing:
            return existing
        spec = {"name": name}
    if not isinstance(spec, dict):
        raise CatalogError("machine must be a name or an object")
    clean = _clean_machine_spec(spec)
    fingerprint = machine_fingerprint(clean)
    return _get_or_create(Machine, {"fingerprint": fingerprint}, clean)

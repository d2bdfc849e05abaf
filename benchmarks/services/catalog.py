"""Get-or-create for the things a run refers to, so a harness needs no set-up step."""

import hashlib
import json
import unicodedata

from django.db import IntegrityError, transaction
from django.utils.text import slugify

from benchmarks.errors import InputError
from benchmarks.identity import versions
from benchmarks.models import Benchmark, Kernel, Machine, Metric
from benchmarks.services.jsonvalues import json_value_check

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


# Where a submission names no machine. With a submitter (machine_get_or_create's `owner`) it
# goes to a machine of that user's own, UNNAMED_MACHINE, so one user's runs never join another
# user's series; only submissions without one (the demo loader) share this placeholder.
UNKNOWN_MACHINE = "unknown machine"
UNNAMED_MACHINE = "unnamed ({username})"


class CatalogError(InputError):
    """Bad names or machine descriptions; the message says which field."""


# Bidirectional formatting characters can make a name display as another one ("Trojan
# Source"); with the C0/C1 controls (NUL among them, which PostgreSQL refuses) they never
# belong in a kernel, machine, benchmark or metric name.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                          "\u2066\u2067\u2068\u2069")


def identifier_check(value: str, *, field: str) -> str:
    """`value` unchanged, or CatalogError when it holds control or bidi-override characters, or
    U+FFFD: what a decoder puts for bytes that are not UTF-8, so the name as sent is unknown."""
    if "\ufffd" in value:
        raise CatalogError(
            f"{field} {value!r} is not valid UTF-8 (or holds U+FFFD); send the name as UTF-8",
            field=field)
    for char in value:
        category = unicodedata.category(char)
        if category in ("Cc", "Cs") or char in BIDI_CONTROLS:
            raise CatalogError(
                f"{field} {value!r} contains the control character U+{ord(char):04X}; "
                "names may not contain control or bidirectional-override characters",
                field=field)
    return value


def _get_or_create(model, lookup: dict, defaults: dict):
    # A savepoint makes a concurrent insert of the same row a lookup, not a failed transaction.
    try:
        with transaction.atomic():
            return model.objects.get_or_create(**lookup, defaults=defaults)[0]
    except IntegrityError:
        return model.objects.get(**lookup)


def benchmark_get_or_create(*, name: str) -> Benchmark:
    name = identifier_check((name or "").strip(), field="benchmark")
    slug = slugify(name)[:100]
    if not slug:
        raise CatalogError(f"benchmark name {name!r} has no letters or digits")
    return _get_or_create(Benchmark, {"slug": slug}, {"name": name[:200]})


def metric_get_or_create(
    *, benchmark: Benchmark, name: str, unit: str = "", higher_is_better: bool = False
) -> Metric:
    name = identifier_check((name or "").strip(), field="metrics")
    if not name or len(name) > 100:
        raise CatalogError(f"metric name {name!r} must be 1-100 characters", field="metrics")
    return _get_or_create(
        Metric,
        {"benchmark": benchmark, "name": name},
        {"unit": (unit or "")[:32], "higher_is_better": bool(higher_is_better)},
    )


def kernel_get_or_create(*, version: str) -> Kernel:
    version = identifier_check((version or "").strip(), field="kernel")
    if not version or len(version) > 200:
        raise CatalogError("kernel version must be 1-200 characters", field="kernel")
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
            raise CatalogError(f"machine.{field} must be a string", field=f"machine.{field}")
        clean[field] = identifier_check(value.strip()[:200], field=f"machine.{field}")
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
    json_value_check(caches, field="machine.caches", error=CatalogError)
    clean["caches"] = caches
    if not clean["name"]:
        raise CatalogError("machine.name is required")
    return clean


def machine_fingerprint(spec: dict) -> str:
    """Same machine description, same fingerprint, however sparsely it was written."""
    clean = _clean_machine_spec(spec)
    canonical = json.dumps({k: clean.get(k) for k in MACHINE_FIELDS}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def machine_of_user(*, owner, name: str = "") -> Machine:
    """A machine that is `owner`'s alone: `name` (default "unnamed (<username>)"), with a
    fingerprint salted with the user's id, so no description anyone else sends reaches it."""
    name = identifier_check((name or "").strip(), field="machine")[:200] or \
        UNNAMED_MACHINE.format(username=owner.get_username())
    clean = _clean_machine_spec({"name": name})
    salted = f"user:{owner.pk}:{machine_fingerprint(clean)}"
    return _get_or_create(Machine, {"fingerprint": hashlib.sha256(salted.encode()).hexdigest()},
                          clean)


# How many same-named machines a refusal counts before it says "more than".
MAX_NAMESAKES = 20


def _unnamed(name: str) -> bool:
    return name.startswith("unnamed (") and name.endswith(")")


def _machine_named(name: str, *, owner) -> Machine | None:
    """The machine a bare name means, or None when no machine has it. Several machines can share
    a name (descriptions differ, so fingerprints do): then the name means the one the submitter
    already ran on, if exactly one; otherwise it is refused rather than guessed, since a run filed
    under another user's description of "laptop" would carry the wrong CPU."""
    named = list(Machine.objects.filter(name=name).order_by("id")[:MAX_NAMESAKES + 1])
    if len(named) <= 1:
        return named[0] if named else None
    if owner is not None:
        mine = list(Machine.objects.filter(pk__in=[m.pk for m in named], runs__submitter=owner)
                    .distinct()[:2])
        if len(mine) == 1:
            return mine[0]
    count = f"{len(named)}" if len(named) <= MAX_NAMESAKES else f"more than {MAX_NAMESAKES}"
    raise CatalogError(f"machine {name!r} names {count} machines with different descriptions; "
                       "send the full machine description (an object with its name, cpu_model "
                       "and topology) so the run is filed under the right one", field="machine")


def machine_get_or_create(*, spec: dict | str | None, owner=None) -> Machine:
    """A machine by full description (de-duplicated by fingerprint) or by bare name. No machine
    (None, "" or UNKNOWN_MACHINE) with an `owner`: that user's own unnamed machine. The
    "unnamed (<user>)" names are reserved to their users."""
    if owner is not None and spec in (None, "", UNKNOWN_MACHINE):
        return machine_of_user(owner=owner)
    if isinstance(spec, str):
        name = identifier_check(spec.strip(), field="machine")
        if not name:
            raise CatalogError("machine name is empty", field="machine")
        if _unnamed(name):
            if owner is None or name != UNNAMED_MACHINE.format(username=owner.get_username()):
                raise CatalogError(f"machine {name!r}: names 'unnamed (...)' are kept for "
                                   "each user's runs without a machine", field="machine")
            return machine_of_user(owner=owner)
        existing = _machine_named(name, owner=owner)
        if existing:
            return existing
        spec = {"name": name}
    if not isinstance(spec, dict):
        raise CatalogError("machine must be a name or an object")
    clean = _clean_machine_spec(spec)
    fingerprint = machine_fingerprint(clean)
    return _get_or_create(Machine, {"fingerprint": fingerprint}, clean)

"""What a thread can be attached to: a small registry from a target type to a resolver.

    register_target("comparison", lambda slug: Comparison.objects.filter(slug=slug).first())

is all another app needs (see docs/discussions.md). A resolver takes the target id as a string
and returns the object, or None when there is no such thing; the object's `get_absolute_url`
and `str()` are what the thread page shows.
"""

from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.errors import InputError

Resolver = Callable[[str], object | None]
TARGET_TYPES = ("run", "comparison", "simulation", "regression")

_RESOLVERS: dict[str, Resolver] = {}


class TargetError(InputError):
    """An unknown target type, or an id that names nothing."""

    def __init__(self, message: str, **kwargs):
        kwargs.setdefault("field", "attach_to")
        super().__init__(message, **kwargs)


def register_target(target_type: str, resolver: Resolver) -> None:
    _RESOLVERS[target_type] = resolver


@dataclass(frozen=True)
class Target:
    type: str
    id: str
    obj: object

    @property
    def label(self) -> str:
        return f"{self.type} {self.obj}"

    @property
    def url(self) -> str:
        get_url = getattr(self.obj, "get_absolute_url", None)
        return get_url() if get_url else ""


def target_resolve(target_type: str, target_id) -> Target:
    """The target named by (type, id); raises TargetError saying what is wrong."""
    target_type = str(target_type or "").strip()
    target_id = str(target_id if target_id is not None else "").strip()
    if target_type not in TARGET_TYPES:
        raise TargetError(f"attach_to.type must be one of {', '.join(TARGET_TYPES)}")
    resolver = _RESOLVERS.get(target_type)
    if resolver is None:
        raise TargetError(f"threads cannot be attached to a {target_type} yet")
    if not target_id or len(target_id) > 100:
        raise TargetError("attach_to.id must be 1-100 characters")
    obj = resolver(target_id)
    if obj is None:
        raise TargetError(f"there is no {target_type} {target_id!r}")
    return Target(target_type, target_id, obj)


def _run_by_pk(target_id: str):
    from benchmarks.models import Run

    return Run.objects.filter(pk=int(target_id)).first() if target_id.isdigit() else None


def _comparison_by_slug(target_id: str):
    from benchmarks.models import Comparison

    return Comparison.objects.filter(slug=target_id).first()


register_target("run", _run_by_pk)
register_target("comparison", _comparison_by_slug)

"""The groups site search looks in. The core registers runs, comparisons and machines; a feature
registers its own groups in its AppConfig.ready() (discussions: threads and messages), so the
core never imports a feature to search it."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet


@dataclass
class Hit:
    kind: str
    id: int | str
    title: str
    detail: str
    url: str


@dataclass(frozen=True)
class SearchSource:
    kind: str  # the `type` a search names ("runs", "threads")
    label: str  # the heading on the page
    order: int  # where the group stands on the page and in the API's overview
    find: Callable[[str], QuerySet]  # the query (one per group), best first
    hit: Callable[[Any, str], Hit]  # one row as a hit


_SOURCES: dict[str, SearchSource] = {}


def register_search_source(source: SearchSource) -> None:
    """Idempotent: ready() may run more than once in tests."""
    _SOURCES[source.kind] = source


def search_sources(kind: str | None = None) -> list[SearchSource]:
    """Every group in page order, or the one named `kind`."""
    if kind is not None:
        return [_SOURCES[kind]]
    return sorted(_SOURCES.values(), key=lambda source: (source.order, source.kind))

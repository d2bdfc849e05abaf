"""Reply drafts: text another part of the portal offers as the start of a reply.

    register_draft_source("comparison", lambda slug, permalink_base: text_or_None)

The reply page takes `?draft=<source>:<key>` (e.g. `?draft=comparison:ab12cd`) and puts the
returned text into the reply box under the quoted parent, so the reply keeps the right
In-Reply-To. See docs/discussions.md.
"""

from collections.abc import Callable

DraftSource = Callable[[str, str], str | None]
_SOURCES: dict[str, DraftSource] = {}


def register_draft_source(name: str, source: DraftSource) -> None:
    _SOURCES[name] = source


def draft_text(spec: str, *, site_url: str = "") -> str:
    """The draft named by "source:key", or "" when there is none."""
    name, _, key = (spec or "").partition(":")
    source = _SOURCES.get(name)
    if source is None or not key:
        return ""
    try:
        return source(key, site_url) or ""
    except Exception:  # noqa: BLE001 - a broken draft source must not break the reply page
        return ""


def _comparison_report(slug: str, site_url: str) -> str | None:
    from benchmarks.comparisons.report import as_text
    from benchmarks.models import Comparison

    comparison = Comparison.objects.filter(slug=slug).first()
    if comparison is None:
        return None
    return as_text(comparison, f"{site_url}{comparison.get_absolute_url()}")


register_draft_source("comparison", _comparison_report)

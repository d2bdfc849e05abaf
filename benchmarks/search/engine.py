"""Site search: one query per group. The core searches runs, comparisons and machines; features
add groups of their own through sources.py (discussions: threads and messages).

PostgreSQL: full-text search over comparisons, threads and messages (the `simple`
configuration: kernel people search for kernel strings, function names and message ids, which
stemming would mangle; every term also as a prefix) ranked by SearchRank, OR'ed with exact
matches on identifiers (message ids, comparison slugs), so `<abc@host>` finds exactly that
message. Posts keep their vector in a column (a trigger maintains it, discussions migration
0005) with a GIN index, so neither matching nor ranking re-parses message bodies. Runs and
machines are found through their identifiers on both backends: kernel version, benchmark,
machine name and CPU, label and tags are short strings where a substring (`cfs-v24` in
`2.6.22.17-cfs-v24.1`) is what people type, matched in the small kernel, benchmark and
machine tables and joined by indexed ids.

SQLite (the embedded default): every whitespace-separated term must occur (icontains) in one
of the same fields.
"""

import re
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db import connection
from django.db.models import Case, F, IntegerField, Q, QuerySet, TextField, Value, When
from django.db.models.functions import Cast

from benchmarks.errors import InputError
from benchmarks.models import Benchmark, Comparison, Kernel, Machine, Run
from benchmarks.search.sources import Hit, SearchSource, register_search_source, search_sources

MAX_QUERY = 200
MAX_TERMS = 8
PER_PAGE = 20
OVERVIEW_PER_GROUP = 5
CONFIG = "simple"


@dataclass
class Group:
    kind: str
    label: str
    page: int
    hits: list[Hit] = field(default_factory=list)
    has_next: bool = False


def clean_query(q) -> str:
    """The query as searched, or InputError naming `q`."""
    q = (q or "").strip()
    if not q:
        raise InputError("q: give something to search for (a kernel, benchmark, subject, "
                         "author, message id, machine...)", field="q")
    if len(q) > MAX_QUERY:
        raise InputError(f"q: at most {MAX_QUERY} characters", field="q")
    if "\x00" in q:
        raise InputError("q: may not contain NUL characters", field="q")
    return q


def clean_kind(kind) -> str | None:
    if not kind:
        return None
    if kind not in groups():
        raise InputError(f"type: one of {', '.join(groups())}", field="type")
    return kind


def _terms(q: str) -> list[str]:
    return q.split()[:MAX_TERMS]


def postgres() -> bool:
    return connection.vendor == "postgresql"


def every_term(q: str, fields: tuple[str, ...]) -> Q:
    """Each term occurs in one of `fields` (the SQLite search, and identifier matching)."""
    match = Q()
    for term in _terms(q):
        any_field = Q()
        for name in fields:
            any_field |= Q(**{f"{name}__icontains": term})
        match &= any_field
    return match


def prefix_tsquery(q: str) -> str | None:
    """`term1:* & term2:*` as tsquery text: every term, each also as a word's start (`slow`
    finds `slowdown`, `2.6.22` finds `2.6.22.17`). Terms are quoted, so no operator in what
    was typed reaches the tsquery parser; terms without a letter or digit are dropped."""
    quoted = []
    for term in _terms(q):
        if not any(ch.isalnum() for ch in term):
            continue
        escaped = term.replace("\\", "\\\\").replace("'", "''")
        quoted.append(f"'{escaped}':*")
    return " & ".join(quoted) or None


def fts(vector: tuple[str, ...], q: str) -> tuple[SearchVector, SearchQuery | None]:
    raw = prefix_tsquery(q)
    return (SearchVector(*vector, config=CONFIG),
            SearchQuery(raw, search_type="raw", config=CONFIG) if raw else None)


def matches(query: SearchQuery | None) -> Q:
    return Q(document=query) if query is not None else Q(pk__in=[])


def ranked(queryset: QuerySet, vector: SearchVector, query: SearchQuery | None) -> QuerySet:
    rank = SearchRank(F("document"), query) if query is not None else Value(0.0)
    return queryset.alias(document=vector).annotate(rank=rank)


# --- the groups -----------------------------------------------------------------------------

def _run_term(term: str) -> Q:
    """A run matches a term through its kernel, benchmark, machine, label or tags."""
    kernels = Kernel.objects.filter(version__icontains=term).values("id")
    benchmarks = Benchmark.objects.filter(Q(slug__icontains=term) | Q(name__icontains=term))
    machines = Machine.objects.filter(Q(name__icontains=term) | Q(cpu_model__icontains=term))
    match = (Q(kernel_id__in=kernels) | Q(benchmark_id__in=benchmarks.values("id"))
             | Q(machine_id__in=machines.values("id")) | Q(label__icontains=term)
             | Q(tags_text__icontains=term))
    number = term.lstrip("#")
    if number.isascii() and number.isdigit() and len(number) < 18:
        match |= Q(pk=int(number))
    return match


def run_search(q: str) -> QuerySet:
    """Visible runs where every term names the kernel, benchmark, machine, label, a tag or
    the run's number; an exact kernel first, then newest."""
    match = Q()
    for term in _terms(q):
        match &= _run_term(term)
    exact = Case(When(kernel__version__iexact=q, then=Value(1)), default=Value(0),
                 output_field=IntegerField())
    return (Run.objects.visible().alias(tags_text=Cast("tags", TextField())).filter(match)
            .select_related("benchmark", "kernel", "machine")
            .only("id", "label", "tags", "policy", "created", "benchmark__name",
                  "kernel__version", "machine__name")
            .annotate(exact=exact).order_by("-exact", "-created", "-id"))


def comparison_search(q: str) -> QuerySet:
    comparisons = Comparison.objects.defer("frozen").alias(spec_text=Cast("spec", TextField()))
    slug = Q(slug__iexact=q.strip())
    if not postgres():
        return comparisons.filter(slug | every_term(q, ("title", "spec_text"))
                                  ).order_by("-created", "-id")
    vector, query = fts(("title", "spec_text"), q)
    return (ranked(comparisons, vector, query).filter(slug | matches(query))
            .order_by("-rank", "-created", "-id"))


def machine_search(q: str) -> QuerySet:
    name = Case(When(name__iexact=q.strip(), then=Value(1)), default=Value(0),
                output_field=IntegerField())
    return (Machine.objects.filter(every_term(q, ("name", "cpu_model", "arch")))
            .annotate(exact=name).order_by("-exact", "name", "id"))


# --- hits -----------------------------------------------------------------------------------

def snippet(text: str, q: str, width: int = 160) -> str:
    """A line of the body around the first term found in it."""
    flat = re.sub(r"\s+", " ", text or "").strip()
    lowered = flat.lower()
    found = min((i for i in (lowered.find(t.lower()) for t in _terms(q)) if i >= 0), default=0)
    start = max(0, found - width // 3)
    return ("…" if start else "") + flat[start:start + width] + (
        "…" if start + width < len(flat) else "")


def _run_hit(run: Run, q: str) -> Hit:
    extras = [run.machine.name] + ([run.label] if run.label else []) + list(run.tags)
    return Hit("runs", run.pk, f"#{run.pk} {run.benchmark.name} on {run.kernel.version}",
               " · ".join(extras), run.get_absolute_url())


def _comparison_hit(comparison: Comparison, q: str) -> Hit:
    return Hit("comparisons", comparison.slug, comparison.title,
               f"{len(comparison.run_ids)} runs · {comparison.created:%Y-%m-%d}",
               comparison.get_absolute_url())


def _machine_hit(machine: Machine, q: str) -> Hit:
    parts = [machine.cpu_model or "unknown CPU", machine.arch, machine.topology]
    return Hit("machines", machine.pk, machine.name, " · ".join(p for p in parts if p),
               machine.get_absolute_url())


def register_core_sources() -> None:
    """The core's groups; BenchmarksConfig.ready() calls this, features add theirs."""
    register_search_source(SearchSource("runs", "Runs", 10, run_search, _run_hit))
    register_search_source(SearchSource("comparisons", "Comparisons", 20, comparison_search,
                                        _comparison_hit))
    register_search_source(SearchSource("machines", "Machines", 90, machine_search,
                                        _machine_hit))


def groups() -> dict[str, str]:
    """kind -> heading, in the order the page shows them."""
    return {source.kind: source.label for source in search_sources()}


def search_group(q: str, kind: str, *, page: int = 1, per_page: int = PER_PAGE) -> Group:
    """One page of one group, in one query (one row past the page says there is a next)."""
    source = search_sources(kind)[0]
    start = (page - 1) * per_page
    rows = list(source.find(q)[start:start + per_page + 1])
    return Group(kind, source.label, page, [source.hit(row, q) for row in rows[:per_page]],
                 has_next=len(rows) > per_page)


def search(q: str, *, kind: str | None = None, page: int = 1) -> list[Group]:
    """Every group's first few hits, or one group's page `page` when `kind` is given."""
    if kind:
        return [search_group(q, kind, page=page)]
    return [search_group(q, name, per_page=OVERVIEW_PER_GROUP) for name in groups()]


def clean_page(value) -> int:
    text = str(value or "1")
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) <= 1000:
        raise InputError("page: a number from 1 to 1000", field="page")
    return int(text)


def group_query(q: str, kind: str, page: int) -> str:
    """The query string of one group's page."""
    return urlencode({"q": q, "type": kind, "page": page})

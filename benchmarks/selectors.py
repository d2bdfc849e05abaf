"""Reads. Filters people use on runs, with a human message when a value matches nothing."""

import math
from collections import defaultdict
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.db.models import Count, Exists, F, Max, OuterRef, Q, QuerySet, TextField
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KeyTransform
from django.db.models.functions import Cast
from django.db.models.signals import post_delete, post_save

from benchmarks.models import (
    Benchmark,
    Comparison,
    KeptValuesGeneration,
    Kernel,
    Machine,
    MachineCalibration,
    Metric,
    MetricSummary,
    PublishedSummary,
    Run,
    RunParam,
    RunSource,
    RunTombstone,
    RunVisibilityChange,
    Sample,
)
from benchmarks.services.catalog import UNKNOWN_MACHINE, UNNAMED_MACHINE
from benchmarks.signals import runs_stored, runs_visibility_changed

PARAM_PREFIX = "param."
TUNABLE_PREFIX = "tunable."


@dataclass
class RunFilterResult:
    runs: QuerySet
    applied: dict = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def _benchmark_filter(value: str):
    benchmark = Benchmark.objects.filter(slug=value).first() or Benchmark.objects.filter(
        name=value
    ).first()
    return ({"benchmark": benchmark}, None) if benchmark else (None, f"no benchmark {value!r}")


def _kernel_filter(value: str):
    kernel = Kernel.objects.filter(version=value).first()
    return ({"kernel": kernel}, None) if kernel else (None, f"no kernel {value!r}")


def _machine_filter(value: str):
    by_id = value.isascii() and value.isdigit()
    machines = Machine.objects.filter(**({"id": int(value)} if by_id else {"name": value}))
    if not machines.exists():
        return None, f"no machine {value!r}"
    return {"machine__in": machines}, None


def _source_filter(value: str):
    if value not in RunSource.values:
        return None, f"unknown source {value!r} (one of {', '.join(RunSource.values)})"
    return {"source": value}, None


def _tag_filter(value: str):
    from benchmarks.services.ownership import TAG

    if not TAG.fullmatch(value):
        return None, f"no tag {value!r} (tags are letters, digits and _ . + : @ / -)"
    # Tags hold no quote, so '"cfs"' in the list's JSON text is exactly the tag cfs, on
    # SQLite and PostgreSQL alike.
    return {"tags_text__contains": f'"{value}"'}, None


_FILTERS = {
    "benchmark": _benchmark_filter,
    "kernel": _kernel_filter,
    "machine": _machine_filter,
    "source": _source_filter,
    "policy": lambda value: ({"policy": value}, None),
    "tag": _tag_filter,
}


def _all_items(params):
    """(key, value) pairs of a QueryDict (every value of a repeated key) or a plain dict."""
    if hasattr(params, "lists"):
        return ((key, value) for key, values in params.lists() for value in values)
    return params.items()


def run_filter(params) -> RunFilterResult:
    """Apply `benchmark, kernel, machine, policy, source, tag, param.<name>, tunable.<name>`
    to the runs not withdrawn."""
    runs = Run.objects.visible()
    result = RunFilterResult(runs=runs)
    if any("\x00" in f"{key}{value}" for key, value in _all_items(params)):
        # The database cannot even be asked about a NUL: nothing stored can match it.
        result.problems.append("filters may not contain NUL characters")
        result.runs = runs.none()
        return result
    for name, apply in _FILTERS.items():
        value = (params.get(name) or "").strip()
        if not value:
            continue
        lookup, problem = apply(value)
        result.applied[name] = value
        if problem:
            result.problems.append(problem)
        elif name == "tag":
            runs = runs.alias(tags_text=Cast("tags", TextField())).filter(**lookup)
        else:
            runs = runs.filter(**lookup)
    for key in params:
        if key.startswith(PARAM_PREFIX) and params.get(key, "").strip():
            name, value = key[len(PARAM_PREFIX):], params.get(key).strip()
            result.applied[key] = value
            matching = RunParam.objects.filter(name=name, value=value).values("run_id")
            runs = runs.filter(id__in=matching)
        elif key.startswith(TUNABLE_PREFIX) and params.get(key, "").strip():
            name, value = key[len(TUNABLE_PREFIX):], params.get(key).strip()
            result.applied[key] = value
            runs = _tunable_filter(runs, name, value, alias=f"tunable_filter_{len(result.applied)}")
    result.runs = runs.none() if result.problems else runs
    return result


def _json_candidates(text: str) -> list:
    """The JSON values a query-string value may stand for: "1" matches 1, 1.0 and "1"."""
    candidates = [text]
    lowered = text.lower()
    if lowered in ("true", "false"):
        candidates.append(lowered == "true")
    try:
        number = float(text)
    except ValueError:
        return candidates
    if math.isfinite(number):
        candidates.append(number)
        if number.is_integer():
            candidates.append(int(number))
    return candidates


def _tunable_filter(runs: QuerySet, name: str, value: str, *, alias: str) -> QuerySet:
    matches = Q()
    for candidate in _json_candidates(value):
        matches |= Q(**{alias: candidate})
    return runs.alias(**{alias: KeyTransform(name, "tunables")}).filter(matches)


@dataclass(slots=True)
class ListedRun:
    """A run as the run list shows it (models.LISTED_COLUMNS, then its summaries)."""

    pk: int
    params: object
    policy: str
    source: str
    benchmark_slug: str
    kernel_version: str
    machine_name: str
    # (metric name, median, stdev, n) by metric name, as MetricSummary is ordered
    summaries: list[tuple[str, float, float | None, int]] = field(default_factory=list)


# A page of runs' summaries by metric name (MetricSummary's order), as ListedRun holds them.
_LISTED_SUMMARIES_SQL = """
SELECT s.run_id, m.name, s.median, s.stdev, s.n
FROM {summary} s JOIN {metric} m ON m.id = s.metric_id
WHERE s.run_id IN ({ids}) ORDER BY m.name, s.run_id"""


def runs_listed(rows) -> list[ListedRun]:
    """Rows of RunQuerySet.listing_rows() with their summaries, read in one query."""
    runs = [ListedRun(*row) for row in rows]
    by_id = {run.pk: run for run in runs}
    if not by_id:
        return runs
    sql = _LISTED_SUMMARIES_SQL.format(summary=MetricSummary._meta.db_table,
                                       metric=Metric._meta.db_table,
                                       ids=", ".join(["%s"] * len(by_id)))
    with connection.cursor() as cursor:
        cursor.execute(sql, list(by_id))
        for run_id, *summary in cursor.fetchall():
            by_id[run_id].summaries.append(tuple(summary))
    return runs


@dataclass(frozen=True, slots=True)
class PublishedRow:
    """A run's published summary (models.PublishedSummary) as its page lists it."""

    metric: str
    unit: str
    higher_is_better: bool
    statistic: str
    value: float
    stddev_pct: float | None
    n: int | None
    significant: bool | None


_PUBLISHED_SQL = """
SELECT m.name, m.unit, m.higher_is_better, p.statistic, p.value, p.stddev_pct, p.n,
       p.significant
FROM {published} p JOIN {metric} m ON m.id = p.metric_id WHERE p.run_id = %s ORDER BY m.name"""


def published_rows(run: Run) -> list[PublishedRow]:
    """The run's published summaries by metric name (PublishedSummary's order), in one
    statement (the ORM's took longer to build than to answer)."""
    sql = _PUBLISHED_SQL.format(published=PublishedSummary._meta.db_table,
                                metric=Metric._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(sql, [run.pk])
        return [PublishedRow(name, unit, bool(better), statistic, value, spread, n,
                             None if significant is None else bool(significant))
                for name, unit, better, statistic, value, spread, n, significant
                in cursor.fetchall()]


# (Written as SQL: the ORM took longer to build this query than the database to answer it.)
_RUN_SAMPLES_SQL = ('SELECT metric_id, value FROM {sample} WHERE run_id = %s '
                    'ORDER BY metric_id, "index"')


def samples_by_metric(run: Run) -> dict[int, list[float]]:
    """Every sample of a run in repeat order, keyed by metric id, in one query."""
    values = defaultdict(list)
    with connection.cursor() as cursor:
        cursor.execute(_RUN_SAMPLES_SQL.format(sample=Sample._meta.db_table), [run.pk])
        for metric_id, value in cursor.fetchall():
            values[metric_id].append(value)
    return values


def recent_comparisons(limit: int = 8) -> QuerySet:
    return Comparison.objects.defer("frozen", "spec").order_by("-created", "-id")[:limit]


# Names whose every run is withdrawn (a misread upload taken back) leave the lists; names no
# run uses yet (a calibrated machine, a bisection's end kernel) stay: nothing of them was taken
# back.
#
# Each name's live run count, exact: every run counted per name through the name's index (an
# index-only scan on PostgreSQL) less the withdrawn ones (few, found through the withdrawn
# index): ~4 ms at 100k runs where a join of every run to its name took 25-60 ms.
_RUN_COUNTS_SQL = """
SELECT t.{column}, t.n, t.n - COALESCE(w.n, 0)
FROM (SELECT {column}, COUNT(*) AS n FROM {run} GROUP BY {column}) t
LEFT JOIN (SELECT {column}, COUNT(*) AS n FROM {run} WHERE withdrawn IS NOT NULL
           GROUP BY {column}) w ON w.{column} = t.{column}"""
RUN_COUNTS_GENERATION = "run-counts"  # its row of KeptValuesGeneration
# What any change to the runs moves: the generation (moved after a rename or an in-place save),
# a new run's id, a deletion's tombstone, a withdrawal's or restore's record; and a new
# benchmark, machine or kernel's id (one query of index probes).
_RUNS_VERSION_SQL = "SELECT (SELECT value FROM {generation} WHERE name = '" \
    f"{RUN_COUNTS_GENERATION}'), " \
    "(SELECT MAX(id) FROM {run}), (SELECT MAX(id) FROM {tombstone}), " \
    "(SELECT MAX(id) FROM {change}), (SELECT MAX(id) FROM {benchmark}), " \
    "(SELECT MAX(id) FROM {machine}), (SELECT MAX(id) FROM {kernel})"


class RunCounts:
    """What is read from every run, kept per process and used while nothing that can move it
    has happened: {benchmark or machine id: (runs, live runs)}, the number of visible runs,
    the run list's filter choices and its unfiltered first page. The key, read in one query, is
    the generation (a row in the database, moved after the commit of any stored, rewritten,
    withdrawn, restored, saved or deleted run, and of any saved or deleted benchmark, machine,
    kernel or metric, by whichever process on whichever host) and the newest ids (new runs,
    tombstones, visibility changes: they move even when a writer's signal was never sent).
    Each is read again each time the key moves, never added to: what a page shows is the
    database's. Nothing is kept from inside a transaction (it may roll back)."""

    def __init__(self):
        self._key: tuple | None = None
        self._kept: dict[str, object] = {}

    @staticmethod
    def renew() -> None:
        """Move the generation every process checks (run after a commit: the value read
        before it would otherwise be kept under the moved key). In the database, so every
        web host sees it, whatever cache each has."""
        generation = KeptValuesGeneration.objects.filter(name=RUN_COUNTS_GENERATION)
        if not generation.update(value=F("value") + 1):
            KeptValuesGeneration.objects.get_or_create(name=RUN_COUNTS_GENERATION)

    def _check(self) -> dict[str, object]:
        """What is kept for the key read now (one query): a new, empty dict when the key moved.
        A read made after this check goes into this dict only, so a thread whose key another
        thread has since moved stores nothing the new key would use."""
        tables = {"generation": KeptValuesGeneration, "run": Run, "tombstone": RunTombstone,
                  "change": RunVisibilityChange, "benchmark": Benchmark, "machine": Machine,
                  "kernel": Kernel}
        with connection.cursor() as cursor:
            cursor.execute(_RUNS_VERSION_SQL.format(
                **{name: model._meta.db_table for name, model in tables.items()}))
            key = tuple(cursor.fetchone())
        if key != self._key:
            self._key, self._kept = key, {}
        return self._kept

    def _read(self, name: str, read, kept: dict | None = None):
        kept = self._check() if kept is None else kept
        if name not in kept:
            found = read()
            if connection.in_atomic_block:
                return found
            kept[name] = found
        return kept[name]

    def of(self, column: str) -> dict[int, tuple[int, int]]:
        def read():
            with connection.cursor() as cursor:
                cursor.execute(_RUN_COUNTS_SQL.format(column=column, run=Run._meta.db_table))
                return {pk: (total, live) for pk, total, live in cursor.fetchall()}
        return self._read(f"counts of {column}", read)

    def run_list(self, *, count: bool, first_page=None) -> tuple:
        """(count, choices, first page) of the run list, each kept for one check (~0.3 ms):
        with `count`, Run.objects.visible().count() (at 100k runs it reads every run's
        withdrawn index entry, ~9 ms); read_run_list_choices() (~3.5 ms); and with
        `first_page`, what it returns (the unfiltered page's first rows, made by the view).
        None for what was not asked. Inside a transaction (which keeps nothing), read without
        the check."""
        reads = {"run list choices": read_run_list_choices}
        if count:
            reads["visible runs"] = Run.objects.visible().count
        if first_page is not None:
            reads["run list first page"] = first_page
        if connection.in_atomic_block:
            found = {name: read() for name, read in reads.items()}
        else:
            kept = self._check()
            found = {name: self._read(name, read, kept) for name, read in reads.items()}
        return (found.get("visible runs"), found["run list choices"],
                found.get("run list first page"))


run_counts = RunCounts()


def _renew_after_commit(**kwargs) -> None:
    if kwargs.get("created"):  # a new run: runs_stored follows, once for the whole batch
        return
    pending = connection.run_on_commit
    if pending and pending[-1][1] is RunCounts.renew:  # runs saved one after another
        return
    transaction.on_commit(RunCounts.renew, robust=True)


def _renew_names_after_commit(**kwargs) -> None:
    """A name saved or deleted (a metric's too: the run list's rows show it): a new one too
    (its id alone could hide behind a larger id committed first, and a rename moves no id)."""
    pending = connection.run_on_commit
    if not (pending and pending[-1][1] is RunCounts.renew):
        transaction.on_commit(RunCounts.renew, robust=True)


def connect_run_counts() -> None:
    """Every way a count or a choice can move renews them (BenchmarksConfig.ready() calls
    this). A run's params come and go with the run (RunParam rows are written with it and
    deleted with it), so the run's signals cover them."""
    runs_stored.connect(_renew_after_commit, dispatch_uid="run-counts-stored")
    runs_visibility_changed.connect(_renew_after_commit, dispatch_uid="run-counts-visibility")
    post_save.connect(_renew_after_commit, sender=Run, dispatch_uid="run-counts-saved")
    post_delete.connect(_renew_after_commit, sender=Run, dispatch_uid="run-counts-deleted")
    for model in (Benchmark, Machine, Kernel, Metric):
        for signal, kind in ((post_save, "saved"), (post_delete, "deleted")):
            signal.connect(_renew_names_after_commit, sender=model,
                           dispatch_uid=f"run-counts-{model._meta.model_name}-{kind}")


def _with_live_counts(names: QuerySet, column: str) -> list:
    """`names` with their live `run_count`, without those only withdrawn runs use."""
    counts = run_counts.of(column)
    listed = []
    for name in names:
        total, live = counts.get(name.pk, (0, 0))
        if live or not total:
            name.run_count = live
            listed.append(name)
    return listed


def benchmarks_with_counts() -> list[Benchmark]:
    return _with_live_counts(Benchmark.objects.order_by("slug"), "benchmark_id")


def machines_with_counts() -> list[Machine]:
    return _with_live_counts(Machine.objects.order_by("name", "id"), "machine_id")


# Which names visible runs use, without reading every run (100k runs: 50-120 ms each on
# PostgreSQL, and an EXISTS per name is planned as a scan when the runs are stored in name
# order): the names are few, so these hop from one value to the next through the column's
# index (a loose index scan, one probe per distinct value), on PostgreSQL and SQLite alike.
_VISIBLE_VALUES_SQL = """
WITH RECURSIVE found(value) AS (
    SELECT MIN({column}) FROM {run} WHERE withdrawn IS NULL AND {column} > %s
  UNION ALL
    SELECT (SELECT MIN(r.{column}) FROM {run} r
            WHERE r.withdrawn IS NULL AND r.{column} > found.value)
    FROM found WHERE found.value IS NOT NULL
)
SELECT value FROM found WHERE value IS NOT NULL"""


def _visible_values(column: str, above) -> RawSQL:
    """The distinct values > `above` of a Run column among visible runs, as a subquery."""
    sql = _VISIBLE_VALUES_SQL.format(column=column, run=Run._meta.db_table)
    return RawSQL(sql, [above])


def kernels_in_use() -> QuerySet:
    return (Kernel.objects.filter(pk__in=_visible_values("kernel_id", 0))
            .order_by("sort_key", "version"))


def _not_withdrawn_only(queryset: QuerySet, field: str) -> QuerySet:
    withdrawn = Run.objects.filter(**{field: OuterRef("pk")}, withdrawn__isnull=False)
    return queryset.filter(Q(pk__in=_visible_values(f"{field}_id", 0)) | ~Exists(withdrawn))


def benchmarks_listed() -> QuerySet:
    """The API's benchmark list: every benchmark but those only withdrawn runs use."""
    return _not_withdrawn_only(Benchmark.objects.all(), "benchmark").order_by("slug")


def machines_listed() -> QuerySet:
    """The API's machine list: every machine but those only withdrawn runs use."""
    return _not_withdrawn_only(Machine.objects.all(), "machine").order_by("name", "id")


def kernels_listed() -> QuerySet:
    """The API's kernel list, in release order: every kernel but those only withdrawn runs use."""
    return _not_withdrawn_only(Kernel.objects.all(), "kernel").order_by("sort_key", "version")


# The run list's filter choices: kernels_in_use(), benchmarks_listed() and machines_listed()
# written as the statements they compile to, for the columns the options show. Building those
# querysets (an Exists, a raw subquery, a union of conditions) took the ORM ~1 ms of CPU each,
# longer than the database takes to answer them; tests/benchmarks/test_run_list_choices.py
# compares both ways.
_CHOICES_SQL = """
SELECT {columns} FROM {table} n WHERE n.id IN ({visible}){unused}
ORDER BY {order}"""
# names no run uses are kept; those only withdrawn runs use are not (benchmarks_listed())
_KEEP_UNUSED = """ OR NOT EXISTS (
    SELECT 1 FROM {run} r WHERE r.{column} = n.id AND r.withdrawn IS NOT NULL)"""


def _choices(model, columns: str, column: str, order: str, *, keep_unused: bool) -> list:
    run = Run._meta.db_table
    unused = _KEEP_UNUSED.format(run=run, column=column) if keep_unused else ""
    visible = _VISIBLE_VALUES_SQL.format(column=column, run=run)
    with connection.cursor() as cursor:
        cursor.execute(_CHOICES_SQL.format(columns=columns, table=model._meta.db_table,
                                           visible=visible, unused=unused, order=order), [0])
        return cursor.fetchall()


def kernel_choices() -> list[str]:
    """The versions of kernels_in_use(), in release order."""
    return [version for (version,) in _choices(Kernel, "n.version", "kernel_id",
                                               "n.sort_key, n.version", keep_unused=False)]


def benchmark_choices() -> list[tuple[str, str]]:
    """(slug, name) of benchmarks_listed(), in its order."""
    return _choices(Benchmark, "n.slug, n.name", "benchmark_id", "n.slug", keep_unused=True)


def machine_choices() -> list[tuple[int, str]]:
    """(id, name) of machines_listed(), in its order."""
    return _choices(Machine, "n.id, n.name", "machine_id", "n.name, n.id", keep_unused=True)


def recent_runs(limit: int = 10) -> QuerySet:
    return Run.objects.visible().with_listing_relations().order_by("-created", "-id")[:limit]


def recent_runs_listed(limit: int = 10) -> list[ListedRun]:
    """recent_runs() as the run list's rows (pages/rows.py renders them), in its order."""
    return runs_listed(Run.objects.visible().order_by("-created", "-id").listing_rows()[:limit])


def withdrawn_among(run_ids: list[int]) -> list[int]:
    """The ids of `run_ids` that are withdrawn, in their order (a frozen comparison says so)."""
    hidden = set(Run.objects.filter(pk__in=run_ids, withdrawn__isnull=False)
                 .values_list("pk", flat=True))
    return [pk for pk in run_ids if pk in hidden]


# The param names, likewise hopping through the (name, value) index; a name is kept when a
# visible run has it (a scalar subquery, so it is probed per name and never planned as a join
# of every row).
_PARAM_NAMES_SQL = """
WITH RECURSIVE found(name) AS (
    SELECT MIN(name) FROM {param}
  UNION ALL
    SELECT (SELECT MIN(p.name) FROM {param} p WHERE p.name > found.name)
    FROM found WHERE found.name IS NOT NULL
)
SELECT name FROM found WHERE name IS NOT NULL AND (
    SELECT 1 FROM {param} p JOIN {run} r ON r.id = p.run_id
    WHERE p.name = found.name AND r.withdrawn IS NULL LIMIT 1) IS NOT NULL
ORDER BY name"""


def _column(sql: str, params: list) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def policies_in_use() -> list[str]:
    """The policies of visible runs, in order (one query)."""
    values = _visible_values("policy", "")
    return _column(f"{values.sql} ORDER BY value", list(values.params))


def param_names_in_use() -> list[str]:
    """The param names of visible runs, in order (one query)."""
    sql = _PARAM_NAMES_SQL.format(run=Run._meta.db_table, param=RunParam._meta.db_table)
    return _column(sql, [])


@dataclass(frozen=True, slots=True)
class RunListChoices:
    """The run list's filter choices: what its five lists offer."""

    benchmarks: tuple[tuple[str, str], ...]
    kernels: tuple[str, ...]
    machines: tuple[tuple[int, str], ...]
    policies: tuple[str, ...]
    params: tuple[str, ...]


def read_run_list_choices_apart() -> RunListChoices:
    """The five lists, one query each (the functions above)."""
    return RunListChoices(benchmarks=tuple(benchmark_choices()), kernels=tuple(kernel_choices()),
                          machines=tuple(machine_choices()), policies=tuple(policies_in_use()),
                          params=tuple(param_names_in_use()))


# The five queries of read_run_list_choices_apart() as one statement: each list numbered in its
# own order (ROW_NUMBER over the same ORDER BY, so the database's collation orders it as it
# orders the list alone), the rows tagged by list. One round trip instead of five: on a loaded
# machine each costs a wakeup of the database's process.
_RUN_LIST_CHOICES_SQL = """
SELECT * FROM (SELECT 0 AS list, ROW_NUMBER() OVER (ORDER BY n.slug) AS rank, {no_id} AS id,
                      n.slug AS value, n.name AS label
               FROM {benchmark} n WHERE n.id IN ({visible_benchmarks}){unused_benchmarks}) b
UNION ALL
SELECT * FROM (SELECT 1, ROW_NUMBER() OVER (ORDER BY n.sort_key, n.version), {no_id},
                      n.version, {no_text}
               FROM {kernel} n WHERE n.id IN ({visible_kernels})) k
UNION ALL
SELECT * FROM (SELECT 2, ROW_NUMBER() OVER (ORDER BY n.name, n.id), n.id, {no_text}, n.name
               FROM {machine} n WHERE n.id IN ({visible_machines}){unused_machines}) m
UNION ALL
SELECT * FROM (SELECT 3, ROW_NUMBER() OVER (ORDER BY value), {no_id}, value, {no_text}
               FROM ({visible_policies}) v) p
UNION ALL
SELECT * FROM (SELECT 4, ROW_NUMBER() OVER (ORDER BY name), {no_id}, name, {no_text}
               FROM ({param_names}) n) n
ORDER BY 1, 2"""


def read_run_list_choices() -> RunListChoices:
    """read_run_list_choices_apart() in one query (tests/benchmarks/test_run_list_kept.py
    compares both ways)."""
    run = Run._meta.db_table

    def visible(column: str) -> str:
        return _VISIBLE_VALUES_SQL.format(column=column, run=run)

    sql = _RUN_LIST_CHOICES_SQL.format(
        benchmark=Benchmark._meta.db_table, kernel=Kernel._meta.db_table,
        machine=Machine._meta.db_table, visible_benchmarks=visible("benchmark_id"),
        visible_kernels=visible("kernel_id"), visible_machines=visible("machine_id"),
        visible_policies=visible("policy"),
        unused_benchmarks=_KEEP_UNUSED.format(run=run, column="benchmark_id"),
        unused_machines=_KEEP_UNUSED.format(run=run, column="machine_id"),
        param_names=_PARAM_NAMES_SQL.format(run=run, param=RunParam._meta.db_table),
        no_id="CAST(NULL AS BIGINT)", no_text="CAST(NULL AS TEXT)")
    lists: tuple[list, ...] = ([], [], [], [], [])
    with connection.cursor() as cursor:
        cursor.execute(sql, [0, 0, 0, ""])
        for kind, _, pk, value, label in cursor.fetchall():
            lists[kind].append((value, label) if kind == 0 else (pk, label) if kind == 2
                               else value)
    return RunListChoices(*(tuple(found) for found in lists))


def run_list_kept(*, count: bool, first_page=None) -> tuple:
    """The unfiltered run list's count (with `count`), the filter choices and (with
    `first_page`, a function making it) its first page, kept between changes to the runs and
    names (RunCounts): (count or None, RunListChoices, first page or None)."""
    return run_counts.run_list(count=count, first_page=first_page)


def run_successor(run_id: int, hops: int = 10) -> int | None:
    """The run that replaced a run a reparse removed (following replacements of replacements),
    or None when the run never existed or was deleted for good."""
    for _ in range(hops):
        successor = (RunTombstone.objects.filter(run_id=run_id, successor_id__isnull=False)
                     .order_by("-id").values_list("successor_id", flat=True).first())
        if successor is None:
            return None
        if Run.objects.filter(pk=successor).exists():
            return successor
        run_id = successor
    return None


def calibration_latest(machine: Machine):
    """The machine's newest calibration, or None."""
    return MachineCalibration.objects.filter(machine=machine).newest_first().first()


def calibrated_machines() -> QuerySet:
    """Machines with at least one calibration, for "simulate on machine X"."""
    return (Machine.objects.filter(calibrations__isnull=False).distinct()
            .order_by("name", "id"))


def machines_of_user(user, *, limit: int = 50) -> list[Machine]:
    """The machines a user has put runs on, most recently used first: what an upload preview
    offers in place of "no machine"."""
    if not (user and user.is_authenticated):
        return []
    latest = (Run.objects.filter(submitter=user).values("machine_id")
              .annotate(last=Max("created")).order_by("-last")[:limit])
    order = [row["machine_id"] for row in latest]
    machines = Machine.objects.in_bulk(order)
    return [machines[pk] for pk in order if pk in machines]


def upload_machine_note(*, user, named: str | None) -> dict:
    """For an upload preview: where runs without a machine go, and the user's known machines.
    `machine_name` is None when the upload names its machine."""
    known = [{"id": m.pk, "name": m.name} for m in machines_of_user(user)]
    if named and named != UNKNOWN_MACHINE:
        return {"machine_name": None, "note": "", "your_machines": known}
    name = UNNAMED_MACHINE.format(username=user.get_username())
    note = (f"The upload names no machine: its runs go to your own machine {name!r}. "
            "Choose one of your machines, or name it, to keep them with that machine's runs.")
    return {"machine_name": name, "note": note, "your_machines": known}


def machine_owner_id(machine: Machine) -> int | None:
    """Whose machine it is: the submitter of the first run or calibration put on it (None for
    demo data, or a machine nobody has put data on). Runs others add later, naming the machine,
    do not change it."""
    firsts = [
        queryset.filter(machine=machine).order_by("created", "pk")
        .values_list("created", "submitter_id").first()
        for queryset in (Run.objects.all(), MachineCalibration.objects.all())
    ]
    firsts = [first for first in firsts if first is not None]
    return min(firsts, key=lambda first: first[0])[1] if firsts else None


def may_calibrate(user, machine: Machine) -> bool:
    """Staff; the machine's owner (machine_owner_id); anyone on a machine nobody has put data
    on yet (a harness calibrating a new box, which makes it theirs). Not someone else's machine,
    even after naming it in a run of one's own."""
    if not (user and user.is_authenticated):
        return False
    if user.is_staff:
        return True
    if not (Run.objects.filter(machine=machine).exists()
            or MachineCalibration.objects.filter(machine=machine).exists()):
        return True
    return machine_owner_id(machine) == user.pk


# What each calibration field means, in the order the machine page lists them.
CALIBRATION_FIELDS = (
    ("loop_ns", "ns", "one iteration of the counting loop, counter in a register (-O2)"),
    ("loop_memory_ns", "ns", "the same loop with its counter in memory (volatile, -O0)"),
    ("thread_create_join_us", "µs", "pthread_create + pthread_join of an empty thread"),
    ("wakeup_local_us", "µs", "wakeup of a thread on the same CPU (pipe ping-pong, one way)"),
    ("wakeup_remote_us", "µs", "wakeup of a thread on another CPU (pipe ping-pong, one way)"),
    ("context_switch_us", "µs", "same-CPU context switch (sched_yield between two threads)"),
    ("ipi_us", "µs", "extra cost of waking a busy remote CPU over a local wakeup"),
    ("idle_exit_us", "µs", "extra cost when the remote CPU was idle (bare metal)"),
    ("vcpu_wake_us", "µs", "extra cost when the remote vCPU was halted (the host wakes it)"),
    ("halt_poll_us", "µs", "the host's halt-polling window: a vCPU woken sooner after it "
     "halted is still polling and wakes faster (when not measured, KVM's 200 µs is assumed)"),
    ("contention", "×", "slowdown of a busy CPU per other busy core"),
    ("virtualised", "", "a virtual machine"),
)


def machine_page(machine: Machine) -> dict:
    """The machine page: its runs by benchmark and source, and its calibrations."""
    runs = (Run.objects.visible().filter(machine=machine).values("benchmark__slug", "source")
            .annotate(n=Count("id")).order_by("benchmark__slug", "source"))
    calibrations = list(MachineCalibration.objects.filter(machine=machine)
                        .select_related("submitter").newest_first()[:10])
    latest = calibrations[0] if calibrations else None
    rows = [{"name": name, "unit": unit, "help": text,
             "value": latest.values.get(name) if latest else None}
            for name, unit, text in CALIBRATION_FIELDS]
    quality = (latest.details or {}).get("quality") if latest else None
    return {"run_counts": list(runs), "calibrations": calibrations, "calibration": latest,
            "calibration_rows": rows,
            # calibrate's verdict on itself (docs/calibration.md): the mark and its reasons
            "calibration_noisy": bool(latest and latest.values.get("noisy")),
            "calibration_reasons": (quality or {}).get("reasons") or [] if isinstance(
                quality, dict) else []}

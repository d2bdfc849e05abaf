"""Reads of findings: the filtered list (API, page, feed) and one finding's series."""

from dataclasses import dataclass

from django.db.models import Prefetch, Q, QuerySet

from benchmarks.errors import InputError
from benchmarks.identity.versions import sort_key
from benchmarks.models import Benchmark, Kernel, Machine, Run

from .models import Follow, Regression, Status


@dataclass(frozen=True)
class RegressionFilters:
    benchmark: str = ""
    machine: str = ""
    metric: str = ""
    status: str = ""
    kernel_from: str = ""  # findings whose change lies within [from, to], natural order
    kernel_to: str = ""

    @classmethod
    def from_query(cls, query, *, default_status: str = "") -> "RegressionFilters":
        def text(name):
            value = str(query.get(name, "") or "").strip()[:200]
            if not value.isprintable():  # NUL and friends: PostgreSQL refuses them outright
                raise InputError(f"{name} has control characters", field=name)
            return value
        status = text("status") or default_status
        if status and status not in Status.values and status != "all":
            raise InputError(f"status must be one of {', '.join(Status.values)} or all",
                             field="status")
        return cls(benchmark=text("benchmark"), machine=text("machine"), metric=text("metric"),
                   status="" if status == "all" else status, kernel_from=text("from"),
                   kernel_to=text("to"))


def regressions_list(filters: RegressionFilters, *, merged: bool = False) -> QuerySet:
    """Findings, newest first, with what a list shows: 4 queries however many rows
    (the findings with their series' names, the run ids on each side, their histories).
    Findings merged into another are left out unless `merged`."""
    ids_only = Run.objects.only("id")
    found = Regression.objects.with_list_relations().select_related("last_seen") \
        .prefetch_related(Prefetch("runs_good", queryset=ids_only),
                          Prefetch("runs_bad", queryset=ids_only), "history")
    if not merged:
        found = found.live()
    if filters.benchmark:
        found = found.filter(Q(benchmark__slug=filters.benchmark)
                             | Q(benchmark__name=filters.benchmark))
    if filters.machine:
        machine = filters.machine
        by_id = machine.isascii() and machine.isdigit() and len(machine) < 19
        found = found.filter(machine_id=int(filters.machine)) if by_id else \
            found.filter(machine__name=filters.machine)
    if filters.metric:
        found = found.filter(metric__name=filters.metric)
    if filters.status:
        found = found.filter(status=filters.status)
    if filters.kernel_from:
        found = found.filter(good__sort_key__gte=sort_key(filters.kernel_from))
    if filters.kernel_to:
        found = found.filter(bad__sort_key__lte=sort_key(filters.kernel_to))
    return found.order_by("-created", "-id")


def merge_target(finding: Regression) -> Regression:
    """The finding a merged one now lives in (following merges of merges)."""
    seen = {finding.pk}
    while finding.merged_into_id and finding.merged_into_id not in seen:
        seen.add(finding.merged_into_id)
        finding = Regression.objects.get(pk=finding.merged_into_id)
    return finding


def filter_choices() -> dict:
    """What the page's filter form offers: only names that have findings."""
    having = Regression.objects.values("benchmark_id")
    return {
        "benchmarks": Benchmark.objects.filter(pk__in=having).order_by("slug"),
        "machines": Machine.objects.filter(pk__in=Regression.objects.values("machine_id")),
        "kernels": Kernel.objects.filter(Q(pk__in=Regression.objects.values("good_id"))
                                         | Q(pk__in=Regression.objects.values("bad_id"))),
    }


def follows_of(user) -> dict:
    if not (user and user.is_authenticated):
        return {"benchmarks": set(), "machines": set()}
    rows = Follow.objects.filter(user=user).values_list("benchmark_id", "machine_id")
    return {"benchmarks": {b for b, _ in rows if b}, "machines": {m for _, m in rows if m}}

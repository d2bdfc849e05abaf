"""The comparison spec (docs/api.md, Comparisons), validated into a dataclass with field-named
errors."""

import re
from dataclasses import asdict, dataclass, field

from benchmarks.errors import InputError

STATISTICS = ("median", "mean", "min")
ERRORS = ("stdev", "ci95", "minmax", "none")
X_SCALES = ("linear", "log")
CHARTS = ("line", "bar", "box", "heatmap", "table")
DIMENSION = re.compile(
    r"^(kernel|policy|machine|benchmark|source|label|machine\.(cpus|topology)"
    r"|measured\.(day|week|month)"
    r"|(param|tunable)\.[\w.-]{1,100})$")
FILTER_KEYS = ("benchmark", "kernel", "machine", "policy", "source", "tag")
MAX_RUNS = 5000


class SpecError(InputError):
    """A spec that cannot be compared. `field` names the offending key."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}", field=field_name)


@dataclass
class ComparisonSpec:
    title: str = ""
    runs: list[int] | None = None
    filters: dict = field(default_factory=dict)
    metric: str | None = None
    x: str = "kernel"
    series: str | None = None
    facet: str | None = None
    statistic: str = "median"
    error: str = "stdev"
    baseline: dict | None = None
    x_scale: str = "linear"
    chart: str = "line"

    def as_dict(self) -> dict:
        return asdict(self)

    def dimensions(self) -> list[str]:
        return [d for d in (self.x, self.series, self.facet) if d]


def _choice(data: dict, name: str, allowed: tuple, default: str) -> str:
    value = data.get(name) or default
    if value not in allowed:
        raise SpecError(name, f"{value!r} is not one of {', '.join(allowed)}")
    return value


def _dimension(data: dict, name: str, default: str | None) -> str | None:
    value = data.get(name) or default
    if value is None:
        return None
    if not isinstance(value, str) or not DIMENSION.match(value):
        raise SpecError(
            name, f"{value!r} is not a dimension: use kernel, policy, machine, benchmark, "
            "source, label, machine.cpus, machine.topology, measured.day, measured.week, "
            "measured.month, param.<name> or tunable.<name>")
    return value


def _runs(data: dict) -> list[int] | None:
    runs = data.get("runs")
    if runs is None:
        return None
    if isinstance(runs, str):
        runs = [part for part in re.split(r"[\s,]+", runs) if part]
    if not isinstance(runs, list) or not runs:
        raise SpecError("runs", "must be a non-empty list of run ids")
    try:
        ids = [int(run) for run in runs]
    except (TypeError, ValueError):
        raise SpecError("runs", "every run id must be an integer") from None
    if any(not 0 < run_id < 2**63 for run_id in ids):
        # No row has such an id, and the database cannot even be asked about one past 2**63.
        raise SpecError("runs", "every run id must be a positive integer below 2**63")
    if len(ids) > MAX_RUNS:
        raise SpecError("runs", f"at most {MAX_RUNS} runs in one comparison")
    return list(dict.fromkeys(ids))


def _filters(data: dict) -> dict:
    filters = data.get("filters") or {}
    if not isinstance(filters, dict):
        raise SpecError("filters", "must be an object such as {\"benchmark\": \"threadtest\"}")
    for key, value in filters.items():
        if key not in FILTER_KEYS and not key.startswith("param."):
            raise SpecError("filters", f"unknown filter {key!r}; use {', '.join(FILTER_KEYS)} "
                            "or param.<name>")
        if not isinstance(value, (str, int, float)):
            raise SpecError("filters", f"{key} must be a string or number")
    return {key: str(value) for key, value in filters.items()}


def _baseline(data: dict, dimensions: list[str]) -> dict | None:
    baseline = data.get("baseline")
    if not baseline:
        return None
    if not isinstance(baseline, dict) or set(baseline) != {"dim", "value"}:
        raise SpecError("baseline", "must be {\"dim\": ..., \"value\": ...} or null")
    if baseline["dim"] not in dimensions:
        raise SpecError("baseline", f"dim {baseline['dim']!r} must be one of x, series or facet")
    return {"dim": baseline["dim"], "value": str(baseline["value"])}


def parse_spec(data) -> ComparisonSpec:
    if not isinstance(data, dict):
        raise SpecError("spec", "must be a JSON object")
    title = data.get("title") or ""
    if not isinstance(title, str) or len(title) > 200:
        raise SpecError("title", "must be a string of at most 200 characters")
    metric = data.get("metric")
    if metric is not None and (not isinstance(metric, str) or not metric.strip()):
        raise SpecError("metric", "must be a metric name such as time_ms")
    spec = ComparisonSpec(
        title=title.strip(),
        runs=_runs(data),
        filters=_filters(data),
        metric=metric.strip() if metric else None,
        x=_dimension(data, "x", "kernel"),
        series=_dimension(data, "series", None),
        facet=_dimension(data, "facet", None),
        statistic=_choice(data, "statistic", STATISTICS, "median"),
        error=_choice(data, "error", ERRORS, "stdev"),
        x_scale=_choice(data, "x_scale", X_SCALES, "linear"),
        chart=_choice(data, "chart", CHARTS, "line"),
    )
    # "filters": {} (every filter on "any") is every run; no runs and no filters is a mistake.
    if spec.runs is None and not isinstance(data.get("filters"), dict):
        raise SpecError("runs", "give run ids or filters (an empty {} is every run)")
    if len(set(spec.dimensions())) != len(spec.dimensions()):
        raise SpecError("series", "x, series and facet must be different dimensions")
    spec.baseline = _baseline(data, spec.dimensions())
    return spec

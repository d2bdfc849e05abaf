"""What regressions adds to the core's run page (registered in RegressionsConfig.ready()): the
run's verdicts with their inputs, each with the comparison that reproduces it."""

from benchmarks.hooks import PageSection

from .verdicts import run_page_verdicts


def _row(entry: dict) -> dict:
    if entry["regression"]:
        outcome = "regression"
    elif entry["needs_repeats"]:
        outcome = "needs repeats"
    elif entry.get("p_value") is None and entry.get("summary"):
        outcome = "summary only, no test"
    else:
        outcome = "no regression"
    listed = entry.get("against_runs") or []
    return {**entry, "outcome": outcome, "roles": entry.get("roles") or [entry["role"]],
            "more_runs": max(0, entry.get("against_run_count", len(listed)) - len(listed))}


def run_verdicts_section(run) -> PageSection | None:
    """The verdicts a submission of this run would get now (against the series' oldest and
    previous kernels, or a published table's baseline), or None when there is nothing to
    compare it with."""
    entries = run_page_verdicts(run)
    if not entries:
        return None
    return PageSection("regressions/_run_verdicts.html",
                       {"run": run, "verdicts": [_row(entry) for entry in entries]})

"""Reads of published summaries (models.PublishedSummary) in the run JSON's shape."""

from benchmarks.models import PublishedSummary, Run


def published_metrics(run: Run) -> dict:
    """{metric: {"unit", "higher_is_better", "values": [], "summary": {...}}} of a run's
    published statistics (they have no samples, ever)."""
    # One query on a run's detail: published tables and submitted run JSON both carry them.
    rows = PublishedSummary.objects.filter(run=run).select_related("metric")
    return {
        row.metric.name: {"unit": row.metric.unit,
                          "higher_is_better": row.metric.higher_is_better,
                          "values": [], "summary": row.as_dict()}
        for row in rows
    }


def run_commit(run: Run) -> dict | None:
    """The commit a robot report's column measured: {"id" (as printed), "subject"}."""
    commit = (run.environment or {}).get("commit")
    return commit if isinstance(commit, dict) else None

"""The paste corpus: tests/fixtures/pastes/NNN-name.txt with NNN-name.json beside it.

The JSON holds what a kernel developer would write down by hand from the paste:

    {"format": "results-file",
     "runs": [{"kernel", "benchmark", "params", "labels", "metrics": {name: [values]}}],
     "unassigned": [{"lines": [first, last], "missing": ["kernel"], "metrics": {...}}],
     "upload": {form fields the paste needs, e.g. "kernel" for bare time lines}}

or {"error": {"line": N, "says": "words the refusal must contain"}} for a paste that is refused.
"""

import json
from pathlib import Path

PASTES = Path(__file__).resolve().parents[2] / "fixtures" / "pastes"


def paste_names() -> list[str]:
    return sorted(path.stem for path in PASTES.glob("*.txt"))


def paste_text(name: str) -> str:
    with open(PASTES / f"{name}.txt", encoding="utf-8", newline="") as handle:
        return handle.read()


def expected(name: str) -> dict:
    return json.loads((PASTES / f"{name}.json").read_text(encoding="utf-8"))


def _number(value: float):
    return int(value) if float(value).is_integer() else value


def runs_view(result) -> dict:
    """The parse result in the corpus's shape: sure runs and unassigned blocks, in order."""
    runs, unassigned = [], []
    for result_set in result.results:
        metrics = {name: [_number(v) for v in values]
                   for name, values in result_set.metrics.items()}
        if result_set.missing:
            unassigned.append({
                "lines": [result_set.line, max(result_set.last_line, result_set.line)],
                "missing": list(result_set.missing), "benchmark": result_set.benchmark,
                "params": dict(result_set.params), "metrics": metrics})
        else:
            runs.append({"kernel": result_set.kernel, "benchmark": result_set.benchmark,
                         "params": dict(result_set.params), "labels": dict(result_set.labels),
                         "metrics": metrics})
    return {"format": result.format, "runs": runs, "unassigned": unassigned}

"""Summary statistics of a run's samples. Plain Python so any layer can use it."""

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    median: float
    stdev: float | None  # sample standard deviation; None with fewer than two samples
    minimum: float
    maximum: float

    @property
    def cv(self) -> float | None:
        if self.stdev is None or self.mean == 0:
            return None
        return self.stdev / abs(self.mean)


def summarize(values: Sequence[float]) -> Summary:
    if not values:
        raise ValueError("cannot summarise an empty sample")
    finite = [float(v) for v in values]
    if not all(math.isfinite(v) for v in finite):
        raise ValueError("samples must be finite numbers")
    return Summary(
        n=len(finite),
        mean=statistics.fmean(finite),
        median=statistics.median(finite),
        stdev=statistics.stdev(finite) if len(finite) > 1 else None,
        minimum=min(finite),
        maximum=max(finite),
    )

"""Summary statistics of a run's samples."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


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
    """n, mean, median, sample stdev, min, max. An array('d') is read without copying it."""
    data = np.frombuffer(values, dtype=np.float64) if _is_double_array(values) else np.asarray(
        values, dtype=np.float64
    )
    if data.size == 0:
        raise ValueError("cannot summarise an empty sample")
    if not np.isfinite(data).all():
        raise ValueError("samples must be finite numbers")
    return Summary(
        n=int(data.size),
        mean=float(data.mean()),
        median=float(np.median(data)),
        stdev=float(data.std(ddof=1)) if data.size > 1 else None,
        minimum=float(data.min()),
        maximum=float(data.max()),
    )


def _is_double_array(values) -> bool:
    return getattr(values, "typecode", None) == "d"

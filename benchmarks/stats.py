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
        median=median(data),
        stdev=float(data.std(ddof=1)) if data.size > 1 else None,
        minimum=float(data.min()),
        maximum=float(data.max()),
    )


SMALL = 2_000_000
BLOCK = 1_000_000


def median(data: np.ndarray) -> float:
    """The exact median, without copying a large sample.

    np.median copies its input; for tens of millions of samples that doubles the memory of an
    upload. Instead: bracket the median using a strided subsample, count what lies below the
    bracket, sort only what lies inside it, and fall back to np.median if the bracket missed.
    """
    n = data.size
    if n <= SMALL:
        return float(np.median(data))
    low, high = np.quantile(data[:: max(1, n // 100_000)], [0.4, 0.6])
    below, inside = 0, []
    for start in range(0, n, BLOCK):
        block = data[start:start + BLOCK]
        below += int(np.count_nonzero(block < low))
        inside.append(block[(block >= low) & (block <= high)])
    middle = np.sort(np.concatenate(inside))
    wanted = [(n - 1) // 2 - below, n // 2 - below]
    if not all(0 <= k < middle.size for k in wanted):
        return float(np.median(data))
    return float((middle[wanted[0]] + middle[wanted[1]]) / 2)


def _is_double_array(values) -> bool:
    return getattr(values, "typecode", None) == "d"

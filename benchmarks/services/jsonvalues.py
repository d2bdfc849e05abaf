"""What a stored JSON value (params, tunables, environment, series) may contain.

PostgreSQL's jsonb refuses `\\u0000` and text that is not UTF-8, strict JSON has no NaN or
Infinity, and an integer beyond the float range breaks every statistic that reads it. Each of
these used to surface as a server error after the request had been accepted; refused here, the
user gets a 400 naming the field instead.
"""

import math

from benchmarks.errors import InputError

# Samples beyond this would overflow the variance (squares of differences) to infinity.
MAX_SAMPLE_MAGNITUDE = 1e150


def text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode text (a lone surrogate)"
    return None


def number_problem(number) -> str | None:
    if isinstance(number, bool):
        return None
    if isinstance(number, int):
        try:
            float(number)
        except OverflowError:
            return "is an integer too large to use as a number"
        return None
    if isinstance(number, float) and not math.isfinite(number):
        return f"is {number!r}: not finite"
    return None


def _where(field: str, key) -> str:
    return f"{field}[{key}]" if isinstance(key, int) else f"{field}.{key}"


def json_value_check(value, *, field: str, error: type[InputError] = InputError) -> None:
    """Raise `error` naming the first place in `value` that cannot be stored."""
    pending = [(field, value)]
    while pending:
        where, item = pending.pop()
        if isinstance(item, str):
            problem = text_problem(item)
        elif isinstance(item, dict):
            problem = None
            for key, child in item.items():
                key_problem = text_problem(key) if isinstance(key, str) else None
                if key_problem:
                    raise error(f"{where}: a key {key_problem}", field=where)
                pending.append((_where(where, key), child))
        elif isinstance(item, (list, tuple)):
            problem = None
            pending.extend((_where(where, index), child) for index, child in enumerate(item))
        else:
            problem = number_problem(item)
        if problem:
            raise error(f"{where} {problem}", field=where)


def sample_problem(value) -> str | None:
    """Why a metric sample cannot be stored, or None."""
    problem = number_problem(value)
    if problem:
        return problem
    if abs(value) > MAX_SAMPLE_MAGNITUDE:
        return f"is beyond ±{MAX_SAMPLE_MAGNITUDE:g}, where statistics overflow"
    return None

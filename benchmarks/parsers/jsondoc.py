"""Reading JSON documents from a stream of lines, with errors that name a line."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable

from .base import ParseError, Warnings, clean_line, is_quoted


def read_document(lines: Iterable, warnings: Warnings):
    """The one JSON value in `lines`. JSON has no streaming form in the standard library, so the
    text is held once; quoted mail lines are dropped first."""
    pieces: list[str] = []
    for lineno, raw in enumerate(lines, 1):
        text = clean_line(raw, lineno)
        if is_quoted(text):
            warnings.add(lineno, "skipped quoted line")
            text = ""  # keep the line so JSON error positions stay right
        pieces.append(text)
    return loads("\n".join(pieces), first_line=1)


def loads(text: str, *, first_line: int):
    if not text.strip():
        raise ParseError("empty input", line=None)
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ParseError as exc:  # from _reject_constant, which cannot know the line
        raise ParseError(exc.message, line=first_line) from None
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg}", line=first_line + exc.lineno - 1) from None
    except ValueError as exc:  # e.g. an integer literal too long to convert
        raise ParseError(f"invalid JSON: {exc}", line=first_line) from None
    except RecursionError:
        raise ParseError("JSON nested too deeply", line=first_line) from None


def _reject_constant(name: str):
    raise ParseError(f"{name} is not a number we can store")


def expect(value, kind, what: str, line: int | None):
    """`value` if it is of type `kind`, else a ParseError naming `what`."""
    if kind is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool) and _finite(value)
    else:
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise ParseError(f"{what} must be {_KIND_NAMES.get(kind, kind)}, "
                         f"got {type(value).__name__}", line=line)
    return value


def _finite(value) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond float range
        return False


_KIND_NAMES = {float: "a number", dict: "an object", list: "a list", str: "a string",
               int: "an integer"}


def scalar_dict(value, what: str, line: int | None) -> dict:
    """params / tunables: an object of numbers, strings or booleans (None allowed as empty)."""
    if value is None:
        return {}
    expect(value, dict, what, line)
    for key, item in value.items():
        if not isinstance(item, str | int | float | bool) or (
                isinstance(item, float) and not math.isfinite(item)):
            raise ParseError(f"{what}[{key!r}] must be a number or a string", line=line)
    return dict(value)

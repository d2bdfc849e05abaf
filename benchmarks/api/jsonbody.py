"""Reading JSON from requests: strict (no NaN or Infinity) and bounded in depth.

Python's json reads NaN and Infinity, which strict JSON has not, and recurses once per level of
nesting: a body of 100,000 `[` ends in a RecursionError (a 500) inside the parser, or, a little
shallower, in whatever walks the value afterwards. Every JSON the API reads (request bodies,
NDJSON lines, the JSON-in-a-form-field of uploads) goes through `strict_loads`, which first
counts the nesting without parsing and refuses more than MAX_DEPTH levels with a 400.
"""

import itertools
import json

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from benchmarks.errors import InputError

MAX_DEPTH = 32  # docs/api.md states it; the deepest real body (a run's series) has 4 levels

_NOT_BRACKETS = bytes(range(256)).translate(None, b"[]{}")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def nesting_depth(raw: bytes | str) -> int:
    """How deeply arrays and objects nest in `raw` (brackets inside strings do not count).
    Only bytes methods, no regular expression and no loop in Python: linear and fast on a body
    of many megabytes, whatever it holds."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:  # the usual body: nothing to count
        return 0
    # Escaped backslashes, then escaped quotes, go first: every quote left opens or closes a
    # string, so every other piece between quotes is outside the strings.
    unescaped = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(unescaped.split(b'"')[::2])
    steps = outside.translate(_STEPS, _NOT_BRACKETS)
    # +1 per opening, -1 per closing bracket (signed bytes): the deepest point is the largest
    # running sum
    return max(itertools.accumulate(memoryview(steps).cast("b")), default=0)


def depth_check(raw: bytes | str, *, what: str = "the JSON body", field: str | None = None,
                line: int | None = None) -> None:
    if nesting_depth(raw) > MAX_DEPTH:
        raise InputError(f"{what} nests arrays and objects deeper than {MAX_DEPTH} levels",
                         field=field, line=line)


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number in strict JSON")


def strict_loads(raw: bytes | str, *, what: str = "the JSON body", field: str | None = None,
                 line: int | None = None):
    """json.loads, strict and depth-checked; any problem is an InputError naming `what`."""
    depth_check(raw, what=what, field=field, line=line)
    try:
        return json.loads(raw, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"{what} is not valid JSON: {exc.msg} at column {exc.colno}",
                         field=field, line=line) from None
    except (ValueError, RecursionError) as exc:  # NaN, Infinity; bytes that are not UTF-8
        raise InputError(f"{what} is not valid JSON: {exc}", field=field, line=line) from None


class DepthLimitedJSONParser(JSONParser):
    """DRF's JSON parser behind the depth check: a body nested deeper than MAX_DEPTH is a 400
    before it is parsed. Everything else is DRF's (strict constants, its messages)."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        if nesting_depth(raw) > MAX_DEPTH:
            raise ParseError(f"the JSON body nests arrays and objects deeper than {MAX_DEPTH} "
                             "levels")
        try:
            return json.loads(raw, parse_constant=_refuse_constant)
        except (ValueError, RecursionError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from None

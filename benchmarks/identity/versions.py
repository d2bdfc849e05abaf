"""Natural ordering of kernel version strings.

People name kernels by their `uname -r` string: `2.6.24-git19`, `2.6.22.17-cfs-v24.1-smp`,
`2.6.25-rc1`. We keep the string verbatim and derive a sort key that orders them as versions:

    2.6.9 < 2.6.22 < 2.6.24-rc1 < 2.6.24 < 2.6.24-git19 < 2.6.24.1 < 2.6.25

The key is a plain string of digits and lower-case letters only, so the database orders it the
same way Python does under any collation (PostgreSQL's locale collations ignore punctuation on the
first pass, which would break a key built with dots or dashes). Anything that does not start with
a version number still gets a key: it sorts after every parsable version, by its bytes.
"""

import re

_WIDTH = 9
_MAX = 10**_WIDTH - 1
_VERSION = re.compile(r"^(?:linux-|v)?(\d+(?:\.\d+)*)(.*)$", re.IGNORECASE | re.DOTALL)
_STAGE = re.compile(r"^-(rc)(\d+)(?:-git(\d+))?|^-(git)(\d+)", re.IGNORECASE)

# Markers are chosen so that a version that stops ("b") sorts before one with another component
# ("c"), and a release candidate ("a") before the release ("b") before a git snapshot ("c").
_COMPONENT, _END = "c", "b"
_RC, _RELEASE, _SNAPSHOT = "a", "b", "c"
_FLAVOUR = "x"
_PARSABLE, _UNPARSABLE = "0", "1"


def _number(text: str) -> str:
    return str(min(int(text), _MAX)).zfill(_WIDTH)


def _hex(text: str) -> str:
    # Hex of the UTF-8 bytes keeps byte order and uses only [0-9a-f].
    return text.encode("utf-8", "surrogatepass").hex()


def _stage(rest: str) -> tuple[str, str]:
    """Split `-rc3-git2-smp` into (stage key, leftover flavour `-smp`)."""
    match = _STAGE.match(rest)
    if not match:
        return _RELEASE, rest
    if match.group(1):
        git = match.group(3)
        after_rc = _SNAPSHOT + _number(git) if git else _RELEASE
        return _RC + _number(match.group(2)) + after_rc, rest[match.end():]
    return _SNAPSHOT + _number(match.group(5)), rest[match.end():]


def sort_key(version: str) -> str:
    """A string whose plain ordering is the natural ordering of kernel versions."""
    match = _VERSION.match(version.strip())
    if not match:
        return _UNPARSABLE + _hex(version)
    numbers, rest = match.groups()
    key = "".join(_COMPONENT + _number(part) for part in numbers.split(".")) + _END
    stage, flavour = _stage(rest)
    key += stage
    if flavour:
        key += _FLAVOUR + _hex(flavour)
    return _PARSABLE + key


def numeric_parts(version: str) -> tuple[int, ...]:
    """The leading numeric components (`2.6.24.1-smp` -> (2, 6, 24, 1)); () if none."""
    match = _VERSION.match(version.strip())
    if not match:
        return ()
    return tuple(int(part) for part in match.group(1).split("."))


def scheduler_family(version: str) -> str:
    """Best guess of the scheduler a kernel string runs; patches named in it win."""
    lowered = version.lower()
    for marker, family in (
        ("eevdf", "eevdf"),
        ("bfs", "bfs"),
        ("muqss", "bfs"),
        ("-ck", "bfs"),
        ("rsdl", "rsdl"),
        ("-sd", "rsdl"),
        ("cfs", "cfs"),
    ):
        if marker in lowered:
            return family
    parts = numeric_parts(version) + (0, 0, 0)
    major, minor, patch = parts[:3]
    if not any(parts):
        return "unknown"
    if (major, minor) < (2, 6):
        return "goodness"
    if (major, minor) == (2, 6) and patch <= 22:
        return "o1"
    if (major, minor) < (6, 6):
        return "cfs"
    return "eevdf"

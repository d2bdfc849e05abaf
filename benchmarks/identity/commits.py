"""Commit ids: the one a kernel string carries, and the shape of a commit a user types.

A kernel built from a git tree with CONFIG_LOCALVERSION_AUTO reports its commit in `uname -r`:
`6.8.0-rc3-00042-gabcdef123456` (42 commits after v6.8-rc3, at abcdef123456), with `-dirty`
when the tree had local changes. The harness has its own copy of this rule (it must stay
stdlib-only and standalone); tests/harness checks both agree.
"""

import re

_DESCRIBED = re.compile(r"(?:^|[-+.~_])g([0-9a-f]{7,40})(?=$|[-+.~_])")
_DIRTY = re.compile(r"-dirty(?:$|[-+.~_])")
# What a user may give as a commit: an abbreviated or full sha, or a ref such as v6.8-rc3.
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+~^-]{0,99}$")
_SHA = re.compile(r"^[0-9a-f]{7,40}$")


def kernel_commit(version: str) -> str | None:
    """The commit id in a kernel release string, or None (`2.6.24`, `6.8.0-rc3+`)."""
    found = _DESCRIBED.findall(version or "")
    return found[-1] if found else None


def kernel_dirty(version: str) -> bool:
    return bool(_DIRTY.search(version or ""))


def is_ref(text: str) -> bool:
    """A commit id or ref name `git bisect good|bad` would take (no spaces, no options)."""
    return bool(_REF.match(text or "")) and ".." not in text and not text.endswith(".lock")


def is_sha(text: str) -> bool:
    return bool(_SHA.match(text or ""))


def same_commit(a: str, b: str) -> bool:
    """Equal refs, or one sha an abbreviation of the other (both at least 7 hex digits)."""
    if not a or not b:
        return False
    if a == b:
        return True
    return is_sha(a) and is_sha(b) and (a.startswith(b) or b.startswith(a))


def kernel_ref(version: str) -> str:
    """What to call a kernel in a `git bisect` command: its commit, else its release tag
    (`2.6.24-rc1` -> `v2.6.24-rc1`, as in Linus' tree), else the string itself."""
    commit = kernel_commit(version)
    if commit:
        return commit
    match = re.match(r"^v?(\d+\.\d+(?:\.\d+)?(?:-rc\d+)?)", version or "")
    if not match:
        return version
    tag = match.group(1)
    # Linus tags 3.x and later without a trailing .0 (v6.8, not v6.8.0).
    parts = tag.split("-")[0].split(".")
    if len(parts) == 3 and parts[2] == "0" and int(parts[0]) >= 3:
        tag = ".".join(parts[:2]) + tag[len(tag.split("-")[0]):]
    return "v" + tag

"""Kernel headings as people write them above their numbers.

    2.6.22.17:                              -> kernel 2.6.22.17
    2.6.26-rc2-smp (git from this morning)  -> kernel 2.6.26-rc2-smp, remark "git from this morning"
    2.6.24-rc7 + sched-devel:               -> kernel "2.6.24-rc7 + sched-devel"
    v6.8 (baseline)                         -> kernel v6.8, remark "baseline"
    tip + patch                             -> kernel "tip + patch" (a tree, not a version)
    Kernel 2.6.24:                          -> kernel 2.6.24

A remark in parentheses or brackets describes the run (it becomes its label); a `+ patch` suffix
names a different kernel, so it stays part of the kernel string and never pools with the bare
version. Anything else on the line (two kernels, prose) means the line is not a heading.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# A `uname -r` string (2.6.24, 2.6.24-git19, 6.6-eevdf) or a git tag (v6.8): a bare "2.6" alone
# on a line is more likely a number, so it needs a third component, a suffix or the `v`.
_VERSION = (r"(?:\d+\.\d+(?:\.\d+)+(?:[-_~][\w.~-]*)?"
            r"|\d+\.\d+[-_~][\w.~-]+"
            r"|v\d+\.\d+(?:\.\d+)*(?:[-_~][\w.~-]*)?"
            r"|linux-\d+\.\d+(?:\.\d+)*(?:[-_~][\w.~-]*)?"
            # Trees people name instead of a version (the -tip tree, mainline, linux-next).
            r"|tip|mainline|linux-next|next-\d{8})")
_PATCH = r"[A-Za-z0-9][\w.~/-]*"
KERNEL_NAME_RE = re.compile(rf"{_VERSION}(?:\s*\+\s*{_PATCH})*")
_PREFIX_RE = re.compile(r"(?:kernel|linux)\s*:?\s+", re.I)
_REMARK_RE = re.compile(r"\(([^()]*)\)|\[([^\[\]]*)\]")
_BLANKS_RE = re.compile(r"\s+")


class Heading(NamedTuple):
    kernel: str
    remark: str | None = None


MAX_KERNEL = 200  # characters in a kernel name (Kernel.version)


def parse_heading(text: str) -> Heading | None:
    """The kernel (and remark) a heading line names, or None when the line is not one."""
    text = text.strip()
    if not text or len(text) > MAX_KERNEL:
        return None
    return _parse(text)


def too_long_heading(text: str) -> int | None:
    """The length of the kernel a heading line would name, when that is over MAX_KERNEL: such a
    line must be refused where it stands (at preview), not fall through as prose and leave its
    numbers without a kernel. None for any other line."""
    text = text.strip()
    if len(text) <= MAX_KERNEL or len(text) > 100_000:
        return None
    heading = _parse(text)
    return len(heading.kernel) if heading and len(heading.kernel) > MAX_KERNEL else None


def _parse(text: str) -> Heading | None:
    first_remark = _REMARK_RE.search(text)
    if first_remark and not any(char.isdigit() for char in text[:first_remark.start()]):
        return None  # "(baseline) 2.6.24": a remark before the kernel is not a shape we know
    remarks = [(match.group(1) or match.group(2) or "").strip()
               for match in _REMARK_RE.finditer(text)]
    bare = _REMARK_RE.sub(" ", text).strip()
    bare = bare.rstrip(":").rstrip()  # "2.6.24:" and "2.6.24 (note):" alike
    prefix = _PREFIX_RE.match(bare)
    if prefix:
        bare = bare[prefix.end():]
    bare = _BLANKS_RE.sub(" ", bare)
    if not KERNEL_NAME_RE.fullmatch(bare):
        return None
    return Heading(bare, "; ".join(r for r in remarks if r) or None)


def kernel_name(text: str) -> str | None:
    """The kernel a bare name (a table column, a sweep row's first part) stands for, or None."""
    heading = parse_heading(text)
    return heading.kernel if heading and heading.remark is None else None

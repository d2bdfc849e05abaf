"""Reading and writing `git bisect log` text.

What git writes (modern git; older git has no `# status:` lines and no marks for the start
arguments):

    git bisect start 'v6.8' 'v6.7'
    # status: waiting for both good and bad commits
    # bad: [e8f897f4afef0031fe618a8e94127a0934896aba] Linux 6.8
    git bisect bad e8f897f4afef0031fe618a8e94127a0934896aba
    # status: waiting for good commit(s), bad commit known
    # good: [0dd3ee31125508cd67f7e7172247f05b7fd1753a] Linux 6.7
    git bisect good 0dd3ee31125508cd67f7e7172247f05b7fd1753a
    # bad: [1a2b3c4d...] sched/fair: ...
    git bisect bad 1a2b3c4d...
    # first bad commit: [1a2b3c4d...] sched/fair: ...

Marks made while git still waits for a good or a bad commit set the range; later ones are the
steps. Anything else is refused with its line number, so a truncated or mangled paste is never
half-read.
"""

import re
import shlex
from dataclasses import dataclass, field

from benchmarks.errors import InputError
from benchmarks.identity.commits import is_ref

from .estimate import read_estimate

MAX_LOG_CHARS = 200_000
_COMMENT = re.compile(r"^#\s*(good|bad|skip|old|new|first bad commit|possible first bad commit|"
                      r"[a-z][\w-]*)\s*:\s*\[([^\]\s]{1,100})\]\s?(.*)$")
_STATUS = re.compile(r"^#\s*status\s*:")
_COMMAND = re.compile(r"^git\s+bisect\s+(\S+)(.*)$")
# What git prints around the log when a terminal session is pasted instead of the log.
_BISECTING = re.compile(r"^Bisecting:\s+\d+\s+revisions?\s+left", re.IGNORECASE)
_CHECKED_OUT = re.compile(r"^\[[0-9a-f]{7,40}\]\s")
_FIRST_BAD = re.compile(r"^([0-9a-f]{7,40}) is the first bad commit$")



class BisectLogError(InputError):
    """A pasted `git bisect log` that does not parse; `line` is the 1-based line to blame."""

    def __init__(self, message: str, *, line: int | None = None):
        where = f"line {line}: " if line else ""
        super().__init__(f"the bisect log does not parse: {where}{message}", field="log",
                         line=line)


@dataclass
class Mark:
    verdict: str  # good | bad | skip
    commit: str
    line: int
    subject: str = ""


@dataclass
class BisectLog:
    bad: str = ""  # the bad end of the range (a sha or a ref)
    good: list[str] = field(default_factory=list)
    steps: list[Mark] = field(default_factory=list)
    first_bad: str = ""
    first_bad_subject: str = ""
    subjects: dict[str, str] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)
    # From a pasted terminal session: git's last "Bisecting: N revisions left to test after
    # this (roughly K steps)" as (revisions, steps, good/bad steps marked before it).
    estimate: tuple[int | None, int, int] | None = None

    @property
    def range_known(self) -> bool:
        return bool(self.bad and self.good)


@dataclass
class _Reader:
    log: BisectLog = field(default_factory=BisectLog)
    terms: dict[str, str] = field(default_factory=lambda: {
        "good": "good", "bad": "bad", "old": "good", "new": "bad", "skip": "skip"})
    status_lines: bool = False
    waiting: bool = False  # a `# status:` line came since the last mark
    started: bool = False
    good_from_start: bool = False  # modern git then marks them again, as commit ids


def _start(reader: _Reader, rest: str, number: int) -> None:
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise BisectLogError(f"cannot read the start arguments ({exc})", line=number) from None
    refs, paths = [], []
    for position, word in enumerate(words):
        if word == "--":
            paths = words[position + 1:]
            break
        if word.startswith("--term-"):
            name, _, value = word[len("--term-"):].partition("=")
            if name not in ("good", "old", "bad", "new") or not value:
                raise BisectLogError(f"unknown start option {word!r}", line=number)
            reader.terms[value] = "good" if name in ("good", "old") else "bad"
        elif word.startswith("--"):
            continue  # --no-checkout, --first-parent: no bearing on the range
        elif not is_ref(word):
            raise BisectLogError(f"{word!r} is not a commit", line=number)
        else:
            refs.append(word)
    reader.started = True
    reader.log.paths = paths
    if refs:
        reader.log.bad, reader.log.good = refs[0], refs[1:]
        reader.good_from_start = bool(refs[1:])


def _mark(reader: _Reader, verdict: str, commits: list[str], number: int) -> None:
    if not commits:
        raise BisectLogError(f"`git bisect {verdict}` without a commit", line=number)
    log = reader.log
    for commit in commits:
        if not is_ref(commit):
            raise BisectLogError(f"{commit!r} is not a commit", line=number)
        sets_range = reader.waiting if reader.status_lines else not log.range_known
        if verdict != "skip" and sets_range:
            if verdict == "bad":
                log.bad = commit
            elif reader.good_from_start:
                log.good, reader.good_from_start = [commit], False
            elif commit not in log.good:
                log.good.append(commit)
        else:
            log.steps.append(Mark(verdict, commit, number, log.subjects.get(commit, "")))
    reader.waiting = False


def _comment(reader: _Reader, text: str) -> None:
    if _STATUS.match(text):
        reader.status_lines = reader.waiting = True
        return
    match = _COMMENT.match(text)
    if not match:
        return  # git writes other remarks too ("# only skipped commits left to test")
    kind, commit, subject = match.group(1), match.group(2), match.group(3).strip()
    reader.log.subjects[commit] = subject[:300]
    if kind == "first bad commit":
        reader.log.first_bad, reader.log.first_bad_subject = commit, subject[:300]


def _terminal_line(reader: _Reader, line: str) -> bool:
    """git's own output, when a terminal session was pasted: the estimate and the end count,
    the `[sha] subject` of the commit checked out is skipped."""
    if _BISECTING.match(line):
        revisions, steps = read_estimate(line, field="log")
        decided = sum(1 for m in reader.log.steps if m.verdict != "skip")
        reader.log.estimate = (revisions, steps, decided)
        return True
    match = _FIRST_BAD.match(line)
    if match:
        reader.log.first_bad = match.group(1)
        reader.log.first_bad_subject = reader.log.subjects.get(match.group(1), "")
        return True
    return bool(_CHECKED_OUT.match(line))


def parse_bisect_log(text: str) -> BisectLog:
    """The range, steps and end of a `git bisect log`; BisectLogError names the bad line."""
    if not isinstance(text, str):
        raise InputError("log must be the text of `git bisect log`", field="log")
    if len(text) > MAX_LOG_CHARS:
        raise InputError(f"the bisect log is longer than {MAX_LOG_CHARS} characters",
                         field="log")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError("the bisect log is not valid Unicode text (a lone surrogate)",
                         field="log") from None
    reader, seen_command = _Reader(), False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if "\x00" in line:
            raise BisectLogError("contains a NUL character", line=number)
        if line.startswith("#"):
            _comment(reader, line)
            continue
        if _terminal_line(reader, line):
            continue
        match = _COMMAND.match(line)
        if not match:
            shown = line if len(line) <= 60 else line[:57] + "..."
            raise BisectLogError(f"expected `git bisect ...` or a `#` comment, got {shown!r}",
                                 line=number)
        seen_command = True
        command, rest = match.group(1), match.group(2)
        if command == "start":
            if reader.started:
                raise BisectLogError("a second `git bisect start`: paste one session",
                                     line=number)
            _start(reader, rest, number)
        elif command in reader.terms:
            _mark(reader, reader.terms[command], rest.split(), number)
        else:
            raise BisectLogError(f"unknown command `git bisect {command}`", line=number)
    if not seen_command:
        raise BisectLogError("no `git bisect` lines found (paste the output of "
                             "`git bisect log`)")
    return reader.log


def _quoted(ref: str) -> str:
    return "'" + ref.replace("'", "'\\''") + "'"


def render_bisect_log(*, bad: str, good: str, bad_subject: str, good_subject: str,
                      steps: list[tuple[str, str, str]], first_bad: str = "",
                      first_bad_subject: str = "") -> str:
    """A `git bisect log` in modern git's layout; `steps` is [(verdict, commit, subject)].
    `git bisect replay` accepts it, and parse_bisect_log reads it back to the same session."""
    lines = [f"git bisect start {_quoted(bad)} {_quoted(good)}",
             "# status: waiting for both good and bad commits",
             f"# bad: [{bad}] {bad_subject}".rstrip(), f"git bisect bad {bad}",
             "# status: waiting for good commit(s), bad commit known",
             f"# good: [{good}] {good_subject}".rstrip(), f"git bisect good {good}"]
    for verdict, commit, subject in steps:
        lines += [f"# {verdict}: [{commit}] {subject}".rstrip(), f"git bisect {verdict} {commit}"]
    if first_bad:
        lines.append(f"# first bad commit: [{first_bad}] {first_bad_subject}".rstrip())
    return "\n".join(lines) + "\n"

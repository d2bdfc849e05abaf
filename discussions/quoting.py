"""How people quote in mail: `>` lines, attribution lines, `-- ` signatures. Shared by the
renderer (which folds quotes) and the extractor (which must ignore them)."""

import re

QUOTE_RE = re.compile(r"^ {0,2}>")
QUOTE_LEVEL_RE = re.compile(r"^ {0,2}> ?")
ATTRIBUTION_RES = [
    # On Mon, 11 Feb 2008, Olof Example wrote:  /  * Ingo Molnar <mingo@elte.hu> wrote:
    re.compile(r"^\s*(?:\*\s*)?(?:On\s.{3,120},\s*)?(?P<who>[^,:>]{1,120}?(?:<[^<>\s]+>)?)"
               r"\s+(?:wrote|writes|said)\s*:\s*$", re.I),
    # Quoting Olof Example (olof@example.org):
    re.compile(r"^\s*Quoting\s+(?P<who>[^()]{1,120}?)\s*(?:\([^()]*\))?\s*:\s*$", re.I),
]
EMAIL_IN_NAME_RE = re.compile(r"\s*<[^<>]*>\s*|\s*\([^()]*@[^()]*\)\s*")


def is_quote(line: str) -> bool:
    return QUOTE_RE.match(line) is not None


def unquote_once(line: str) -> str:
    return QUOTE_LEVEL_RE.sub("", line, count=1)


def is_signature_separator(line: str) -> bool:
    return line in ("-- ", "--")


def attribution_author(line: str) -> str | None:
    """The quoted author's name when `line` is an attribution line, else None."""
    # Both patterns end in a colon (then only whitespace), and most lines do not: one string
    # test spares them the two searches (rstrip() strips what the patterns' \s matches).
    if len(line) > 300 or not line.rstrip().endswith(":"):
        return None
    return attribution_by_patterns(line)


def attribution_by_patterns(line: str) -> str | None:
    """attribution_author without its shortcut: every line through the patterns."""
    if len(line) > 300 or is_quote(line):
        return None
    for pattern in ATTRIBUTION_RES:
        match = pattern.match(line)
        if match:
            who = EMAIL_IN_NAME_RE.sub(" ", match.group("who")).strip(" \"'*")
            if who.lower().startswith("on "):  # "On 2008-02-11 Peter Zijlstra wrote:"
                who = " ".join(who.split()[-2:])
            return who or match.group("who").strip("<> ")
    return None


def own_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of what the writer wrote: no quotes, attributions or signature.

    Quoted lines become blank lines, so a table someone quoted never merges with the writer's
    own table around it; numbering stays that of the full body.
    """
    kept = []
    for number, line in enumerate(text.split("\n"), 1):
        if is_signature_separator(line):
            break
        if is_quote(line) or attribution_author(line) is not None:
            kept.append((number, ""))
        else:
            kept.append((number, line))
    return kept


def quote_for_reply(*, author: str, date, body: str) -> str:
    """The parent's text pre-quoted under an attribution line, as mail clients do."""
    lines = (body or "").rstrip("\n").split("\n")
    signature = next((i for i, line in enumerate(lines) if is_signature_separator(line)), None)
    if signature is not None:
        lines = lines[:signature]  # nobody quotes a signature back
    quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in lines)
    return f"On {date:%a, %d %b %Y %H:%M}, {author} wrote:\n{quoted}\n\n"

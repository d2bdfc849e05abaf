"""The mbox import's shortcuts give exactly what the plain code gives.

Each shortcut (extraction's whole-message check asking only the published formats' detectors,
the per-paragraph detection cache, the attribution and URL pre-checks of the renderer) is run
beside its plain version over every fixture text, as a mail body, quoted, forwarded, between
prose and mutated many ways, and the outputs are compared whole.
"""

import random
from pathlib import Path

import pytest

from discussions import extraction, quoting, render
from discussions.importer import ImportReport, _own_texts, _read_messages

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
MAX_FIXTURE_BYTES = 200_000
MAX_CHARS = 12_000  # longer fixtures are cut at a line: mail tables are short, tests are not


def _fixture_texts() -> list[tuple[str, str, str]]:
    """(name, subject, text) of every text fixture; mbox files give one per message."""
    found = []
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file() or path.suffix == ".py" or path.stat().st_size > MAX_FIXTURE_BYTES:
            continue
        data = path.read_bytes()
        if b"\x00" in data[:4096]:
            continue
        name = str(path.relative_to(FIXTURES))
        if path.suffix == ".mbox":
            for message in _read_messages(data, ImportReport()):
                found.append((f"{name}#{message.position}", message.subject,
                              _own_texts(message)))
            continue
        text = data.decode("utf-8", errors="replace")
        if len(text) > MAX_CHARS:
            text = text[:text.rfind("\n", 0, MAX_CHARS) + 1 or MAX_CHARS]
        found.append((name, "", text))
    return found


def _mutations(text: str, rng: random.Random) -> list[str]:
    """The text as people mangle it: lines dropped, doubled, quoted, wrapped in prose,
    blank lines added or removed, digits changed, cut short."""
    lines = text.split("\n")
    out = []
    for _ in range(6):
        mutated = list(lines)
        for _ in range(rng.randint(1, 4)):
            if not mutated:
                break
            at = rng.randrange(len(mutated))
            kind = rng.randrange(8)
            if kind == 0:
                del mutated[at]
            elif kind == 1:
                mutated.insert(at, mutated[at])
            elif kind == 2:
                mutated[at] = "> " + mutated[at]
            elif kind == 3:
                mutated.insert(at, "")
            elif kind == 4:
                mutated = [line for line in mutated if line.strip()] or mutated
            elif kind == 5:
                mutated[at] = "".join(str(rng.randrange(10)) if c.isdigit() else c
                                      for c in mutated[at])
            elif kind == 6:
                mutated.insert(at, rng.choice(["On 2.6.24 I get:", "Thanks,", "Jan wrote:",
                                               "and with the patch applied (2.6.25-rc1):"]))
            else:
                mutated = mutated[:at]
        out.append("\n".join(mutated))
    return out


def _variants(text: str, rng: random.Random) -> list[tuple[str, str]]:
    quoted = "\n".join(f"> {line}" for line in text.split("\n"))
    return [
        ("", text),
        ("Re: numbers on 2.6.24", f"Hi,\n\nhere is what I see:\n\n{text}\n\nThanks,\nJan\n"),
        ("Fwd: results", f"Forwarding:\n\n{quoted}\n"),
        ("", f"---------- Forwarded message ----------\n{quoted}\n"),
        ("", f"Ingo Example wrote:\n{quoted}\n\nSame here.\n"),
        *(("", mutated) for mutated in _mutations(text, rng)),
    ]


def _generated_messages(rng: random.Random) -> list[tuple[str, str]]:
    """Mail-like bodies built from pieces: prose, kernels, tables of several formats."""
    pieces = ["Hi,", "Thanks,", "On 2.6.24 with loops=1000:", "2.6.25-rc1:", "time 3001 ms",
              "time 3012 ms\ntime 2998 ms", "Loop to 1M:\n2.6.22\t\ttime 4000 ms\n"
              "2.6.23\t\ttime 4500 ms", "See http://example.org/x for the patch.",
              "Reply 4: I see the same thing here, see below.", "> time 5 ms",
              "general statistics:\n    total time: 10.0s", "kernel  a  b\n2.6.24  1  2",
              "12345", "{\"results\": []}", "a,b\n1,2", "-- ", "sig 3"]
    return [(rng.choice(["", "Re: x", "Fwd: y", "test on 2.6.23.9"]),
             "\n\n".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))))
            for _ in range(400)]


def _all_cases() -> list[tuple[str, str]]:
    rng = random.Random(25)
    cases = []
    for _, subject, text in _fixture_texts():
        cases.append((subject, text))
        cases.extend(_variants(text, rng))
    return cases + _generated_messages(rng)


@pytest.fixture(scope="module")
def cases():
    found = _all_cases()
    assert len(found) > 1000  # the fixtures are there: the comparison below means something
    return found


def test_extraction_shortcuts_find_exactly_the_plain_tables(cases, monkeypatch):
    extraction._cached_format.cache_clear()
    fast = [extraction.find_tables(text, subject) for subject, text in cases]
    monkeypatch.setattr(extraction, "_whole_format", extraction._whole_format_ranked)
    monkeypatch.setattr(extraction, "_forwarded_blocks", extraction._forwarded_blocks_read)
    monkeypatch.setattr(extraction, "_detected_format",
                        lambda paragraph: extraction._ranked_format(paragraph.text))
    plain = [extraction.find_tables(text, subject) for subject, text in cases]
    assert sum(len(tables) for tables in plain) > 200  # tables were found, not just prose
    assert sum(1 for tables in plain if tables and tables[0].format in ("robot", "mmtests")) > 5
    for (subject, text), got, expected in zip(cases, fast, plain, strict=True):
        assert got == expected, (subject, text[:300])


def test_whole_message_check_matches_the_full_ranking(cases):
    texts = [text for _, text in cases]
    texts += ["\x00" + text for text in texts[:50]]  # NUL: the registry detects nothing
    answers = [(extraction._whole_format(text), extraction._whole_format_ranked(text))
               for text in texts]
    assert all(fast == plain for fast, plain in answers)
    assert {plain for _, plain in answers} == {None, "robot", "mmtests"}


def test_forward_check_keeps_every_forwarded_block(cases):
    texts = [(subject, text) for subject, text in cases]
    texts += [("", f"{marker}\n> time 5 ms\n") for marker in (
        "-- Forwarded message --", "---- ORIGINAL MESSAGE ----", "begin forwarded message:",
        "  -----Original  message-----", "-- Forwarded meſſage --", "Begin Forwarded Message: ")]
    answers = [(extraction._forwarded_blocks(text, subject),
                extraction._forwarded_blocks_read(text, subject)) for subject, text in texts]
    assert all(fast == plain for fast, plain in answers)
    assert sum(1 for _, plain in answers if plain) > 100


def test_cached_detection_answers_as_detection_for_long_and_short_paragraphs():
    extraction._cached_format.cache_clear()
    short = extraction.Paragraph(1, ["time 5 ms", "time 6 ms"])
    long = extraction.Paragraph(1, ["time 5 ms"] * 200)
    for paragraph in (short, long, short, long):
        assert extraction._detected_format(paragraph) == extraction._ranked_format(
            paragraph.text) == "time-ms"
    assert extraction._cached_format.cache_info().hits == 1  # the long one is never kept


WHITESPACE = ["", " ", "\t", "\u00a0", "\u2003", "\u3000", "\x1c", "\x85", "\u200b", "\v"]


def _lines(cases) -> list[str]:
    lines = {line for _, text in cases[:3000] for line in text.split("\n")}
    for space in WHITESPACE:
        for after in WHITESPACE:
            lines |= {f"On Mon, 11 Feb 2008, Olof Example wrote{space}:{after}",
                      f"Jan <jan@example.com> writes{space}:{after}x",
                      f"Quoting Olof (olof@example.org){space}:{after}",
                      f"* Ingo Molnar <mingo@elte.hu> wrote:{space}{after}",
                      f"> Ingo wrote:{after}", f"  Ingo said :{after}\n"}
    return sorted(lines)


def test_attribution_shortcut_names_the_authors_the_patterns_name(cases):
    lines = _lines(cases)
    named = [(quoting.attribution_author(line), quoting.attribution_by_patterns(line))
             for line in lines]
    assert all(fast == plain for fast, plain in named)
    assert sum(1 for _, plain in named if plain) > 50


def test_rendered_bodies_are_byte_identical_without_the_shortcuts(cases, monkeypatch):
    bodies = [text for _, text in cases[:4000]]
    bodies += ["see https://example.org/a?b=<c>&d, and http://x.y/z).", "ftp://x and a://b",
               "HTTPS://EXAMPLE.ORG/UPPER.", "Jan wrote:\n> http://q.example/ :\n"]
    fast = [str(render.render_body(body)) for body in bodies]
    monkeypatch.setattr(render, "_linked", render._linked_by_pattern)
    monkeypatch.setattr(render, "attribution_author", quoting.attribution_by_patterns)
    monkeypatch.setattr(quoting, "attribution_author", quoting.attribution_by_patterns)
    plain = [str(render.render_body(body)) for body in bodies]
    assert fast == plain
    assert sum('<a href="http' in html for html in plain) >= 3
    assert sum('class="attribution"' in html for html in plain) > 10


def test_cached_authors_are_the_authors_read_each_time():
    from discussions import mail

    values = ["", "Olof <olof@example.org>", "olof@example.org", '"Example, Jan" <j@x>',
              "=?utf-8?q?J=C3=B6rg?= <j@x>", "a@b, c@d", "<>", "Bad <<x@y>", "\x00 <a@b>",
              "Ingo Molnar <mingo@elte.hu> (the scheduler)"]
    mail._author.cache_clear()
    for value in values + values:
        assert mail._author(value) == mail._author_read(value)
    assert mail._author.cache_info().hits == len(values)

"""Detection with the head's lines split once (base.head_lines keeps the last split) gives
exactly what it gives when every detector splits the head itself (base.split_head_lines).

Every file under tests/fixtures (parser samples, pastes, real tools' output, written samples,
mail, traces) and mutated variants of each are detected both ways; the ranked formats with
their scores, the chosen parser or the refusal, and for most the parse itself must be equal.
"""

import gzip
import lzma
import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.parsers import ParseError, base, choose, detect, formats, parse_text
from benchmarks.parsers.base import HEAD_SIZE

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FOLDERS = sorted(path.name for path in FIXTURES.iterdir() if path.is_dir())
READ_LIMIT = 3_000  # detection costs milliseconds a KiB: beyond this only the cut is new
PARSED = 3  # the first variants are parsed too (parsing every one both ways takes minutes)


def _fixture_files(folder: str | None = None) -> list[Path]:
    root = FIXTURES / folder if folder else FIXTURES
    return sorted(path for path in root.rglob("*") if path.is_file())


def _text_of(path: Path, limit: int = READ_LIMIT) -> str:
    opener = {".gz": gzip.open, ".xz": lzma.open}.get(path.suffix, open)
    with opener(path, "rb") as handle:
        data = handle.read(limit)
    return data.decode("utf-8", errors="replace")


def _cut_head(text: str) -> str:
    """The text, then blank lines up to HEAD_SIZE and a line the head cuts in two (lines of
    spaces: splitting tens of thousands of empty lines 22 times over takes a second)."""
    missing = max(1, HEAD_SIZE - len(text) - 5)
    padding = (" " * 199 + "\n") * (missing // 200) + "\n" * (missing % 200)
    return text + padding + "time 4015 ms\n"


def _variants(text: str, seed: int) -> list[str]:
    """The file as written and as mail, pastes and uploads mangle it."""
    lines = text.splitlines()
    rng = random.Random(seed)
    shuffled = lines[:]
    rng.shuffle(shuffled)
    blocks = [block for block in text.split("\n\n") if block.strip()][1:4]
    return [
        text,
        text.replace("\n", "\r\n").replace("\r\n\r\n", "\r\r"),
        "".join(f"> {line}\n" for line in lines),
        base.BOM + text,
        "".join(f">> {line}\n" if i % 2 else f"{line}\n" for i, line in enumerate(lines)),
        "Hi all,\n\nhere are the numbers I got:\n\n" + text + "\nThanks,\nSomeone\n",
        "\n".join(lines[: len(lines) // 2]) + "\n",
        "\n".join(line for i, line in enumerate(lines) if i % 3 != 1) + "\n",
        "\n".join(shuffled) + "\n",
        "\n".join("\t" + line.upper() + "   " for line in lines) + "\n",
        text[: len(text) // 3],
        _cut_head(text),
        text[:50] + "\x00" + text[50:],
        *blocks,
    ]


def _plain_detection(monkeypatch) -> None:
    """Every parser module splits the head itself again, as before the split was kept."""
    kept = base.head_lines  # read once: base's own name is replaced along the way
    for name, module in list(sys.modules.items()):
        if name.startswith("benchmarks.parsers") and getattr(module, "head_lines", None) is kept:
            monkeypatch.setattr(module, "head_lines", base.split_head_lines)


def _chosen(text: str):
    try:
        return ("chose", choose(text).name)
    except ParseError as refusal:
        return ("refused", type(refusal).__name__, str(refusal), refusal.line,
                getattr(refusal, "best_guess", None), getattr(refusal, "formats", None))


def _parsed(text: str):
    try:
        return ("parsed", parse_text(text))
    except ParseError as refusal:
        return ("refused", type(refusal).__name__, str(refusal), refusal.line)


def _outcomes(texts: list[str]) -> list:
    """What detection decides for each text, asked in an order that changes the kept split:
    every text right after another one, then a copy of it that is equal but not the same
    object."""
    return [(detect(text), _chosen(text), detect("".join(list(text))),
             _parsed(text) if index % len(texts) < PARSED else None)
            for index, text in enumerate(texts)]


def _variants_of(folder: str) -> list[list[str]]:
    return [_variants(_text_of(path), seed)
            for seed, path in enumerate(_fixture_files(folder))]


def test_the_fixtures_are_all_read():
    files = _fixture_files()
    assert len(files) > 300 and {"parsers", "pastes", "real", "written", "mbox"} <= set(FOLDERS)
    assert sum(len(_fixture_files(folder)) for folder in FOLDERS) == len(files)
    assert any(path.suffix == ".gz" for path in files)


@pytest.mark.parametrize("folder", FOLDERS)
def test_shared_split_detects_every_fixture_and_variant_as_the_plain_way(folder, monkeypatch):
    files = [_variants(_text_of(path), seed) for seed, path in enumerate(_fixture_files(folder))]
    shared = [_outcomes(variants) for variants in files]
    with monkeypatch.context() as plain:
        _plain_detection(plain)
        unshared = [_outcomes(variants) for variants in files]
    assert len(shared) == len(unshared) == len(files) > 0
    for variants, one, other in zip(files, shared, unshared, strict=True):
        for text, mine, theirs in zip(variants, one, other, strict=True):
            assert mine == theirs, text[:300]
    if folder in ("parsers", "pastes", "real"):
        # The comparison saw formats chosen, ties and refusals, not only empty answers.
        outcomes = [outcome for per_file in shared for outcome in per_file]
        assert len({chosen[1] for _, chosen, *_ in outcomes if chosen[0] == "chose"}) >= 8
        assert any(chosen[0] == "refused" for _, chosen, *_ in outcomes)
        assert any(parsed and parsed[0] == "parsed" for *_, parsed in outcomes)


def test_every_format_and_ties_between_formats_as_the_plain_way(monkeypatch):
    """The parser samples, alone and two by two: every format wins somewhere, and two
    formats tie at the top (the registry's order decides) in a dozen pairs."""
    singles = [_text_of(path) for path in _fixture_files("parsers")]
    texts = singles + [one + "\n" + singles[(index + step) % len(singles)]
                       for index, one in enumerate(singles) for step in range(1, 9)]
    shared = [(detect(text), _chosen(text)) for text in texts]
    with monkeypatch.context() as plain:
        _plain_detection(plain)
        unshared = [(detect(text), _chosen(text)) for text in texts]
    for text, mine, theirs in zip(texts, shared, unshared, strict=True):
        assert mine == theirs, text[:300]
    assert {chosen[1] for _, chosen in shared if chosen[0] == "chose"} == set(formats())
    ties = [ranked for ranked, _ in shared if len(ranked) > 1 and ranked[0][1] == ranked[1][1]]
    assert len(ties) >= 10


def test_long_heads_cut_by_the_registry_as_the_plain_way(monkeypatch):
    texts = [_text_of(path, 2 * HEAD_SIZE) for path in _fixture_files("parsers")[:4]]
    texts = [text * (2 * HEAD_SIZE // max(1, len(text)) + 1) for text in texts]
    assert all(len(text) > HEAD_SIZE for text in texts)
    shared = [(detect(text), _chosen(text)) for text in texts]
    with monkeypatch.context() as plain:
        _plain_detection(plain)
        assert [(detect(text), _chosen(text)) for text in texts] == shared


def test_the_plain_way_really_splits_each_time(monkeypatch):
    calls = []
    with monkeypatch.context() as plain:
        _plain_detection(plain)

        def counting(head, limit=2000):
            calls.append(head)
            return base.split_head_lines(head, limit)

        for name, module in list(sys.modules.items()):
            if name.startswith("benchmarks.parsers") and \
                    getattr(module, "head_lines", None) is base.split_head_lines:
                plain.setattr(module, "head_lines", counting)
        detect("time 5 ms\ntime 6 ms\n")
    assert len(calls) >= 15  # most detectors start from the head's lines


def test_kept_split_is_not_shared_with_callers():
    head = "Linux 2.6.24\ntime 5 ms\n\n> quoted 7\ntime 6 ms\n"
    first = base.head_lines(head)
    first.append("changed by a caller")
    first[0] = "also changed"
    assert base.head_lines(head) == base.split_head_lines(head) == \
        ["Linux 2.6.24", "time 5 ms", "time 6 ms"]
    assert base.head_lines(head, 1) == ["Linux 2.6.24"]
    assert base.head_lines(head) == ["Linux 2.6.24", "time 5 ms", "time 6 ms"]


@pytest.mark.parametrize("odd", [None, b"time 5 ms\n", 42, "nul\x00here\ntime 5 ms\n"])
def test_odd_heads_split_as_the_plain_way(odd):
    assert base.head_lines(odd) == base.split_head_lines(odd) == []
    assert base.head_lines(odd) == []


def _fixture_lines() -> list[str]:
    lines = []
    for path in _fixture_files():
        if path.suffix not in (".gz", ".xz", ".trace"):
            lines.extend(_text_of(path).splitlines()[:40])
    return sorted(set(lines))


LINES = _fixture_lines()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LINES), min_size=0, max_size=25),
       st.sampled_from(["\n", "\r\n", "\r", "\n\n"]))
def test_random_mixtures_of_fixture_lines_detect_as_the_plain_way(picked, ending):
    text = ending.join(picked) + ending
    shared = (detect(text), _chosen(text))
    with pytest.MonkeyPatch.context() as plain:
        _plain_detection(plain)
        unshared = (detect(text), _chosen(text))
    assert shared == unshared

"""The older line formats account for every line (issue 20, item 1).

results-file, sweep, the timing lines (time-ms, loops-time, kernel-time, burn), kernel-table and
param-table read a line, or skip it by a rule they name (skips.py), or refuse the input naming
the line when it holds a number none explains. The 2007 pastes keep reading as their expected
JSON files say (test_corpus.py); here: each rule on the lines those pastes really hold, the
refusals, and the registry trying the next format before it refuses.
"""

import io
import re
from pathlib import Path

import pytest

from benchmarks.parsers import PARSERS, ParseError, parse_lines, parse_text
from benchmarks.parsers.base import Unexplained
from benchmarks.parsers.skips import hole, shell_command

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
OLDER = ("results-file", "sweep", "time-ms", "loops-time", "kernel-time", "burn", "kernel-table",
         "param-table")
RULE_WARNING_RE = re.compile(
    r"line \d+: (skipped (mail attribution|setup description|damaged kernel heading|"
    r"damaged loop heading|shell command|prose|quoted line)\b|hole: )")


def read(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def warning_of(result, line: int) -> str:
    found = [w for w in result.warnings if w.startswith(f"line {line}: ")]
    assert len(found) == 1, result.warnings
    return found[0]


# ----------------------------------------------------------------- refusals, one per format

# A written input of each format with one line holding numbers that no rule explains.
UNEXPLAINED = {
    "results-file": ("2.6.22:\ntime 3332 ms\n2.6.24 took 5210 ms on the first try\n"
                     "time 3340 ms\n", 3),
    "sweep": "Loop to 1M:\n2.6.22\t\ttime 4015 ms\n2.6.24 4 8286\n2.6.25\t\ttime 4100 ms\n",
    "time-ms": "time 5210 ms\ntime 5198 ms\ncpu 969 2.00 2.14\ntime 5302 ms\n",
    "loops-time": "10000 loops time 3332 ms\nrun 2 of 3 4015\n10000 loops time 3401 ms\n",
    "kernel-time": "2.6.22: 3332 ms\n2.6.23: 4397 ms\nrun 3 4 5\n2.6.24: 8953 ms\n",
    "burn": ("10 x 1 s:\ntime: 10612345 (us)  work: 20000000  wait: 201234  idx: 1.88\n"
             "total 10598001 20000000\n"),
    "kernel-table": ("loops  2.6.22  2.6.24\n1M  4015  8286\n2.6.25 x 4100\n10M  24030  30120\n",
                     3),
    "param-table": ("2.4.36\nrunqueue length    microseconds\n1                  0.41\n"
                    "the 2 task case took 0.44 us\n", 4),
}


def _case(name):
    written = UNEXPLAINED[name]
    return written if isinstance(written, tuple) else (written, 2 if name == "loops-time" else 3)


@pytest.mark.parametrize("name", OLDER)
def test_a_line_with_numbers_no_rule_explains_is_refused_naming_it(name):
    text, line = _case(name)
    with pytest.raises(Unexplained) as caught:
        PARSERS[name].parse(io.StringIO(text))
    assert (caught.value.line, caught.value.lines) == (line, [line])
    assert "nothing was read" in caught.value.message
    # Detected rather than forced: no other format accounts for it either, so the refusal
    # that stands is the detected format's, naming the same line.
    with pytest.raises(ParseError) as detected:
        parse_text(text)
    assert detected.value.line == line


def test_the_refusal_counts_every_unexplained_line():
    text = "time 5 ms\n" + "".join(f"junk {n} {n}\n" for n in range(12)) + "time 6 ms\n"
    with pytest.raises(Unexplained) as caught:
        PARSERS["time-ms"].parse(io.StringIO(text))
    assert caught.value.lines == list(range(2, 12))  # the first ten
    assert "and 2 more" in caught.value.message


def test_a_line_that_looks_like_a_result_is_never_skipped_as_prose():
    for line in ("the first run gave time 5210 ms, then I stopped",
                 "and 2.6.24 needs 8286 ms for the same loop, sadly"):
        with pytest.raises(Unexplained):
            PARSERS["results-file"].parse(["2.6.22:", "time 3332 ms", line])


# ----------------------------------------------------------------- the rules, on the pastes

def test_setup_description_states_what_it_does_not_read():
    result = parse_text(read(FIXTURES / "pastes" / "035-time-lines.txt"))
    assert result.results[0].params == {}  # nothing says which runs "loops=10000" is about
    assert warning_of(result, 1) == (
        "line 1: skipped setup description (it states iterations 500, loops 10000: not read, as "
        "nothing says which runs it describes; give it with the upload or in the preview if it "
        "applies)")


@pytest.mark.parametrize(("path", "line", "stated"), [
    ("pastes/002-per-kernel-sweep-crlf.txt", 1, "iterations 500"),
    ("pastes/019-kernel-columns-tabs-crlf.txt", 1, "iterations 500"),
    ("parsers/burn.txt", 1, "kernel 2.6.24"),
    ("parsers/results_mail.txt", 10, None),  # "P4 with HT, three runs each:"
    ("parsers/kernel_time.txt", 1, None),  # "Results on my Core 2 laptop (2 CPUs):"
    ("pastes/029-quoted-replies-interleaved.txt", 5, None),  # "My numbers on the P4:"
])
def test_prose_with_numbers_is_a_setup_description(path, line, stated):
    result = parse_text(read(FIXTURES / path))
    warning = warning_of(result, line)
    assert warning.startswith(f"line {line}: skipped setup description")
    if stated:
        assert f"it states {stated}:" in warning
    else:
        assert "(" not in warning


def test_burn_reads_its_fields_not_times_in_prose():
    # "constant total work 10 s" has a time, but the burn format reads only its own fields
    result = PARSERS["burn"].parse(io.StringIO(read(FIXTURES / "parsers" / "burn.txt")))
    assert warning_of(result, 1).startswith("line 1: skipped setup description")
    with pytest.raises(Unexplained):  # a burn field in prose is never skipped
        PARSERS["burn"].parse(["10 x 1 s:", "the rerun had wait: 201234, odd",
                               "time: 1 (us)  work: 2  wait: 3  idx: 1.5"])


@pytest.mark.parametrize("path", ["parsers/results_mail.txt",
                                  "pastes/029-quoted-replies-interleaved.txt"])
def test_mail_attribution(path):
    result = parse_text(read(FIXTURES / path))
    assert warning_of(result, 1) == "line 1: skipped mail attribution"


@pytest.mark.parametrize(("paste", "line", "kernel"), [
    ("007-per-kernel-sweep-typo-heading", 4, "2.6.24"),  # "2.6.24;"
    ("011-wrapped-heading", 3, "2.6.22.17-cfs-v24.1-smp"),  # its remark wraps to line 4
])
def test_damaged_kernel_heading_leaves_the_values_after_it_unassigned(paste, line, kernel):
    result = parse_text(read(FIXTURES / "pastes" / f"{paste}.txt"))
    assert warning_of(result, line) == (
        f"line {line}: skipped damaged kernel heading ({kernel}?: the values after it are "
        "unassigned until you say whose they are)")
    after = [r for r in result.results if r.line > line]
    assert after and all(r.missing == ["kernel"] and r.kernel is None for r in after[:1])


def test_damaged_loop_heading_leaves_the_rows_after_it_unassigned():
    result = parse_text(read(FIXTURES / "pastes" / "016-sweep-table-typo-loop-heading.txt"))
    assert result.format == "sweep"
    assert warning_of(result, 4).startswith("line 4: skipped damaged loop heading")
    unsure = [r for r in result.results if r.line > 4]
    assert unsure and all("param.loops" in r.missing for r in unsure)


def test_damaged_headings_are_only_headings():
    sweep = PARSERS["sweep"]
    for line in ("Lopp to 2M: 5", "Lopp to 2M: 7574 ms", "2.6.24; 5210", "2.6.24 (with 3 patches"):
        with pytest.raises(Unexplained):
            sweep.parse(["Loop to 1M:", "2.6.22 time 4015 ms", line, "2.6.22 time 5 ms"])


def test_shell_command_numbers_are_its_arguments():
    result = parse_text(read(FIXTURES / "parsers" / "loops_time.txt"))
    assert warning_of(result, 1) == "line 1: skipped shell command (its numbers are arguments)"
    assert shell_command("host:~/src # ./threadtest 10000") is not None
    assert shell_command("# ./threadtest 10000") is not None
    # perf bench's "# 20 sender and receiver..." banner is no command
    assert shell_command("# 20 sender and receiver processes per group") is None


def test_lines_without_digits_are_prose():
    result = parse_text(read(FIXTURES / "pastes" / "056-signature-and-greeting.txt"))
    assert [warning_of(result, n) for n in (1, 11, 12)] == [
        f"line {n}: skipped prose (no numbers)" for n in (1, 11, 12)]


def test_a_hole_is_a_whole_line():
    assert hole("<missed 2.6.24 here>") == "missed 2.6.24 here"
    assert hole("Loop to 10M: <box crashed, no number>") == "box crashed, no number"
    assert hole("2.6.24-git19 <rebooted>") == "rebooted"
    assert hole("2.6.24 5210 <noisy>") is None  # a number beside it is no part of a hole
    with pytest.raises(Unexplained) as caught:
        PARSERS["results-file"].parse(["2.6.24:", "time 5 ms", "2.6.24 5210 <noisy>"])
    assert caught.value.line == 3


@pytest.mark.parametrize("path", sorted(
    [*FIXTURES.glob("pastes/*.txt"), *FIXTURES.glob("parsers/*.txt"),
     *FIXTURES.glob("uploads/*.txt")], key=str), ids=lambda path: path.name)
def test_every_skip_in_the_older_pastes_names_its_rule(path):
    try:
        result = parse_text(read(path))
    except ParseError:
        return  # the corpus pins its refusals
    if result.format not in OLDER:
        return
    skips = [w for w in result.warnings if re.search(r"skipped|ignored|: hole: ", w)]
    assert all(RULE_WARNING_RE.match(w) for w in skips), result.warnings


# ----------------------------------------------------------------- the registry

# A per-kernel sweep with a sweep-table block: results-file fits its signature best but cannot
# read "10M:" nor the row under it; sweep reads both.
MIXED = ("2.6.22.17:\nLoop to 1M: 5210 ms\nLoop to 10M: 24030 ms\n2.6.24:\nLoop to 1M: 10765 ms\n"
         "10M:\n2.6.24 time 30122 ms\n")


def test_the_registry_tries_the_next_format_that_accounts_for_every_line():
    with pytest.raises(Unexplained) as caught:
        PARSERS["results-file"].parse(io.StringIO(MIXED))
    assert caught.value.lines == [6, 7]
    result = parse_text(MIXED)
    assert result.format == "sweep"
    assert [(r.kernel, r.params["loops"], list(r.metrics["time_ms"])) for r in result.results] \
        == [("2.6.22.17", 1_000_000, [5210]), ("2.6.22.17", 10_000_000, [24030]),
            ("2.6.24", 1_000_000, [10765]), ("2.6.24", 10_000_000, [30122])]
    assert result.warnings[0] == "read as sweep: results-file could not account for line(s) 6, 7"
    assert parse_lines(MIXED.splitlines(keepends=True)).format == "sweep"  # a list replays


def test_a_forced_format_or_a_stream_read_once_keeps_its_refusal():
    with pytest.raises(Unexplained) as forced:
        parse_text(MIXED, format="results-file")
    assert forced.value.line == 6
    with pytest.raises(Unexplained) as once:  # a generator cannot be read a second time
        parse_lines(line for line in MIXED.splitlines(keepends=True))
    assert once.value.line == 6


def test_a_grid_of_bare_numbers_never_takes_over():
    # normalized's signature fits this table too, but it would read the times as ratios
    text, line = _case("kernel-table")
    with pytest.raises(Unexplained) as caught:
        parse_text(text)
    assert caught.value.line == line and "time table of kernels" in caught.value.message

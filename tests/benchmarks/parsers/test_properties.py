"""Property tests of the block layouts (per-kernel sweeps, results files, sweep tables).

- an unrecognised line between blocks never changes which kernel a value belongs to, and one
  anywhere at most makes values UNASSIGNED, never moves them to another kernel; or, when it
  holds a number no skip rule explains, the paste is refused naming that line;
- permuting blocks permutes runs;
- quoting the whole paste changes nothing once unquoted.
"""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.parsers import parse_text
from benchmarks.parsers.base import Unexplained
from benchmarks.parsers.headings import parse_heading
from benchmarks.parsers.results_file import command_of
from benchmarks.parsers.timing import HOLE_RE, burn_setup, match_measurement, near_miss

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None,
                             suppress_health_check=[HealthCheck.too_slow])


@st.composite
def kernels(draw):
    minor = draw(st.integers(0, 40))
    shape = draw(st.sampled_from(["plain", "rc", "smp", "tag", "patch", "remark", "stable"]))
    return {
        "plain": f"2.6.{minor}",
        "rc": f"2.6.{minor}-rc{draw(st.integers(1, 9))}",
        "smp": f"2.6.{minor}.{draw(st.integers(1, 20))}-smp",
        "tag": f"v6.{minor}",
        "patch": f"2.6.{minor}-rc7 + sched-devel",
        "remark": f"2.6.{minor}-git{draw(st.integers(1, 30))} (rerun after reboot)",
        "stable": f"5.{minor}.0-91-generic",
    }[shape]


LOOPS = ["10k", "100k", "1M", "2M", "10M", "40M"]


@st.composite
def pastes(draw, min_blocks=2):
    """(layout, blocks): each block is (heading, [(row key, value)]) with unique values."""
    layout = draw(st.sampled_from(["per-kernel-sweep", "results-file", "sweep-table"]))
    if layout == "sweep-table":
        headings = draw(st.lists(st.sampled_from(LOOPS), min_size=min_blocks, max_size=5,
                                 unique=True))
        row_keys = st.lists(kernels(), min_size=1, max_size=4, unique=True)
    else:
        headings = draw(st.lists(kernels(), min_size=min_blocks, max_size=5,
                                 unique_by=lambda k: parse_heading(k)))
        row_keys = (st.lists(st.sampled_from(LOOPS), min_size=1, max_size=4, unique=True)
                    if layout == "per-kernel-sweep" else st.lists(st.just(""), min_size=1,
                                                                   max_size=4))
    values = iter(draw(st.lists(st.integers(1, 99_999), min_size=40, max_size=40, unique=True)))
    blocks = [(heading, [(key, next(values)) for key in draw(row_keys)]) for heading in headings]
    return layout, blocks


def render_block(layout: str, block) -> list[str]:
    heading, rows = block
    if layout == "sweep-table":
        return [f"Loop to {heading}:", *(f"{kernel}\t\ttime {value} ms" for kernel, value in rows)]
    if layout == "per-kernel-sweep":
        return [f"{heading}:", *(f"Loop to {loops}: {value} ms" for loops, value in rows)]
    return [heading, *(f"time {value} ms" for _, value in rows)]


def render(layout: str, blocks) -> str:
    return "".join(line + "\n" for block in blocks for line in render_block(layout, block))


def is_unrecognised(text: str) -> bool:
    line = text.strip()
    return bool(line) and not (
        line.startswith(">") or parse_heading(line) or command_of(line) is not None
        or HOLE_RE.search(line) or near_miss(line) or burn_setup(line, 0) is not None
        or match_measurement(line) is not None)


junk_lines = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cc", "Cs", "Zl", "Zp"]),
    min_size=1, max_size=60).filter(is_unrecognised)


def kernel_of_each_value(text: str) -> dict[float, str | None]:
    """value -> kernel it was attached to (None when unassigned)."""
    owner = {}
    for result_set in parse_text(text).results:
        kernel = None if result_set.missing else result_set.kernel
        for value in result_set.metrics["time_ms"]:
            assert value not in owner  # a value is attached once
            owner[value] = kernel
    return owner


def owners_or_refused(text: str, junk_line: int) -> dict[float, str | None] | None:
    """kernel_of_each_value, or None when the paste is refused at the junk line: a line holding
    numbers that no skip rule explains is refused, naming it, never read around."""
    try:
        return kernel_of_each_value(text)
    except Unexplained as refusal:
        assert (refusal.line, refusal.lines) == (junk_line, [junk_line])
        return None


def sure_runs(text: str) -> list[tuple]:
    return [(r.kernel, r.params, r.labels, list(r.metrics["time_ms"]))
            for r in parse_text(text).results if not r.missing]


@PROPERTY_SETTINGS
@given(paste=pastes(), junk=junk_lines, data=st.data())
def test_an_unknown_line_between_blocks_changes_no_kernel(paste, junk, data):
    layout, blocks = paste
    at = data.draw(st.integers(1, len(blocks) - 1))
    lines = [render_block(layout, block) for block in blocks]
    with_junk = lines[:at] + [[junk]] + lines[at:]
    original = render(layout, blocks)
    changed = "".join(line + "\n" for block in with_junk for line in block)
    owners = owners_or_refused(changed, sum(map(len, lines[:at])) + 1)
    assert owners in (None, kernel_of_each_value(original))
    assert None not in kernel_of_each_value(original).values()


@PROPERTY_SETTINGS
@given(paste=pastes(), junk=junk_lines, data=st.data())
def test_an_unknown_line_anywhere_never_moves_a_value_to_another_kernel(paste, junk, data):
    layout, blocks = paste
    lines = render(layout, blocks).splitlines(keepends=True)
    at = data.draw(st.integers(1, len(lines)))
    changed = "".join(lines[:at] + [junk + "\n"] + lines[at:])
    before, after = kernel_of_each_value("".join(lines)), owners_or_refused(changed, at + 1)
    if after is None:
        return  # refused at the junk line
    assert set(after) == set(before)  # nothing lost, nothing invented
    for value, kernel in after.items():
        assert kernel in (before[value], None)  # right, or says it is not sure


@PROPERTY_SETTINGS
@given(paste=pastes(), data=st.data())
def test_permuting_blocks_permutes_runs(paste, data):
    layout, blocks = paste
    order = data.draw(st.permutations(range(len(blocks))))
    runs = sure_runs(render(layout, blocks))
    permuted = sure_runs(render(layout, [blocks[i] for i in order]))
    assert sorted(permuted, key=repr) == sorted(runs, key=repr)
    if layout != "sweep-table":  # one heading per block: runs follow the blocks' order
        kernels_in_order = [parse_heading(blocks[i][0]).kernel for i in order]
        seen = list(dict.fromkeys(run[0] for run in permuted))
        assert seen == kernels_in_order


@PROPERTY_SETTINGS
@given(paste=pastes(min_blocks=1), mark=st.sampled_from(["> ", ">", "> > ", ">> ", ">\t"]),
       crlf=st.booleans())
def test_quoting_the_whole_paste_changes_nothing(paste, mark, crlf):
    layout, blocks = paste
    text = render(layout, blocks)
    quoted = "".join(mark + line + "\n" for line in text.splitlines())
    if crlf:
        quoted = quoted.replace("\n", "\r\n")
    assert sure_runs(quoted) == sure_runs(text)
    assert [r.line for r in parse_text(quoted).results] == \
        [r.line for r in parse_text(text).results]


@PROPERTY_SETTINGS
@given(paste=pastes(), junk=junk_lines, data=st.data())
def test_values_under_an_unreadable_heading_never_join_the_block_above(paste, junk, data):
    """A heading the parser cannot read (a typo, a wrapped line) is an unknown line: the values
    under it must not be pooled into the block above, which is what a guess would do."""
    layout, blocks = paste
    spoiled = data.draw(st.integers(1, len(blocks) - 1))
    lines = [render_block(layout, block) for block in blocks]
    junk_line = sum(map(len, lines[:spoiled])) + 1
    lines[spoiled] = [junk, *lines[spoiled][1:]]
    owner = owners_or_refused("".join(line + "\n" for block in lines for line in block),
                              junk_line)
    if owner is None:
        return  # refused at the junk line
    truth = kernel_of_each_value(render(layout, blocks))
    for index, (_, rows) in enumerate(blocks):
        for _, value in rows:
            if index == spoiled:
                assert owner[value] is None  # UNASSIGNED, shown with its lines
            else:
                assert owner[value] == truth[value]

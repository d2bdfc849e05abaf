"""The ftrace fast path (schedtrace.ftrace.fast_line) against the general path it shortcuts:
the same events, statistics, segments and wakeups on every fixture and the bench's trace shape,
and, line by line, never an event the general path would not give (it may only give up)."""

import gzip
import io
import lzma
import random
from pathlib import Path

import pytest

import schedtrace
from schedtrace.ftrace import FtraceParser, fast_line
from schedtrace.lines import ReadState

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"
TRACES = sorted(path for path in FIXTURES.rglob("*")
                if path.is_file() and path.suffix not in (".md", ".json", ".sh", ".awk"))
# the half-million-event recording takes a while on the general path
BIG = 1 << 20


def _event_key(event):
    return (event.ts, event.cpu, event.kind, event.pid, event.comm, event.line,
            sorted(event.fields().items()))


def everything(source, **options):
    """Every event and figure a trace gives."""
    found = []
    stream = schedtrace.open_events(source, **options)
    stats = schedtrace.TraceStats(
        on_segment=lambda cpu, task, start, end, state: found.append(
            ("segment", cpu, task.index, start, end, state)),
        on_wakeup=lambda source, target, task, at: found.append(
            ("wakeup", source, target, task.index, at)))
    for event in stream:
        found.append(_event_key(event))
        stats.add(event)
    stats.finish()
    return [found, stream.format, stream.lines, stream.events, stream.skipped,
            stream.lost_events, stream.late_events, stream.warnings, stats.summary(),
            [task.as_dict() for task in stats.tasks],
            [cpu.as_dict() for _, cpu in sorted(stats.cpus.items())], stats.warnings()]


@pytest.mark.parametrize("path", [
    pytest.param(path, id=path.name,
                 marks=[pytest.mark.slow] if path.stat().st_size > BIG else [])
    for path in TRACES])
def test_both_paths_give_the_same_on_every_fixture(path):
    fast, general = everything(path), everything(path, fast=False)
    assert fast[8]["events"] > 0  # (the stream also counts lost-events markers)
    assert fast == general


def test_both_paths_give_the_same_on_the_bench_trace_shape(tmp_path):
    from bench.trace_ingest import write_trace

    path = tmp_path / "bench.trace"
    written = write_trace(path, 20_000, seed=3)
    fast, general = everything(path), everything(path, fast=False)
    assert fast[3] == written
    assert fast == general


def _lines():
    lines = []
    for path in TRACES:
        raw = path.read_bytes()
        raw = gzip.decompress(raw) if path.suffix == ".gz" else \
            lzma.decompress(raw) if path.suffix == ".xz" else raw
        lines += [line for line in raw.decode(errors="replace").split("\n")
                  if "sched_switch" in line or "sched_wak" in line
                  or "sched_migrate_task" in line or "sched_process_fork" in line]
    return lines


# Lines the fast path must either read exactly as the general path does or leave to it.
ODD_LINES = [
    "  a-12 [000] x-5 [001] d..2. 1.000001: sched_wakeup: comm=u pid=2 prio=120 target_cpu=000",
    "  a b [c]-d-600 [001] d..2. 1.000001: sched_wakeup: comm=u pid=2 prio=120 target_cpu=001",
    "  (sd-pam)-77 [001] d..2. 1.000001: sched_wakeup: comm=u pid=2 prio=120 target_cpu=001",
    "  t-1 (  1) [000] d..2. 1.000001: sched_wakeup: comm=u pid=2 prio=120 target_cpu=000",
    "  t-1 (-----) [000] d..2. 1.000001: sched_wakeup: comm=u pid=2 prio=120",
    "  t-1 [000] 1.000001: sched_wakeup: comm=u pid=2 prio=120 target_cpu=000",
    "  t-1 [000]  d..2.  1.000001:  sched_wakeup: comm=u pid=2 prio=120 target_cpu=000",
    "  t-1 [000] d..2. 1.0000012: sched_wakeup: comm=u pid=2 prio=120 target_cpu=000",
    "  t-1 [000] d..2. 1.00001: sched_wakeup: comm=u pid=2 prio=120 target_cpu=000",
    "  t-1 [000] d..2. 1.000001: sched_wakeup: comm=u pid=-2 prio=-1 success=1 target_cpu=000",
    "  t-1 [000] d..2. 1.000001: sched_wakeup: comm=u pid=2 x pid=3 prio=120 target_cpu=000",
    "  t-1 [000] d..2. 1.000001: sched_wakeup: comm=a pid=1 b pid=2 prio=120",
    "  t-1 [000] d..2. 1.000001: sched_wakeup_new: comm=u pid=2 prio=120 success=1 target_cpu=1",
    "  t-1 [000] d..2. 1.000001: sched_waking: comm=u pid=2 prio=120 target_cpu=000  ",
    "  t-1 [000] d..2. 1.000001: sched_wakeup: comm=u pid=2 prio=120 success= target_cpu=0",
    "  t-1 [000] d..2. 1.000001: sched_wakeup: comm=u pid=2 prio=120 target_cpu=",
    "  t-1 [000] d..2. 1.000001: sched_wakeup: comm=u pid=٣ prio=120 target_cpu=000",
    "  t-1 [000] d..2. 1.000001: sched_wakeup: comm=u pid=2\u00a0prio=120 target_cpu=000",
    "  t-1\u00a0[000] d..2. 1.000001: sched_wakeup: comm=u pid=2 prio=120 target_cpu=000",
    "  t-1 [000] d..2. 99999999999999999999.000001: sched_wakeup: comm=u pid=2 prio=1",
    "  t-1 [000] d..2. 1.000001: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 "
    "prev_state=R+ ==> next_comm=b next_pid=2 next_prio=120",
    "  t-1 [000] d..2. 1.000001: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 "
    "prev_state=R ==> next_comm=b next_pid=2 next_prio=120 next_pid=3 next_prio=4",
    "  t-1 [000] d..2. 1.000001: sched_switch: prev_comm=a prev_pid=1 b prev_pid=5 "
    "prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 next_prio=120",
    "  t-1 [000] d..2. 1.000001: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 "
    "prev_state=S S ==> next_comm=b next_pid=2 next_prio=120",
    "  t-1 [000] d..2. 1.000001: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 "
    "prev_state= ==> next_comm=b next_pid=2 next_prio=120",
    "  t-1 [000] d..2. 1.000001: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 "
    "prev_state=S ==> next_comm=b next_pid=2 next_prio=120\t",
    "  t-1 [000] d..2. 1.000001: sched_switch: prev_comm=a==> next_comm=x prev_pid=1 "
    "prev_prio=120 prev_state=D ==> next_comm=b next_pid=2 next_prio=-120",
    "  t-1 [000] d..2. 1.000001: sched_switch:  prev_comm=a prev_pid=1 prev_prio=120 "
    "prev_state=S ==> next_comm=b next_pid=2 next_prio=120",
    "  t-1 [000] d..2. 1.000001: sched:sched_switch: prev_comm=a prev_pid=1 prev_prio=120 "
    "prev_state=S ==> next_comm=b next_pid=2 next_prio=120",
    "  t-1 [000] d..2. 1.000001: sched_migrate_task: comm=u pid=2 prio=120 orig_cpu=0 dest_cpu=1",
    "  t-1 [000] d..2. 1.000001: sched_migrate_task: comm=u pid=2 x pid=3 prio=1 orig_cpu=0 "
    "dest_cpu=1",
    "  t-1 [000] d..2. 1.000001: sched_migrate_task: comm=u pid=2 prio=-1 orig_cpu=0 dest_cpu=1",
    "  t-1 [000] d..2. 1.000001: sched_migrate_task: comm=u pid=2 prio=1 orig_cpu=0 dest_cpu=1 "
    "running=0",
    "  t-1 [000] ..... 1.000001: sched_process_fork: comm=a b pid=1 child_comm=c d child_pid=2",
    "  t-1 [000] ..... 1.000001: sched_process_fork: comm=a pid=1 child_comm=c child_pid=2 "
    "child_pid=3",
    "  t-1 [000] ..... 1.000001: sched_process_fork: comm=a pid=x pid=1 child_comm=c "
    "child_pid=2",
    "  t-1 [000] ..... 1.000001: sched_process_fork: comm=a pid=1 child_comm= child_pid=-2",
]
MUTATIONS = list(" -[]():=.0123456789\tx_+٣\u00a0") + [
    " pid=", " prio=", " next_pid=", " prev_pid=", " target_cpu=", " success=1", " ==> ",
    "sched_", ": ", "-12 [000] ", " orig_cpu=", " dest_cpu=", " child_comm=", " child_pid="]


def _general(text):
    """The general path's reading of one line: an event key, None, or the error."""
    parser = FtraceParser([], ReadState(), fast=False)
    try:
        event = parser._general(7, text, True, 0)
    except schedtrace.TraceError as error:
        return ("error", error.message)
    return None if event is None else _event_key(event)


def test_no_line_reads_differently_on_the_fast_path():
    rng = random.Random(25)
    lines = _lines()
    checked = read_fast = 0
    for text in ODD_LINES + [rng.choice(lines) for _ in range(2000)]:
        variants = [text]
        for _ in range(6):
            spot = rng.randrange(len(text) + 1)
            if rng.random() < 0.7:
                variants.append(text[:spot] + rng.choice(MUTATIONS) + text[spot:])
            else:
                variants.append(text[:spot] + text[spot + rng.randint(1, 4):])
        for variant in variants:
            event = fast_line(variant, 7)
            checked += 1
            if event is not None:
                read_fast += 1
                assert _event_key(event) == _general(variant), variant
    assert checked > 10_000
    assert read_fast > checked // 4  # the fast path does read most common lines


def test_the_fast_path_reads_the_common_lines():
    """Every switch, wakeup, migrate and fork line of the tracefs fixtures takes the fast path
    (their comms have no brackets): what the speed depends on."""
    text = (FIXTURES / "ftrace_burn.trace").read_text().splitlines()
    common = [line for line in text if ": sched_switch:" in line or ": sched_wakeup" in line
              or ": sched_migrate_task:" in line or ": sched_process_fork:" in line]
    assert len(common) > 1000
    assert all(fast_line(line, 1) is not None for line in common)


def test_refusals_name_their_line_on_both_paths():
    good = "  t-1 [000] d..2. 1.000001: sched_wakeup: comm=u pid=2 prio=120 target_cpu=000\n"
    late = "  t-1 [000] d..2. 99999999999.000001: sched_wakeup: comm=u pid=2 prio=120\n"
    nul = "  t-1 [000] d..2. 1.000002: sched_wakeup: comm=u\x00v pid=2 prio=120\n"
    for fast in (True, False):
        for bad, message in ((late, "out of range"), (nul, "NUL")):
            with pytest.raises(schedtrace.RefusedValue) as caught:
                list(schedtrace.open_events(io.BytesIO((good + bad + good).encode()),
                                            max_ts=2**63 - 1, refuse_nul=True, fast=fast))
            assert caught.value.line == 2 and message in caught.value.message


@pytest.mark.parametrize("window", [1, 3, 50, 20_000])
def test_chunked_reading_orders_as_event_by_event_does(tmp_path, window):
    """TraceStats.consume reads an EventStream a list at a time (event_chunks): the same
    events in the same order, late counts and figures as one at a time, on input whose lines
    are locally shuffled (the heap takes over) and on ordered input (the FIFO)."""
    from bench.trace_ingest import write_trace

    path = tmp_path / "ordered.trace"
    write_trace(path, 5_000, seed=4)
    lines = path.read_text().splitlines(keepends=True)
    rng = random.Random(window)
    for spot in range(2, len(lines) - 8, 97):
        piece = lines[spot:spot + 8]
        rng.shuffle(piece)
        lines[spot:spot + 8] = piece
    shuffled = tmp_path / "shuffled.trace"
    shuffled.write_text("".join(lines))
    for source in (path, shuffled):
        one = schedtrace.open_events(source, reorder_window=window)
        by_one = [_event_key(event) for event in one]
        chunked = schedtrace.open_events(source, reorder_window=window)
        by_chunk = [_event_key(event) for chunk in chunked.event_chunks() for event in chunk]
        assert by_one == by_chunk and len(by_one) > 4_000
        assert (one.events, one.late_events, one.warnings) == \
            (chunked.events, chunked.late_events, chunked.warnings)
        if source == shuffled and window == 1:
            assert one.late_events > 0  # the heap's late path was taken
        stats = schedtrace.TraceStats().consume(schedtrace.open_events(
            source, reorder_window=window)).finish()
        alone = schedtrace.TraceStats()
        for event in schedtrace.open_events(source, reorder_window=window):
            alone.add(event)
        alone.finish()
        assert stats.summary() == alone.summary()
        assert [t.as_dict() for t in stats.tasks] == [t.as_dict() for t in alone.tasks]


def _window_reference(events, window):
    """The reorder window's contract written plainly: every event pushed on a heap keyed by
    (ts, input order), the smallest popped once more than `window` are held; an event earlier
    than the last one popped is late."""
    import heapq

    heap, out, emitted, late = [], [], -1, 0
    for sequence, event in enumerate(events):
        if event.ts < emitted:
            late += 1
        heapq.heappush(heap, (event.ts, sequence, event))
        if len(heap) > window:
            emitted, _, smallest = heapq.heappop(heap)
            out.append(smallest)
    out += [event for _, _, event in sorted(heap)]
    return out, late


@pytest.mark.parametrize("window", [1, 3, 50, 20_000])
def test_the_reorder_window_gives_what_its_contract_says(tmp_path, window):
    """Ordered batches are appended whole (the parser says they are in order), the rest
    event by event, then a heap: the same order and late count as the plain reference, on
    ordered input, input shuffled locally and input with one event far out of order."""
    from bench.trace_ingest import write_trace
    from schedtrace.reader import _batches, _binary

    path = tmp_path / "ordered.trace"
    write_trace(path, 6_000, seed=9)
    lines = path.read_text().splitlines(keepends=True)
    shuffled = list(lines)
    rng = random.Random(window)
    for spot in range(2, len(lines) - 8, 89):
        piece = shuffled[spot:spot + 8]
        rng.shuffle(piece)
        shuffled[spot:spot + 8] = piece
    late_one = list(lines)
    late_one.insert(5_000, late_one.pop(40))
    for name, text in (("ordered", lines), ("shuffled", shuffled), ("late", late_one)):
        source = tmp_path / f"{name}.trace"
        source.write_text("".join(text))
        stream, compressed, raw, _ = _binary(str(source))
        parser = FtraceParser([], ReadState())
        in_input_order = [e for chunk in parser.parse(_batches(stream, compressed, []))
                          for e in chunk]
        raw.close()
        expected, late = _window_reference(in_input_order, window)
        reordered = schedtrace.open_events(source, reorder_window=window)
        got = [e for chunk in reordered.event_chunks() for e in chunk]
        assert [_event_key(e) for e in got] == [_event_key(e) for e in expected], name
        assert reordered.late_events == late
        if name == "late":
            assert late > 0 or window > 4_960


def _outcome(source, **options):
    """everything(), or the refusal a trace ends in (its type, message and line)."""
    try:
        return everything(source, **options)
    except schedtrace.TraceError as error:
        return ["refused", type(error).__name__, error.message, error.line]


def _accepted_variants(rng, lines, count, ascii_only):
    """Fixture lines and mutations of them that the general path reads (an event or a line
    it skips): a file of them is read to its end."""
    found = []
    while len(found) < count:
        text = rng.choice(lines)
        spot = rng.randrange(len(text) + 1)
        if rng.random() < 0.5:
            text = text[:spot] + rng.choice(MUTATIONS) + text[spot:]
        elif rng.random() < 0.3:
            text = text[:spot] + text[spot + rng.randint(1, 4):]
        if (ascii_only and not text.isascii()) or isinstance(_general(text), tuple) \
                and _general(text)[0] == "error":
            continue
        found.append(text)
    return found


@pytest.mark.parametrize("seed", range(8))
def test_hostile_files_read_the_same_both_ways(tmp_path, seed):
    """Files of fixture lines with accepted mutations among them, several 64 KB chunks long
    (so chunks cut lines anywhere): the fast path reads an ASCII chunk's lines where they lie
    in it (schedtrace.lines.parse_text), other chunks line by line; both against the general
    path. Seeds 4-7 add non-ASCII characters, CRLF endings, a NUL in a comm (refused
    with its line when NULs are refused), a refused line or a last line without its newline."""
    rng = random.Random(seed)
    lines = _accepted_variants(rng, _lines(), 4000, ascii_only=seed < 4)
    ending = "\r\n" if seed == 5 else "\n"
    if seed == 6:
        # the first line read as an event with a comm left after the mutations (which fixture
        # lines come first depends on the files in tests/fixtures/traces/)
        victim = next(line for line in lines if "comm=" in line and _general(line) is not None
                      and _general(line.replace("comm=", "comm=a\x00b", 1)) is not None)
        lines.insert(rng.randrange(100, 3900), victim.replace("comm=", "comm=a\x00b", 1))
    if seed == 7:
        lines.insert(rng.randrange(100, 3900), "  t-1 [000] d..2. 1.000001: sched_switch: x")
    text = ending.join(lines) + ("" if seed == 4 else ending)
    path = tmp_path / "hostile.trace"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    assert path.stat().st_size > 3 * 65536
    for options in ({}, {"max_ts": 2**63 - 1, "refuse_nul": True}, {"reorder_window": 5}):
        fast, general = _outcome(path, **options), _outcome(path, fast=False, **options)
        assert fast == general, options
        if seed in (6, 7) and options.get("refuse_nul", seed == 7):
            assert fast[0] == "refused" and fast[3] > 100


@pytest.mark.parametrize("at_line", [1, 150, 5000])
def test_an_overlong_line_is_refused_with_its_number(tmp_path, at_line):
    """A line over MAX_LINE characters is refused with its number, whether it comes while the
    format is being detected or later, on both paths; multi-byte characters count once."""
    from schedtrace.lines import MAX_LINE

    good = "  t-1 [000] d..2. 1.000001: sched_wakeup: comm=u pid=2 prio=120 target_cpu=000"
    head = "  t-1 [000] d..2. 1.000001: sched_wakeup: comm="
    long_line = head + "ü" * (MAX_LINE + 200_000)  # over the limit a few chunks before its end
    body = [good] * (at_line - 1) + [long_line] + [good] * 10
    path = tmp_path / "long.trace"
    path.write_text("\n".join(body) + "\n")
    for fast in (True, False):
        with pytest.raises(schedtrace.TraceError) as caught:
            list(schedtrace.open_events(path, fast=fast))
        assert caught.value.line == at_line
        assert caught.value.message == f"line longer than {MAX_LINE} characters"
    # as many bytes as the limit, but fewer characters: read
    fine = tmp_path / "fine.trace"
    fine.write_text("\n".join([good, head + "ü" * (MAX_LINE // 2 + 10), good]) + "\n")
    with pytest.raises(schedtrace.TraceError) as caught:  # the fields do not read
        list(schedtrace.open_events(fine))
    assert caught.value.line == 2 and "cannot read the fields" in caught.value.message


def test_the_reader_gives_the_lines_a_whole_decode_gives(tmp_path):
    """schedtrace.reader._batches cuts the bytes after a chunk's last newline before decoding:
    the lines are those of decoding the whole file at once ("replace") and splitting it at
    newlines (CRs before them removed), also with characters and broken sequences across
    the 64 KB chunk edges."""
    from schedtrace.lines import LAST_LINE, LINES, TEXT
    from schedtrace.reader import _batches, _binary

    rng = random.Random(7)
    plain = [b"ascii line", b"x" * 200, b" "]
    pieces = plain + ["ü€𝄞".encode(), b"\xff\xfe", b"\xe2\x82", b"\r"]
    for ending in (b"\n", b"\r\r", b""):
        # ASCII lines first (whole chunks of them are read in place), then mixed ones
        data = b"\n".join(b"".join(rng.choice(plain if number < 8000 else pieces)
                                   for _ in range(rng.randint(0, 6)))
                          for number in range(20_000)) + ending
        path = tmp_path / "mixed.bin"
        path.write_bytes(data)
        expected = data.decode("utf-8", "replace").split("\n")
        last = expected.pop()
        expected = [line[:-1] if line.endswith("\r") else line for line in expected]
        if last:  # the last line without a newline loses all its trailing CRs
            expected.append(last.rstrip("\r"))
        stream, compressed, raw, _ = _binary(str(path))
        got, kinds = [], set()
        for kind, lines, text, text_bytes in _batches(stream, compressed, []):
            kinds.add(kind)
            got += text.split("\n")[:-1] if kind == TEXT else lines
            assert text_bytes == (text.encode() if kind == TEXT else b"")
        raw.close()
        assert got == expected
        assert kinds >= {TEXT, LINES} and (LAST_LINE in kinds) == bool(last)


def test_names_reused_by_pid_are_the_names_each_line_gives(tmp_path):
    """The fast path hands out the str (and int) it made for a pid before when the line's bytes
    are the same (schedtrace.ftrace.Names). Names that change under one pid (exec: same
    length, one byte apart, shorter, longer), pids that share a cache slot (4096 apart) and
    prev/next/target names that differ from the prefix's must read as the general path reads
    them; a name seen again is the object made the first time."""
    rng = random.Random(3)
    pids = [1000, 1000 + 4096, 1000 + 2 * 4096, 2001, 77]
    names = ["alpha", "alphb", "alph", "alpha-1", "beta", "b", "gamma delta"]
    now, lines = 5_000_000_000, ["# tracer: nop"]
    for _ in range(3000):
        now += rng.randint(200, 9000)
        pid, other = rng.choice(pids), rng.choice(pids)
        head = f"{rng.choice(names) + '-' + str(pid):>24} [{rng.randrange(4):03d}] d..2. " \
               f"{now // 10**9}.{now % 10**9 // 1000:06d}: "
        if rng.random() < 0.5:
            lines.append(f"{head}sched_switch: prev_comm={rng.choice(names)} prev_pid={pid} "
                         f"prev_prio=120 prev_state=S ==> next_comm={rng.choice(names)} "
                         f"next_pid={other} next_prio=120")
        else:
            lines.append(f"{head}sched_wakeup: comm={rng.choice(names)} pid={other} prio=120 "
                         f"target_cpu=00{rng.randrange(4)}")
    path = tmp_path / "names.trace"
    path.write_text("\n".join(lines) + "\n")
    fast, general = everything(path), everything(path, fast=False)
    assert fast[8]["events"] == 3000
    assert fast == general
    first, second = (list(schedtrace.open_events(io.BytesIO(
        b"      gamma-12     [000] d..2. 1.000001: sched_wakeup: comm=beta pid=13 prio=120 "
        b"target_cpu=000\n" * 2))))
    assert first.comm == "gamma" and first.target_comm == "beta"
    assert second.comm is first.comm and second.target_comm is first.target_comm
    assert second.target_pid is first.target_pid


@pytest.mark.parametrize("bad", [b"\xff", b"\x80", b"\xc3"])
def test_an_invalid_byte_reads_the_same_both_ways(bad):
    """A byte that is not UTF-8 decodes to one U+FFFD: the text is as many characters as
    bytes, yet not ASCII (U+FFFD is 3 bytes of UTF-8). Read in place at the offsets of its
    encoding, the lines after it were misread (a next_prio of 1 for 120, names cut
    elsewhere); such text goes the line by line way."""
    lines = [b"# tracer: nop"]
    for i in range(40):
        comm = b"wo" + bad + b"ker" if i == 0 else b"worker"
        lines.append(b"%20s [000] d..2. 5.%06d: sched_switch: prev_comm=worker prev_pid=%d "
                     b"prev_prio=120 prev_state=S ==> next_comm=worker next_pid=%d "
                     b"next_prio=120" % (comm + b"-%d" % (100 + i), i, 100 + i, 101 + i))
    data = b"\n".join(lines) + b"\n"
    fast, general = everything(io.BytesIO(data)), everything(io.BytesIO(data), fast=False)
    assert fast == general
    assert [key[4] for key in fast[0][:2]] == ["wo\ufffdker", "worker"]
    assert all(dict(key[6])["next_prio"] == 120 for key in fast[0] if key[0] != "segment")

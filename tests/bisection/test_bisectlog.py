"""`git bisect log` text: what git writes (old and new layouts) parses; anything else is
refused naming its line; the portal's export reads back to the same session."""

import pytest

from benchmarks.errors import InputError
from bisection.bisectlog import BisectLogError, parse_bisect_log, render_bisect_log

MODERN = """\
git bisect start 'v6.8' 'v6.7'
# status: waiting for both good and bad commits
# bad: [e8f897f4afef0031fe618a8e94127a0934896aba] Linux 6.8
git bisect bad e8f897f4afef0031fe618a8e94127a0934896aba
# status: waiting for good commit(s), bad commit known
# good: [0dd3ee31125508cd67f7e7172247f05b7fd1753a] Linux 6.7
git bisect good 0dd3ee31125508cd67f7e7172247f05b7fd1753a
# good: [1111111111111111111111111111111111111111] sched/fair: tidy up
git bisect good 1111111111111111111111111111111111111111
# bad: [2222222222222222222222222222222222222222] sched/fair: wake up faster
git bisect bad 2222222222222222222222222222222222222222
# skip: [3333333333333333333333333333333333333333] merge branch
git bisect skip 3333333333333333333333333333333333333333
# first bad commit: [2222222222222222222222222222222222222222] sched/fair: wake up faster
"""

# Older git: comments before `start`, no status lines, no marks for the start arguments.
OLD = """\
# bad: [49914084e797530d9baaf51df9eda77babc98fa8] Linux 2.6.24
# good: [7dcca30a32aadb0520417521b0c44f42d09fe05c] Linux 2.6.22
git bisect start 'v2.6.24' 'v2.6.22'
# bad: [abcdef0123456789abcdef0123456789abcdef01] sched: cfs v24
git bisect bad abcdef0123456789abcdef0123456789abcdef01
"""


def test_modern_log_range_steps_and_end():
    log = parse_bisect_log(MODERN)
    assert log.bad == "e8f897f4afef0031fe618a8e94127a0934896aba"
    assert log.good == ["0dd3ee31125508cd67f7e7172247f05b7fd1753a"]
    assert [(m.verdict, m.commit[:4], m.line, m.subject) for m in log.steps] == [
        ("good", "1111", 9, "sched/fair: tidy up"),
        ("bad", "2222", 11, "sched/fair: wake up faster"),
        ("skip", "3333", 13, "merge branch")]
    assert log.first_bad.startswith("2222")
    assert log.first_bad_subject == "sched/fair: wake up faster"


def test_old_log_takes_the_range_from_start():
    log = parse_bisect_log(OLD)
    assert (log.bad, log.good) == ("v2.6.24", ["v2.6.22"])
    assert [(m.verdict, m.subject) for m in log.steps] == [("bad", "sched: cfs v24")]
    assert log.first_bad == ""


def test_hand_written_marks_set_the_range_until_both_ends_are_known():
    log = parse_bisect_log("git bisect start\ngit bisect bad v6.8\ngit bisect good v6.7\n"
                           "git bisect bad abc1234\n")
    assert (log.bad, log.good, [m.commit for m in log.steps]) == ("v6.8", ["v6.7"], ["abc1234"])


def test_custom_terms_and_paths():
    log = parse_bisect_log("git bisect start '--term-old=fast' '--term-new=slow' 'v6.8' 'v6.7'"
                           " '--' 'kernel/sched'\ngit bisect fast abc1234\n"
                           "git bisect slow def5678\n")
    assert [(m.verdict, m.commit) for m in log.steps] == [("good", "abc1234"),
                                                          ("bad", "def5678")]
    assert log.paths == ["kernel/sched"]


@pytest.mark.parametrize("text, line, words", [
    ("git bisect start\nhello world\n", 2, "expected `git bisect"),
    ("git bisect start\ngit bisect good\n", 2, "without a commit"),
    ("git bisect start\n\ngit bisect bad 'x y'\n", 3, "not a commit"),
    ("git bisect start\ngit bisect frobnicate abc1234\n", 2, "unknown command"),
    ("git bisect start\ngit bisect start\n", 2, "a second"),
    ("git bisect start 'v6.8\n", 1, "start arguments"),
    ("git bisect start --term-blue=x v6.8\n", 1, "unknown start option"),
    ("# only a comment\n", None, "no `git bisect` lines"),
    ("git bisect start\ngit bisect good abc\x00123\n", 2, "NUL"),
])
def test_what_does_not_parse_names_its_line(text, line, words):
    with pytest.raises(BisectLogError) as caught:
        parse_bisect_log(text)
    assert caught.value.line == line and caught.value.field == "log"
    assert words in caught.value.message and caught.value.status == 400


def test_not_text_and_too_long_are_refused():
    with pytest.raises(InputError):
        parse_bisect_log(["git bisect start"])
    with pytest.raises(InputError, match="longer"):
        parse_bisect_log("#" * 300_000)
    with pytest.raises(InputError, match="Unicode"):
        parse_bisect_log("git bisect start\n# good: [abc1234] \ud800\n")


def test_export_reads_back_to_the_same_session():
    text = render_bisect_log(bad="v6.8", good="v6.7", bad_subject="Linux 6.8",
                             good_subject="Linux 6.7",
                             steps=[("good", "abc1234", "one"), ("bad", "def5678", "two"),
                                    ("skip", "0123456", "")],
                             first_bad="def5678", first_bad_subject="two")
    log = parse_bisect_log(text)
    assert (log.bad, log.good) == ("v6.8", ["v6.7"])
    assert [(m.verdict, m.commit, m.subject) for m in log.steps] == [
        ("good", "abc1234", "one"), ("bad", "def5678", "two"), ("skip", "0123456", "")]
    assert (log.first_bad, log.first_bad_subject) == ("def5678", "two")


def test_a_pasted_terminal_session_gives_the_estimate():
    text = """\
$ git bisect start v6.8 v6.7
Bisecting: 675 revisions left to test after this (roughly 10 steps)
[1111111111111111111111111111111111111111] sched/fair: tidy up
git bisect start 'v6.8' 'v6.7'
git bisect good 1111111111111111111111111111111111111111
Bisecting: 337 revisions left to test after this (roughly 9 steps)
[2222222222222222222222222222222222222222] sched: two
"""
    with pytest.raises(BisectLogError) as caught:  # the shell prompt line is not git's
        parse_bisect_log(text)
    assert caught.value.line == 1
    log = parse_bisect_log(text.split("\n", 1)[1] + "2222222 is the first bad commit\n")
    assert log.estimate == (337, 10, 1)
    assert [m.commit[:4] for m in log.steps] == ["1111"] and log.first_bad == "2222222"

"""calibrate's sweep for the host's halt-polling window (docs/harness.md, "The host's
halt-polling window"): the step rule on written latencies, how the sweep's output is read, and
what lands in the calibration (halt_poll_us) and in details.halt_poll."""

import shutil

import pytest

from simulator.machine import MachineModel
from simulator.profiles import machine_tunables

from .test_calibrate import HELPER_OUTPUT, harness

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
SPANS = list(range(50, 401, 25))  # calibrate's sweep: 50-400 us of idle, 25 us apart


def sweep_of(*rounds):
    """{span: [round 1, round 2, ...]} from one latency list per round."""
    return {span: [r[i] for r in rounds] for i, span in enumerate(SPANS)}


# The shape this 2-vCPU guest showed (docs/simulator.md, "The burn-50 row and the host's halt
# polling"): ~16 us while the host still polls, ~20 us and slowly rising once it stopped.
STEP_AT_200 = [15.8, 15.9, 16.0, 16.2, 16.6, 16.5, 19.9, 20.3, 20.5, 20.8, 20.9, 21.0, 21.1,
               21.2, 21.3]


def test_a_clean_step_is_found_between_the_last_fast_and_the_first_slow_span(sb):
    k, below, jump = sb.find_halt_poll_step(STEP_AT_200)
    assert (SPANS[k - 1], SPANS[k]) == (175, 200)
    assert below == pytest.approx(16.1)  # the median of the six spans before the step
    assert jump == pytest.approx(19.9 - 16.6)


def test_no_step_in_flat_latencies(sb):
    assert sb.find_halt_poll_step([16.0] * 15) is None
    assert sb.find_halt_poll_step([20.0 + 0.01 * i for i in range(15)]) is None


def test_a_steady_climb_is_not_a_step(sb):
    # 0.5 us more per 25 us of idle, 15 to 22 us: past any fixed threshold, but never a jump
    assert sb.find_halt_poll_step([15.0 + 0.5 * i for i in range(15)]) is None


def test_a_step_that_falls_back_is_not_a_step(sb):
    fell_back = STEP_AT_200[:12] + [16.1, 16.2, 16.3]  # fast again from 350 us
    assert sb.find_halt_poll_step(fell_back) is None


def test_a_step_needs_two_spans_on_each_side(sb):
    assert sb.find_halt_poll_step([16.0] + [20.0] * 14) is None  # only 50 us fast
    assert sb.find_halt_poll_step([16.0] * 14 + [20.0]) is None  # only 400 us slow
    k, _, _ = sb.find_halt_poll_step([16.0] * 13 + [20.0] * 2)
    assert SPANS[k] == 375


def test_the_step_must_beat_ten_percent_and_one_microsecond(sb):
    # 10 % of 16 us is 1.6 us: a 1.5 us jump is not a step, a 1.7 us one is
    assert sb.find_halt_poll_step([16.0] * 7 + [17.5] * 8) is None
    assert sb.find_halt_poll_step([16.0] * 7 + [17.7] * 8)[0] == 7
    # below 10 us the 1 us floor rules: 0.9 us is not a step at 5 us, 1.1 us is
    assert sb.find_halt_poll_step([5.0] * 7 + [5.9] * 8) is None
    assert sb.find_halt_poll_step([5.0] * 7 + [6.1] * 8)[0] == 7


def test_noise_within_the_margin_leaves_the_step_where_it_is(sb):
    jitter = [0.4, -0.3, 0.2, -0.4, 0.3, -0.2, 0.4, -0.4, 0.1, -0.3, 0.4, -0.2, 0.3, -0.4, 0.2]
    noisy = [v + j for v, j in zip(STEP_AT_200, jitter, strict=True)]
    k, _, _ = sb.find_halt_poll_step(noisy)
    assert (SPANS[k - 1], SPANS[k]) == (175, 200)


def test_a_slow_outlier_among_the_fast_spans_hides_the_step(sb):
    # One short span as slow as the stepped ones: no jump clears it, so no window is claimed
    spiked = list(STEP_AT_200)
    spiked[2] = 20.5
    assert sb.find_halt_poll_step(spiked) is None


def test_the_window_is_the_middle_of_the_bracket_and_the_rounds_give_its_spread(sb):
    late = STEP_AT_200[:6] + [16.7] + STEP_AT_200[7:]  # this round steps at 225 us
    found = sb.halt_poll_from_sweep(sweep_of(STEP_AT_200, STEP_AT_200, late))
    assert found["measured"] is True
    assert found["halt_poll_us"] == 187.5 and found["bracket_us"] == [175, 200]
    assert found["round_estimates_us"] == [187.5, 187.5, 212.5]
    assert found["sweep"]["200"] == {"median": 19.9, "min": 16.7, "max": 19.9, "runs": 3}
    assert "175-200 us" in found["note"] and "3 of 3" in found["note"]


def test_no_step_leaves_the_window_unmeasured_and_says_so(sb):
    flat = [16.0 + 0.05 * i for i in range(15)]
    found = sb.halt_poll_from_sweep(sweep_of(flat, flat, flat))
    assert found["measured"] is False and found["halt_poll_us"] is None
    assert "no step" in found["note"] and "200 us" in found["note"]


def test_a_step_most_rounds_do_not_show_alone_is_not_trusted(sb):
    # The host stopped polling (it had other work) for the early spans of two rounds and the
    # late spans of another: the medians step, but only one round does on its own.
    busy_early = [20.0] * 6 + STEP_AT_200[6:]
    busy_late = STEP_AT_200[:9] + [16.5] * 6
    found = sb.halt_poll_from_sweep(sweep_of(STEP_AT_200, busy_early, busy_early, busy_late,
                                             busy_late))
    assert found["bracket_us"] == [175, 200]
    assert found["round_estimates_us"] == [187.5, None, None, None, None]
    assert found["measured"] is False and found["halt_poll_us"] is None
    assert "1 of 5 rounds" in found["note"]


def test_too_short_a_sweep_is_not_measured(sb):
    found = sb.halt_poll_from_sweep({50: [16.0], 75: [20.0], 100: [20.0]})
    assert found["measured"] is False and "too few" in found["note"]


def test_sweep_lines_are_read_apart_from_the_figures(sb):
    # With three rounds a sweep line has five fields, like a figure: it must not become one.
    text = (HELPER_OUTPUT + "halt_poll_sweep_us 50 16.1 15.9 16.0\n"
            "halt_poll_sweep_us 75 16.2 16.0 16.1\nhalt_poll_sweep_us x 1 2 3\n")
    figures, missing = sb.parse_helper_output(text)
    assert "halt_poll_sweep_us" not in figures and missing == {}
    assert sb.parse_sweep_output(text) == {50: [16.1, 15.9, 16.0], 75: [16.2, 16.0, 16.1]}
    _, missing = sb.parse_helper_output("halt_poll_sweep_us none only one CPU may be used\n")
    assert missing == {"halt_poll_sweep_us": "only one CPU may be used"}


def test_the_window_reaches_the_calibration_in_a_guest_only(sb):
    figures = sb.parse_helper_output(HELPER_OUTPUT)[0]
    found = sb.halt_poll_from_sweep(sweep_of(STEP_AT_200, STEP_AT_200, STEP_AT_200))
    guest = sb.derive_calibration(figures, "kvm", found)
    assert guest["halt_poll_us"] == 187.5
    assert machine_tunables(MachineModel.from_calibration(guest))["halt_poll_ns"] == 187_500
    unmeasured = sb.derive_calibration(figures, "kvm", {"measured": False})
    assert unmeasured["halt_poll_us"] is None  # null: the simulator keeps KVM's 200 us
    assert MachineModel.from_calibration(unmeasured).halt_poll_us == 200.0
    assert sb.derive_calibration(figures, "none", found)["halt_poll_us"] is None


def test_bare_metal_and_one_cpu_skip_the_sweep(sb):
    assert sb.halt_poll_plan("/nonexistent", "none", 1)[0] is None
    assert "not virtualised" in sb.halt_poll_plan("/nonexistent", "none", 1)[1]["note"]
    assert "one CPU" in sb.halt_poll_plan("/nonexistent", "kvm", None)[1]["note"]


def test_a_helper_built_before_the_sweep_is_not_asked_for_it(sb, tmp_path):
    old = tmp_path / "calibrate"
    old.write_text("#!/bin/sh\necho 'usage: calibrate [-a CPU] [-b CPU] [-c CPU,CPU,...] "
                   "[-r repeats] [-s scale]' >&2\nexit 2\n")
    old.chmod(0o755)
    sweep, found = sb.halt_poll_plan(str(old), "kvm", 1)
    assert sweep is None and found["measured"] is False and "build" in found["note"]


@needs_gcc
def test_the_built_helper_sweeps_when_asked(sb, tmp_path):
    built = harness("build", "--out", str(tmp_path))
    assert built.returncode == 0, built.stderr
    helper = str(tmp_path / "calibrate")
    assert sb.helper_can_sweep(helper)
    assert sb.halt_poll_plan(helper, "kvm", 1)[0] == sb.HALT_POLL_SPANS_US
    assert sb.halt_poll_plan(helper, "none", 1)[0] is None

"""bench/simulator_rsdl_chatroom.py's census (threads per role and state, kept from the
engine's wakeup / switch / exit hooks) against the run's own vmstat: docs/simulator.md's
explanation of what keeps the chat server's threads runnable rests on it."""

import importlib.util
import pathlib

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "simulator_rsdl_chatroom.py"
ROOMS = {
    "rooms": 4,
    "clients": 20,
    "messages": 40,
    "think_us": 50,
    "cs_us": 10,
    "lock": "yield",
    "jvm": "j9",
    "broadcast": 1,
}
FINE = {"vmstat_interval_ms": 1}  # vmstat samples each ms, close to the census' exact weights


def load_bench():
    spec = importlib.util.spec_from_file_location("simulator_rsdl_chatroom", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("kernel", "succession"), [("2.6.22", "competitive"), ("rsdl-0.31", "handoff")]
)
def test_census_agrees_with_vmstat_and_accounts_for_every_thread(kernel, succession):
    bench = load_bench()
    params = {**ROOMS, "succession": succession}
    means = bench.census(kernel, params, FINE)
    sampled = bench.run(kernel, 1, params, FINE)
    runnable = sum(v for key, v in means.items() if key.endswith("runnable"))
    threads = sum(v for key, v in means.items() if not key.endswith("idle CPUs"))
    assert threads == pytest.approx(4 * ROOMS["rooms"] * ROOMS["clients"])
    assert runnable == pytest.approx(sampled["r"], rel=0.02), (runnable, sampled["r"])
    assert means["all idle CPUs"] == pytest.approx(sampled["id"], abs=0.1)
    blocked_on_lock = sum(v for key, v in means.items() if key.endswith("blocked on the lock"))
    if sampled["spin_blocks"] == 0:  # no spinner gave up: none can wait on the lock
        assert blocked_on_lock == 0
    else:  # the hand-off convoy: more threads wait on the room locks than can run
        assert succession == "handoff" and blocked_on_lock > runnable, blocked_on_lock

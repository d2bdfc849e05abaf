"""How to measure a run again: the harness command line it was made with, or the simulator
command; for runs that came without one, the closest harness command the record allows."""

import shlex

from benchmarks.models import Run

HARNESS = "python3 schedbench.py"
PORTAL_ARGS = "--url $SCHEDBENCH_URL --token $SCHEDBENCH_TOKEN"
PLACEHOLDERS = {"$SCHEDBENCH_URL", "$SCHEDBENCH_TOKEN"}
# Options of a recorded command line that made that run special, not the measurement.
DROPPED_FLAGS = {"--dry-run", "-q", "--quiet"}
DROPPED_OPTIONS = {"--root", "--spool-dir"}


def _quote(arg: str) -> str:
    return arg if arg in PLACEHOLDERS else shlex.quote(arg)


def _recorded_harness(argv: list) -> str:
    """The recorded harness arguments, ready to paste (it submits: no --dry-run)."""
    kept, skip = [], False
    for position, arg in enumerate(argv):
        if skip:
            skip = False
            continue
        if arg == "--":
            kept.extend(argv[position:])
            break
        if arg in DROPPED_FLAGS:
            continue
        if arg in DROPPED_OPTIONS:
            skip = True
            continue
        if arg.split("=", 1)[0] in DROPPED_OPTIONS:
            continue
        kept.append(arg)
    # Without --url/--token the harness reads $SCHEDBENCH_URL and $SCHEDBENCH_TOKEN.
    return " ".join([HARNESS, *(_quote(str(a)) for a in kept)])


# The bundled threadtest (where `schedbench.py build` puts it) with the options that give the
# run's params: a bare `./threadtest` ran its default 10000 loops under a `--param loops=1000000`
# that the harness then recorded as measured.
THREADTEST_OPTIONS = (("iterations", "-n"), ("loops", "-l"))
THREADTEST_SWITCHES = (("yield_in_spin", "-y"), ("pin", "-a"), ("head_start_us", "-s"))


def _bundled_command(run: Run) -> list[str]:
    if run.benchmark.slug != "threadtest":
        return [f"./{run.benchmark.slug}"]
    params = run.params or {}
    # the -O0 build keeps the loop's counter in memory, as the threads' builds did
    binary = "threadtest-O0" if params.get("counter") == "memory" else "threadtest"
    command = [f"./schedbench-bin/{binary}"]
    for name, option in THREADTEST_OPTIONS:
        if params.get(name) not in (None, ""):
            command += [option, str(params[name])]
    command += [switch for name, switch in THREADTEST_SWITCHES if params.get(name)]
    return command


def _reconstructed_harness(run: Run, repeat: int) -> str:
    environment = run.environment or {}
    params = " ".join(f"--param {k}={v}" for k, v in sorted(run.params.items()))
    tunables_set = environment.get("tunables_set") or {}
    settings = " ".join(f"--set {k}={v}" for k, v in sorted(tunables_set.items())) \
        if isinstance(tunables_set, dict) else ""
    interval = environment.get("vmstat_interval_s")
    command = environment.get("command") or _bundled_command(run)
    command = " ".join(map(shlex.quote, map(str, command))) if isinstance(command, list) \
        else str(command)
    return " ".join(part for part in (
        f"{HARNESS} run {PORTAL_ARGS}", f"--benchmark {run.benchmark.slug}", params, settings,
        f"--repeat {max(1, repeat)}", f"--vmstat {interval:g}" if isinstance(
            interval, (int, float)) and interval else "", "--", command,
    ) if part)


def rerun_recipe(run: Run, repeat: int = 1) -> str:
    """`repeat` is how many samples the run has (used when no command line was recorded)."""
    environment = run.environment or {}
    simulated = environment.get("simulator") if run.source == "simulator" else None
    if isinstance(simulated, dict):
        return simulated.get("command") or f"python -m simulator run {simulated}"
    argv = environment.get("harness_argv")
    if isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv):
        return _recorded_harness(argv)
    return _reconstructed_harness(run, repeat)

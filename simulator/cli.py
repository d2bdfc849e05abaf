"""``python -m simulator list|run|sweep|replay`` (the CLI contract: docs/simulator.md)."""

import argparse
import itertools
import json
import sys

from . import catalog, render_text, run
from .errors import InvalidValueError, SimulatorError, UnknownNameError
from .profiles import PROFILES, tunable_specs
from .workloads import WORKLOADS


class CliError(SimulatorError):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line on stderr, never a usage dump
        raise CliError(message)


def _pairs(items, option):
    out = {}
    for item in items or []:
        if "=" not in item:
            raise InvalidValueError(option, f"{option} {item!r} is not name=value")
        name, value = item.split("=", 1)
        out[name.strip()] = value.strip()
    return out


def _add_run_options(sub):
    sub.add_argument("--workload", required=True)
    sub.add_argument("--kernel", required=True)
    sub.add_argument("--param", action="append", metavar="K=V")
    sub.add_argument("--set", action="append", metavar="TUNABLE=V", dest="tunables")
    group = sub.add_mutually_exclusive_group()
    group.add_argument("--cpus")
    group.add_argument("--topology")
    sub.add_argument("--seed", default="1")
    sub.add_argument("--repeat", default="1")
    sub.add_argument("--max-events", dest="max_events")
    sub.add_argument("--max-cpu-seconds", dest="max_cpu_seconds",
                     help="stop with an error after this much CPU time per repeat (default 300)")
    sub.add_argument("--trace", metavar="FILE")
    sub.add_argument("--trace-format", choices=["text", "ftrace"], default="text",
                     help="text: the engine's decisions, one per line; ftrace: the schedule "
                     "as ftrace text (sched_switch, sched_wakeup, ...) for trace tools")
    sub.add_argument("--machine", metavar="FILE",
                     help="a `schedbench.py calibrate --dry-run` JSON: its calibration, and "
                     "its topology unless --cpus/--topology is given")


def build_parser():
    parser = _Parser(prog="python -m simulator", description="schedbench scheduler simulator")
    subs = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    lst = subs.add_parser("list", help="workloads, kernel profiles, params and tunables")
    lst.add_argument("--format", choices=["text", "json"], default="text")
    run_p = subs.add_parser("run", help="run one simulation")
    _add_run_options(run_p)
    run_p.add_argument("--format", choices=["text", "json"], default="text")
    sweep = subs.add_parser("sweep", help="run a grid; one JSON line per point")
    _add_run_options(sweep)
    sweep.add_argument("--sweep", action="append", required=True, metavar="NAME=V1,V2,...")
    sweep.add_argument("--format", choices=["json"], default="json")
    rep = subs.add_parser("replay", help="rebuild a workload from a real trace and run it")
    rep.add_argument("--trace", required=True, metavar="FILE")
    rep.add_argument("--kernel", required=True)
    group = rep.add_mutually_exclusive_group()
    group.add_argument("--cpus")
    group.add_argument("--topology")
    rep.add_argument("--machine", metavar="FILE")
    rep.add_argument("--set", action="append", metavar="TUNABLE=V", dest="tunables")
    rep.add_argument("--seed", default="1")
    rep.add_argument("--no-others", dest="others", action="store_false",
                     help="leave out the CPU time other programs took during the recording "
                     "(the harness's \"other\" tasks); kept by default")
    rep.add_argument("--autogroup", choices=["auto", "on", "off"], default="auto",
                     help="each recorded session in its own task group, the other programs in "
                     "theirs (on) or every task in the root group (off); auto: as the "
                     "recording says, on when it does not say (docs/simulator.md, Autogroup)")
    rep.add_argument("--format", choices=["text", "json"], default="text")
    return parser


def _replay(args, out):
    from .replay import replay
    topology, machine = args.topology, None
    if args.machine is not None:
        calibrate_json = _read_machine_file(args.machine)
        machine = calibrate_json["calibration"]
        if args.cpus is None and topology is None:
            topology = _machine_topology(calibrate_json.get("machine"), args.machine)
    result = replay(args.trace, args.kernel, cpus=args.cpus, topology=topology,
                    machine=machine, tunables=_pairs(args.tunables, "--set"), seed=args.seed,
                    others=args.others,
                    autogroup={"auto": None, "on": True, "off": False}[args.autogroup])
    if args.format == "json":
        out.write(json.dumps(result, indent=2) + "\n")
        return
    out.write(f"replay of {args.trace} on {result['kernel']} ({result['topology']}): makespan "
              f"{result['makespan_ms']:.3f} ms (recorded {result['real']['makespan_ms']:.3f} ms)\n")
    for row in result["tasks"]:
        out.write(f"  {row['comm']:>16}-{row['pid']:<7} run {row['runtime_ms']:10.3f} ms  wait "
                  f"{row['wait_sum_ms']:9.3f} ms  switches {row['switches']}\n")


def _spec(args):
    spec = {"workload": args.workload, "kernel": args.kernel,
            "params": _pairs(args.param, "--param"), "tunables": _pairs(args.tunables, "--set"),
            "seed": args.seed, "repeat": args.repeat}
    if args.cpus is not None:
        spec["cpus"] = args.cpus
    if args.topology is not None:
        spec["topology"] = args.topology
    if args.max_events is not None:
        spec["max_events"] = args.max_events
    if getattr(args, "max_cpu_seconds", None) is not None:
        spec["max_cpu_seconds"] = args.max_cpu_seconds
    if args.machine is not None:
        calibrate_json = _read_machine_file(args.machine)
        spec["machine"] = calibrate_json["calibration"]
        if args.cpus is None and args.topology is None:
            spec["topology"] = _machine_topology(calibrate_json.get("machine"), args.machine)
    return spec


MAX_MACHINE_FILE = 1 << 20


def _read_machine_file(path):
    """The calibrate JSON in ``path``; only its ``calibration`` and ``machine`` are used."""
    with open(path, encoding="utf-8") as f:
        text = f.read(MAX_MACHINE_FILE + 1)
    if len(text) > MAX_MACHINE_FILE:
        raise InvalidValueError("machine", f"{path}: larger than {MAX_MACHINE_FILE} bytes")
    if not text.strip():
        raise InvalidValueError("machine", f"{path}: the file is empty (a calibration that "
                                "calibrate refused, exit status 4, writes nothing to stdout: "
                                "calibrate again on a quiet machine or pass --accept-noisy)")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InvalidValueError("machine", f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("calibration"), dict):
        raise InvalidValueError("machine", f"{path}: no \"calibration\" object (write one with "
                                "schedbench.py calibrate --dry-run)")
    return data


def _machine_topology(machine, path):
    """SxCxT from the machine description the harness records with a calibration."""
    parts = [machine.get(k) if isinstance(machine, dict) else None
             for k in ("sockets", "cores_per_socket", "threads_per_core")]
    if not all(isinstance(p, int) and not isinstance(p, bool) and p > 0 for p in parts):
        raise InvalidValueError("machine", f"{path}: its \"machine\" gives no topology "
                                "(sockets, cores_per_socket, threads_per_core); pass --cpus or "
                                "--topology")
    return "x".join(str(p) for p in parts)


def _list_text():
    lines = ["workloads:"]
    for name, w in WORKLOADS.items():
        lines.append(f"  {name}: metrics {', '.join(w.metrics)}")
        lines.extend(f"    --param {p}={s['default']!r}  ({s['type']}) {s['help']}"
                     for p, s in w.params.items())
    lines.append("kernels:")
    for name, prof in PROFILES.items():
        lines.append(f"  {name} [{prof['family']}]: {prof['description']}")
        lines.extend(f"    --set {t}={s['default']!r}  ({s['type']}) {s['help']}"
                     for t, s in tunable_specs(name).items())
    return "\n".join(lines) + "\n"


def _apply_point(spec, point):
    """Put one sweep value in the right place: a param, a tunable, or the kernel/cpus field."""
    spec = {**spec, "params": dict(spec["params"]), "tunables": dict(spec["tunables"])}
    for name, value in point:
        if name in ("kernel", "cpus", "topology", "seed"):
            spec[name] = value
        elif spec["workload"] in WORKLOADS and (
                name in WORKLOADS[spec["workload"]].params
                or name in getattr(WORKLOADS[spec["workload"]], "aliases", {})):
            spec["params"][name] = value
        elif spec["kernel"] in PROFILES and name in tunable_specs(spec["kernel"]):
            spec["tunables"][name] = value
        else:
            valid = list(WORKLOADS[spec["workload"]].params) if spec["workload"] in WORKLOADS \
                else []
            raise UnknownNameError("sweep", "sweep name", name,
                                   valid + ["kernel", "cpus", "topology", "seed", "<tunable>"])
    return spec


def _sweep(args, out, trace):
    axes = []
    for item in args.sweep:
        if "=" not in item:
            raise InvalidValueError("sweep", f"--sweep {item!r} is not name=v1,v2,...")
        name, values = item.split("=", 1)
        axes.append([(name.strip(), v.strip()) for v in values.split(",") if v.strip()])
    base = _spec(args)
    for point in itertools.product(*axes):
        result = run(_apply_point(base, point), trace=trace, trace_format=args.trace_format)
        out.write(json.dumps(result, sort_keys=False) + "\n")
        out.flush()


NOISY_WARNING = ("warning: {path}: this calibration is marked noisy (the machine was busy or "
                 "its figures spread widely when it was measured); the results carry the mark "
                 "and should not be trusted as predictions\n")


def _warn_noisy(args, err):
    if args.machine is not None and _read_machine_file(args.machine)["calibration"].get("noisy"):
        err.write(NOISY_WARNING.format(path=args.machine))


def _run(args, out):
    trace = open(args.trace, "w") if args.trace else None  # noqa: SIM115 - closed below
    try:
        if args.command == "sweep":
            _sweep(args, out, trace)
            return
        result = run(_spec(args), trace=trace, trace_format=args.trace_format)
        out.write(json.dumps(result, indent=2) + "\n" if args.format == "json"
                  else render_text(result))
    finally:
        if trace is not None:
            trace.close()


def main(argv=None, out=None, err=None):
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        args = build_parser().parse_args(argv)
        if args.command == "list":
            out.write(json.dumps(catalog(), indent=2) + "\n" if args.format == "json"
                      else _list_text())
        elif args.command == "replay":
            _replay(args, out)
            _warn_noisy(args, err)
        else:
            _run(args, out)
            _warn_noisy(args, err)
    except SimulatorError as exc:
        err.write(f"error: {' '.join(str(exc).split())}\n")
        return 2
    except OSError as exc:
        err.write(f"error: {exc.strerror or exc}: {getattr(exc, 'filename', '')}\n")
        return 2
    except KeyboardInterrupt:
        err.write("error: interrupted\n")
        return 130
    except (RecursionError, MemoryError, ValueError, TypeError, OverflowError) as exc:
        # a bug or an input no check foresaw: still one line, never a traceback
        err.write(f"error: input could not be simulated ({exc.__class__.__name__}: "
                  f"{' '.join(str(exc).split())[:200]})\n")
        return 2
    return 0

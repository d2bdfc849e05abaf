#!/usr/bin/env python3
"""schedbench harness: run a scheduler benchmark, record the machine, submit the results.

One file, Python standard library only, Python 3.8 or later, any Linux box.

    python3 schedbench.py run --url URL --token TOKEN --benchmark NAME \\
        [--param k=v ...] [--set tunable=v ...] [--repeat N] [--vmstat SECONDS] \\
        [--label TEXT] [--dry-run] -- COMMAND [ARGS...]
    python3 schedbench.py flush [--url URL] [--token TOKEN]
    python3 schedbench.py build [--out DIR] [--cflags=FLAGS]
    python3 schedbench.py env
    python3 schedbench.py calibrate [--url URL --token TOKEN] [--dry-run]

The token and URL may also come from SCHEDBENCH_TOKEN and SCHEDBENCH_URL, the spool
directory from SCHEDBENCH_SPOOL. URLs of the created runs go to stdout; progress, the
benchmark's own output and warnings go to stderr, so `run --dry-run | jq` works.

Exit status: 0 done; 1 rejected by the portal or another error; 2 usage; 3 (`run
--fail-on-regression` only) stored, and the portal's verdict against the previous kernel is
a regression; 75 the submission was spooled (send it later with `flush`); otherwise the
benchmark's own failing exit status.
"""

import argparse
import contextlib
import glob
import gzip
import http.client
import json
import math
import os
import re
import shlex
import shutil
import socket
import stat
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

HARNESS_VERSION = "1.0.0"
UPLOAD_PATH = "/api/v1/uploads/"
DEFAULT_SPOOL = os.path.join("~", ".cache", "schedbench", "spool")
DEFAULT_CFLAGS = "-O2 -Wall"
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_REGRESSION = 3  # run --fail-on-regression: stored, and slower than the previous kernel
EXIT_NOISY = 4  # calibrate: the box was busy or the figures spread too widely; nothing sent
EXIT_SPOOLED = 75  # EX_TEMPFAIL: the data is safe, try again later
MAX_BACKOFF = 30.0
SOURCES_HINT = (
    "The benchmark sources (threadtest.c, threadtest_burn.c, yieldloop.c, rqfill.c,\n"
    "pipeline.sh) live in the schedbench repository under harness/src/ and are served by the\n"
    "portal at URL/harness/src/. Pass --url URL (or set SCHEDBENCH_URL) to fetch them, put\n"
    "that src/ directory next to this script, or pass --src DIR."
)
SOURCES_PATH = "/harness/src/"
SOURCE_NAME = re.compile(r"[a-z0-9_]{1,40}\.(c|sh)")
# Scheduler knobs outside the sched_* namespace: RSDL/SD, BFS/MuQSS and NUMA balancing.
EXTRA_KERNEL_TUNABLES = ("rr_interval", "iso_cpu", "yield_type", "interactive", "compute",
                         "numa_balancing")
# debugfs files that are dumps or are reported elsewhere, not tunables.
DEBUGFS_SKIP = ("features", "debug", "verbose")
KCONFIG_RE = re.compile(
    r"^(CONFIG_(?:HZ|HZ_\d+|PREEMPT(?:_NONE|_VOLUNTARY|_DYNAMIC|_RT|_LAZY)?|NO_HZ(?:_IDLE|_FULL)?"
    r"|SCHED_(?:AUTOGROUP|SMT|MC|CLUSTER|CORE|CLASS_EXT|HRTICK|BFS|MUQSS|ALT|BMQ|PDS)"
    r"|(?:FAIR|RT)_GROUP_SCHED|CGROUP_SCHED|NUMA_BALANCING))=(.*)$", re.M)
VIRT_PATTERNS = (
    ("qemu", "qemu"), ("kvm", "kvm"), ("vmware", "vmware"), ("xen", "xen"),
    ("innotek", "oracle"), ("virtualbox", "oracle"), ("parallels", "parallels"),
    ("microsoft corporation virtual machine", "microsoft"), ("amazon ec2", "amazon"),
    ("google compute engine", "google"), ("bochs", "bochs"), ("bhyve", "bhyve"),
    ("openstack", "kvm"), ("firecracker", "firecracker"), ("cloud hypervisor", "kvm"),
)
_INT_RE = re.compile(r"[+-]?\d+\Z")
_FLOAT_RE = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?\Z")
_SUFFIX_RE = re.compile(r"(\d+(?:\.\d+)?)([kKmMgG])\Z")
_SUFFIXES = {"k": 10 ** 3, "m": 10 ** 6, "g": 10 ** 9}

QUIET = False


def log(message):
    if not QUIET:
        sys.stderr.write(f"schedbench: {message}\n")
        sys.stderr.flush()


def warn(message):
    sys.stderr.write(f"schedbench: {message}\n")
    sys.stderr.flush()


class UsageError(Exception):
    pass


# --------------------------------------------------------------------------------------
# Reading /proc and /sys. Every reader takes `root` so tests can point it at a fake tree.
# --------------------------------------------------------------------------------------

def under(root, path):
    return os.path.join(root, path.lstrip("/"))


def read_text(root, path, limit=1 << 20):
    try:
        with open(under(root, path), encoding="utf-8", errors="replace") as f:
            return f.read(limit)
    except OSError:  # missing, unreadable (debugfs as non-root), or a directory
        return None


def read_value(root, path):
    text = read_text(root, path, limit=65536)
    if text is None:
        return None
    text = text.strip()
    return text if text else None


def to_number(text):
    """'42' -> 42, '0.5' -> 0.5; anything else (including 'nan', '0x10') stays text."""
    if not isinstance(text, str):
        return text
    s = text.strip()
    if _INT_RE.match(s):
        return int(s)
    if _FLOAT_RE.match(s):
        return float(s)
    return text


def glob_under(root, pattern):
    return sorted(glob.glob(under(root, pattern)))


def cpu_sort_key(path):
    digits = re.findall(r"\d+", os.path.basename(path.rstrip("/")))
    return int(digits[-1]) if digits else -1


def read_uname(root):
    """os.uname(), with release/version/hostname taken from /proc/sys/kernel when readable."""
    u = os.uname()
    info = {"sysname": u.sysname, "nodename": u.nodename, "release": u.release,
            "version": u.version, "machine": u.machine}
    for key, name in (("sysname", "ostype"), ("nodename", "hostname"),
                      ("release", "osrelease"), ("version", "version")):
        value = read_value(root, "/proc/sys/kernel/" + name)
        if value:
            info[key] = value
    return info


# A kernel built from git with CONFIG_LOCALVERSION_AUTO names its commit: 6.8.0-rc3-00042-
# gabcdef123456 (-dirty when the tree had local changes). Same rule as the portal's
# benchmarks/identity/commits.py; tests/harness checks they agree.
KERNEL_COMMIT = re.compile(r"(?:^|[-+.~_])g([0-9a-f]{7,40})(?=$|[-+.~_])")
KERNEL_DIRTY = re.compile(r"-dirty(?:$|[-+.~_])")


def kernel_commit(release, proc_version=""):
    """(commit id or None, dirty) from `uname -r`, else from /proc/version's release."""
    candidates = [release or ""]
    words = (proc_version or "").split()
    if len(words) >= 3 and words[:2] == ["Linux", "version"]:
        candidates.append(words[2])
    for text in candidates:
        found = KERNEL_COMMIT.findall(text)
        if found:
            return found[-1], bool(KERNEL_DIRTY.search(text))
    return None, False


def read_cpuinfo(root):
    """/proc/cpuinfo as a list of dicts, one per blank-line separated block, keys lowercased."""
    text = read_text(root, "/proc/cpuinfo", limit=8 << 20) or ""
    blocks, current = [], {}
    for line in text.splitlines():
        if not line.strip():
            if current:
                blocks.append(current)
            current = {}
            continue
        key, sep, value = line.partition(":")
        if sep:
            current[key.strip().lower()] = value.strip()
    if current:
        blocks.append(current)
    return blocks


def cpu_model(cpuinfo):
    # x86 says "model name"; ppc "cpu"; riscv "uarch"; 32-bit ARM "processor" (text).
    for key in ("model name", "cpu model", "cpu", "uarch", "hardware", "processor"):
        for block in cpuinfo:
            value = block.get(key)
            if value and not value.isdigit():
                return value
    for block in cpuinfo:  # arm64 gives only implementer/part ids
        if "cpu implementer" in block:
            implementer, part = block["cpu implementer"], block.get("cpu part", "?")
            return f"ARM implementer {implementer} part {part}"
    return None


def cpu_flags(cpuinfo):
    for block in cpuinfo:
        flags = block.get("flags") or block.get("features")
        if flags:
            return flags.split()
    return []


def count_topology(entries):
    """entries: one (package, die, core) tuple per logical CPU."""
    logical = len(entries)
    sockets = len({e[0] for e in entries}) or 1
    cores = len(set(entries)) or 1
    return {"cpus": logical, "sockets": sockets,
            "cores_per_socket": max(1, cores // sockets),
            "threads_per_core": max(1, int(round(logical / float(cores))))}


def topology_from_sysfs(root):
    entries = []
    for cpu in sorted(glob_under(root, "/sys/devices/system/cpu/cpu[0-9]*"), key=cpu_sort_key):
        rel = os.path.relpath(cpu, root)
        package = read_value(root, rel + "/topology/physical_package_id")
        core = read_value(root, rel + "/topology/core_id")
        if package is None or core is None:
            continue  # offline CPUs have no topology directory
        # core_id can repeat across the dies of one package, so the die is part of the key.
        die = read_value(root, rel + "/topology/die_id") or "0"
        entries.append((package, die, core))
    return entries


def topology_from_cpuinfo(cpuinfo):
    entries = []
    for index, block in enumerate(cpuinfo):
        if "processor" not in block:
            continue
        package = block.get("physical id", "0")
        core = block.get("core id", str(index))
        entries.append((package, "0", core))
    return entries


def read_topology(root, cpuinfo=None):
    entries = topology_from_sysfs(root)
    if not entries:
        entries = topology_from_cpuinfo(cpuinfo if cpuinfo is not None else read_cpuinfo(root))
    if not entries:
        return {"cpus": None, "sockets": None, "cores_per_socket": None,
                "threads_per_core": None}
    return count_topology(entries)


def read_caches(root, cpu="cpu0"):
    """{"L1d": "32K", "L1i": "32K", "L2": "1024K", "L3": "32768K"} from sysfs cache indices."""
    caches = {}
    base = f"/sys/devices/system/cpu/{cpu}/cache"
    for index in sorted(glob_under(root, base + "/index[0-9]*"), key=cpu_sort_key):
        rel = os.path.relpath(index, root)
        level = read_value(root, rel + "/level")
        size = read_value(root, rel + "/size")
        if not level or not size:
            continue
        kind = read_value(root, rel + "/type") or ""
        suffix = {"Data": "d", "Instruction": "i"}.get(kind, "")
        caches[f"L{level}{suffix}"] = size
    return caches


def read_meminfo(root):
    info = {}
    for line in (read_text(root, "/proc/meminfo") or "").splitlines():
        key, sep, value = line.partition(":")
        fields = value.split()
        if sep and fields and fields[0].isdigit():
            info[key.strip()] = int(fields[0])  # kB
    return info


def read_memory_mb(root):
    total = read_meminfo(root).get("MemTotal")
    return total // 1024 if total is not None else None


def read_proc_tunables(root):
    tunables = {}
    names = [os.path.basename(p) for p in glob_under(root, "/proc/sys/kernel/sched_*")]
    for name in names + list(EXTRA_KERNEL_TUNABLES):
        value = read_value(root, "/proc/sys/kernel/" + name)
        if value is not None:
            tunables[name] = to_number(value)
    return tunables


# --------------------------------------------------------------------------------------
# Setting tunables for one run (--set), put back afterwards
# --------------------------------------------------------------------------------------

TUNABLE_NAME_RE = re.compile(r"^[A-Za-z0-9_]+$")


def tunable_path(root, name):
    """Where a tunable lives: /proc/sys/kernel/NAME, else its debugfs home (5.13+)."""
    name = name[len("kernel."):] if name.startswith("kernel.") else name
    if not TUNABLE_NAME_RE.match(name):
        raise UsageError(f"--set: {name!r} is not a tunable name")
    candidates = ["/proc/sys/kernel/" + name]
    if name.startswith("sched_"):
        candidates.append("/sys/kernel/debug/sched/" + name[len("sched_"):])
    for path in candidates:
        if os.path.isfile(under(root, path)):
            return name, under(root, path)
    raise UsageError(f"--set: no tunable {name} here (looked for {', '.join(candidates)})")


def parse_settings(items, root):
    """--set NAME=VALUE items -> [(name, path, value text)], checked before anything runs."""
    settings = []
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"--set wants tunable=value, got {item!r}")
        name, path = tunable_path(root, key.strip())
        settings.append((name, path, value.strip()))
    return settings


def write_tunable(path, value):
    try:
        with open(path, "w", encoding="ascii") as f:
            f.write(value + "\n")
    except OSError as err:
        raise UsageError(f"--set: cannot write {path} ({err.strerror}); run as root?") from None


class TunablesSet:
    """Writes the --set values, and the values found before back when the run is over."""

    def __init__(self, settings):
        self.settings = settings
        self.previous = []

    def __enter__(self):
        for name, path, value in self.settings:
            with open(path, encoding="ascii", errors="replace") as f:
                self.previous.append((path, f.read().strip()))
            write_tunable(path, value)
            log(f"set {name} = {value}")
        return {name: to_number(value) for name, _, value in self.settings}

    def __exit__(self, *exc):
        for path, value in reversed(self.previous):
            try:
                write_tunable(path, value)
            except UsageError as err:
                warn(f"could not restore: {err}")
        return False


def recorded_argv(argv):
    """The harness's own command line as typed, minus secrets: the token never leaves the
    box, and the URL becomes a variable so the recipe works against any portal."""
    recorded, hide = [], None
    for arg in argv:
        if hide:
            recorded.append(hide)
            hide = None
            continue
        if arg in ("--token", "--url"):
            hide = "$SCHEDBENCH_TOKEN" if arg == "--token" else "$SCHEDBENCH_URL"
        elif arg.startswith("--token="):
            arg = "--token=$SCHEDBENCH_TOKEN"
        elif arg.startswith("--url="):
            arg = "--url=$SCHEDBENCH_URL"
        recorded.append(arg)
    return recorded


def read_debugfs_tunables(root):
    """Since 5.13 most sched_* knobs live in /sys/kernel/debug/sched/ without the prefix.

    They get their old /proc names back (latency_ns -> sched_latency_ns) so runs on old
    and new kernels can be compared by one name.
    """
    tunables = {}
    for path in glob_under(root, "/sys/kernel/debug/sched/*"):
        name = os.path.basename(path)
        if name in DEBUGFS_SKIP or not os.path.isfile(path):
            continue
        value = read_value(root, "/sys/kernel/debug/sched/" + name)
        if value is not None:
            key = name if name.startswith("sched_") else "sched_" + name
            tunables[key] = to_number(value)
    for path in glob_under(root, "/sys/kernel/debug/sched/numa_balancing/*"):
        name = os.path.basename(path)
        value = read_value(root, "/sys/kernel/debug/sched/numa_balancing/" + name)
        if value is not None:
            tunables["numa_balancing_" + name] = to_number(value)
    return tunables


def read_kernel_config(root, release):
    """Scheduler-relevant CONFIG_ lines from /boot/config-<release> or /proc/config.gz."""
    text = read_text(root, f"/boot/config-{release}", limit=16 << 20)
    if text is None:
        try:
            with gzip.open(under(root, "/proc/config.gz"), "rt", errors="replace") as f:
                text = f.read(16 << 20)
        except (OSError, EOFError):
            return {}
    return {m.group(1): m.group(2).strip('"') for m in KCONFIG_RE.finditer(text)}


def read_tunables(root, kernel_config=None):
    tunables = read_debugfs_tunables(root)
    tunables.update(read_proc_tunables(root))  # /proc wins where a knob exists in both
    hz = (kernel_config or {}).get("CONFIG_HZ")
    if hz is not None:
        tunables["HZ"] = to_number(hz)
    return tunables


def read_sched_features(root):
    # 5.13+ moved the file into the sched/ directory.
    for path in ("/sys/kernel/debug/sched/features", "/sys/kernel/debug/sched_features"):
        value = read_value(root, path)
        if value is not None:
            return value
    return None


def read_sched_domains(root, cpu="cpu0"):
    """One CPU's scheduling domains (name, flags, intervals) from procfs or debugfs."""
    domains = {}
    for base in ("/sys/kernel/debug/sched/domains/", "/proc/sys/kernel/sched_domain/"):
        for domain in glob_under(root, base + cpu + "/domain[0-9]*"):
            values = {}
            for path in sorted(glob.glob(os.path.join(domain, "*"))):
                value = read_value(root, os.path.relpath(path, root))
                if value is not None and os.path.isfile(path):
                    values[os.path.basename(path)] = to_number(value)
            domains[os.path.basename(domain)] = values
        if domains:
            break
    return domains


def read_governor(root):
    """The cpufreq governor; "a,b" when CPUs disagree, None without cpufreq."""
    found = set()
    for path in glob_under(root, "/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"):
        value = read_value(root, os.path.relpath(path, root))
        if value:
            found.add(value)
    return ",".join(sorted(found)) if found else None


def read_cpufreq_driver(root):
    return read_value(root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver")


def run_detect_virt():
    """systemd-detect-virt --vm, or None when the tool is missing or says nothing useful."""
    tool = shutil.which("systemd-detect-virt")
    if not tool:
        return None
    try:
        proc = subprocess.run([tool, "--vm"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    answer = proc.stdout.decode("utf-8", "replace").strip()
    return answer if proc.returncode == 0 and answer and answer != "none" else None


def detect_virtualization(root, cpuinfo=None, use_tool=None):
    """A VM type ("kvm", "vmware", ...), "none" on bare metal, None when nothing tells.

    systemd-detect-virt is only asked about the live system (root "/"); then the DMI
    vendor strings; then the CPU's hypervisor flag, which says "a VM" but not which.
    """
    if use_tool is None:
        use_tool = os.path.abspath(root) == "/"
    if use_tool:
        answer = run_detect_virt()
        if answer:
            return answer
    dmi = " ".join(filter(None, (read_value(root, "/sys/class/dmi/id/sys_vendor"),
                                 read_value(root, "/sys/class/dmi/id/product_name"))))
    for pattern, name in VIRT_PATTERNS:
        if pattern in dmi.lower():
            return name
    flags = cpu_flags(cpuinfo if cpuinfo is not None else read_cpuinfo(root))
    if "hypervisor" in flags:
        return "unknown-vm"
    if dmi or flags:
        return "none"
    return None


def read_hostname(root):
    return read_value(root, "/proc/sys/kernel/hostname") or socket.gethostname()


def collect_machine(root, uname, cpuinfo):
    topology = read_topology(root, cpuinfo)
    return {
        "name": read_hostname(root),
        "cpu_model": cpu_model(cpuinfo),
        "arch": uname["machine"],
        "sockets": topology["sockets"],
        "cores_per_socket": topology["cores_per_socket"],
        "threads_per_core": topology["threads_per_core"],
        "caches": read_caches(root),
        "memory_mb": read_memory_mb(root),
        "virtualization": detect_virtualization(root, cpuinfo),
    }, topology["cpus"]


def collect_environment(root="/"):
    """Everything recorded about the box: {"kernel", "machine", "tunables", "environment"}."""
    uname = read_uname(root)
    cpuinfo = read_cpuinfo(root)
    machine, cpus = collect_machine(root, uname, cpuinfo)
    kconfig = read_kernel_config(root, uname["release"])
    commit, dirty = kernel_commit(uname["release"], read_value(root, "/proc/version"))
    found = {
        "kernel": uname["release"],
        "machine": machine,
        "tunables": read_tunables(root, kconfig),
        "environment": {
            "cmdline": read_value(root, "/proc/cmdline"),
            "governor": read_governor(root),
            "cpufreq_driver": read_cpufreq_driver(root),
            "sched_features": read_sched_features(root),
            "sched_domains": read_sched_domains(root),
            "kernel_config": kconfig,
            "online_cpus": cpus,
            "uname": uname,
        },
    }
    if commit:
        found["environment"].update({"kernel_commit": commit, "kernel_dirty": dirty})
    return found


# --------------------------------------------------------------------------------------
# How busy the box is: other runnable tasks and steal time (docs/calibration.md, Load)
# --------------------------------------------------------------------------------------

# Busy: on average more than this many tasks besides the reader were runnable while it
# sampled. One other task runnable half the time takes a CPU a measurement (or a two-thread
# benchmark) wants half the time.
BUSY_RUNNABLE = 0.5
BUSY_STEAL_PCT = 5.0  # the hypervisor ran something else for more than this share of CPU time
LOAD_SAMPLES = 5
LOAD_INTERVAL_S = 0.1


def read_stat_load(root):
    """(the aggregate cpu jiffies, user..steal, or None; procs_running or None) of /proc/stat."""
    cpu = running = None
    for line in (read_text(root, "/proc/stat") or "").splitlines():
        fields = line.split()
        if fields[:1] == ["cpu"] and all(f.isdigit() for f in fields[1:9]):
            cpu = [int(f) for f in fields[1:9]] + [0] * (8 - len(fields[1:9]))
        elif fields[:1] == ["procs_running"] and len(fields) == 2 and fields[1].isdigit():
            running = int(fields[1])
    return cpu, running


def read_loadavg(root):
    fields = (read_value(root, "/proc/loadavg") or "").split()
    values = [to_number(f) for f in fields[:3]]
    return values if len(values) == 3 and all(isinstance(v, float) for v in values) else None


def steal_pct(before, after):
    """The steal share of all CPU time between two /proc/stat cpu lines, %; None if unknown."""
    if before is None or after is None:
        return None
    total = sum(after) - sum(before)
    return round(100.0 * (after[7] - before[7]) / total, 2) if total > 0 else None


def sample_load(root="/", samples=LOAD_SAMPLES, interval=LOAD_INTERVAL_S, own=1):
    """How busy the box is now: tasks runnable besides `own` (procs_running counts the reader
    itself), averaged over `samples` reads `interval` apart, and their maximum; the steal
    share of CPU time over that window; the load averages. None for what /proc does not show."""
    counts, first, last = [], None, None
    for index in range(samples):
        cpu, running = read_stat_load(root)
        first = cpu if first is None else first
        last = cpu
        if running is not None:
            counts.append(max(0, running - own))
        if index + 1 < samples:
            time.sleep(interval)
    return {"runnable_others": round(sum(counts) / len(counts), 2) if counts else None,
            "runnable_others_max": max(counts) if counts else None,
            "steal_pct": steal_pct(first, last), "loadavg": read_loadavg(root),
            "samples": len(counts), "window_s": round(interval * (samples - 1), 3),
            "cpus": len(allowed_cpus())}


def busy_reasons(load, when=""):
    """Why `load` (sample_load's) makes the box busy, one phrase each; [] when quiet."""
    reasons = []
    others, steal = load.get("runnable_others"), load.get("steal_pct")
    if others is not None and others > BUSY_RUNNABLE:
        reasons.append(f"{others:g} other tasks runnable on average{when} (more than "
                       f"{BUSY_RUNNABLE:g}; peak {load.get('runnable_others_max')})")
    if steal is not None and steal > BUSY_STEAL_PCT:
        reasons.append(f"steal time {steal:g}% of CPU time{when} (more than "
                       f"{BUSY_STEAL_PCT:g}%: the host ran other guests)")
    return reasons


# --------------------------------------------------------------------------------------
# vmstat sampling
# --------------------------------------------------------------------------------------

VMSTAT_COLUMNS = ["r", "b", "swpd", "free", "buff", "cache", "si", "so", "bi", "bo",
                  "in", "cs", "us", "sy", "id", "wa", "st"]


def is_number(token):
    return not isinstance(to_number(token), str)


def parse_vmstat(text, skip_first=False):
    """vmstat output -> {"columns": [...], "rows": [[...], ...]}.

    Skips the "procs ---memory---" banner and repeated header lines; rows whose width
    differs from the header are dropped rather than guessed at. skip_first drops the
    first data row, which vmstat computes as averages since boot.
    """
    columns, rows = [], []
    for line in text.splitlines():
        fields = line.split()
        if not fields or fields[0] == "procs" or "---" in line:
            continue
        if all(is_number(f) for f in fields):
            if columns and len(fields) == len(columns):
                rows.append([to_number(f) for f in fields])
        elif not columns:
            columns = fields
    if skip_first:
        rows = rows[1:]
    return {"columns": columns, "rows": rows}


class VmstatSampler:
    """Runs `vmstat -n SECONDS` in the background while the benchmark runs."""

    def __init__(self, interval, executable):
        # procps vmstat only takes whole seconds.
        self.interval = max(1, int(round(interval)))
        self.executable = executable
        self.lines = []
        self.proc = None
        self.thread = None

    def start(self):
        self.proc = subprocess.Popen(
            [self.executable, "-n", str(self.interval)], stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, universal_newlines=True)
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()
        return self

    def _drain(self):
        for line in self.proc.stdout:
            self.lines.append(line)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.thread.join(timeout=5)
        return parse_vmstat("".join(self.lines), skip_first=True)


def read_proc_snapshot(root):
    """The counters vmstat itself reads, from /proc/stat, /proc/vmstat and /proc/meminfo."""
    snap = {"time": time.monotonic()}
    for line in (read_text(root, "/proc/stat") or "").splitlines():
        fields = line.split()
        if not fields:
            continue
        if fields[0] == "cpu":
            snap["cpu"] = [int(x) for x in fields[1:9]] + [0] * (8 - len(fields[1:9]))
        elif fields[0] in ("intr", "ctxt", "procs_running", "procs_blocked"):
            snap[fields[0]] = int(fields[1])
    for line in (read_text(root, "/proc/vmstat") or "").splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] in ("pswpin", "pswpout", "pgpgin", "pgpgout"):
            snap[fields[0]] = int(fields[1])
    snap["meminfo"] = read_meminfo(root)
    return snap


def percentages(before, after):
    # cpu fields: user nice system idle iowait irq softirq steal
    cpu_before, cpu_after = before.get("cpu") or [0] * 8, after.get("cpu") or [0] * 8
    d = [cpu_after[i] - cpu_before[i] for i in range(8)]
    total = float(sum(d)) or 1.0
    return [int(round(100 * x / total)) for x in
            (d[0] + d[1], d[2] + d[5] + d[6], d[3], d[4], d[7])]


def vmstat_row(before, after, page_kb=4):
    """One vmstat-style row from two /proc snapshots, rates per second."""
    dt = max(after["time"] - before["time"], 1e-6)

    def rate(key, scale=1):
        return int(round((after.get(key, 0) - before.get(key, 0)) * scale / dt))

    mem = after["meminfo"]
    swpd = mem.get("SwapTotal", 0) - mem.get("SwapFree", 0)
    cache = mem.get("Cached", 0) + mem.get("SReclaimable", 0)
    return ([after.get("procs_running", 0), after.get("procs_blocked", 0), swpd,
             mem.get("MemFree", 0), mem.get("Buffers", 0), cache,
             rate("pswpin", page_kb), rate("pswpout", page_kb), rate("pgpgin"),
             rate("pgpgout"), rate("intr"), rate("ctxt")]
            + percentages(before, after))


class ProcStatSampler:
    """The fallback when vmstat is not installed: sample /proc ourselves."""

    def __init__(self, interval, root="/"):
        self.interval = max(0.01, float(interval))
        self.root = root
        self.rows = []
        self.done = threading.Event()
        self.thread = None
        try:
            self.page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
        except (ValueError, OSError):
            self.page_kb = 4

    def start(self):
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        return self

    def _loop(self):
        before = read_proc_snapshot(self.root)
        while not self.done.wait(self.interval):
            after = read_proc_snapshot(self.root)
            self.rows.append(vmstat_row(before, after, self.page_kb))
            before = after

    def stop(self):
        self.done.set()
        self.thread.join(timeout=5)
        return {"columns": list(VMSTAT_COLUMNS), "rows": list(self.rows)}


def start_sampler(interval, root="/", vmstat="vmstat"):
    executable = shutil.which(vmstat) if os.path.abspath(root) == "/" else None
    if executable:
        return VmstatSampler(interval, executable).start()
    log("vmstat not found; sampling /proc/stat and /proc/vmstat instead")
    return ProcStatSampler(interval, root).start()


def series_from(vmstat):
    if not vmstat or not vmstat.get("rows"):
        log("vmstat: no samples (the run was shorter than the interval?)")
        return {}
    return {"vmstat": vmstat}


# --------------------------------------------------------------------------------------
# --trace: scheduler events of the benchmark's tasks through tracefs
# --------------------------------------------------------------------------------------

TRACE_EVENTS = ("sched_switch", "sched_wakeup", "sched_wakeup_new", "sched_process_fork",
                "sched_process_exit", "sched_migrate_task")
TRACEFS_MOUNTS = (("/sys/kernel/tracing", "tracefs", "/sys/kernel/tracing"),
                  ("/sys/kernel/debug/tracing", "debugfs", "/sys/kernel/debug"))
TRACE_PATH = "/api/v1/traces/"
TRACE_BUFFER_KB = 4096
INSTANCE_PREFIX = "schedbench-"
# Tasks outside the benchmark become one placeholder per CPU, "other" with a pid no real task
# can have (PID_MAX_LIMIT is 4194304): their identity is not ours to publish, and one task per
# CPU keeps every CPU's story consistent although their switches among themselves are dropped.
OTHER_COMM = "other"
OTHER_PID_BASE = 4194304
# "comm-pid [cpu] flags ts: event: body"; comm may hold spaces and dashes, and some kernels
# add "(tgid)" after the pid.
TRACE_LINE_RE = re.compile(
    r"^(?P<comm>.*?)-(?P<pid>\d+)(?P<mid>\s+(?:\(\s*[\d-]*\)\s+)?\[(?P<cpu>\d+)\]\s+"
    r"(?:\S+\s+)?(?P<ts>\d+\.\d+):\s+)(?P<event>\w+):\s?(?P<body>.*)$")
SWITCH_RE = re.compile(
    r"^prev_comm=(?P<pc>.*) prev_pid=(?P<pp>-?\d+) (?P<pmid>prev_prio=.*) ==> "
    r"next_comm=(?P<nc>.*) next_pid=(?P<np>-?\d+) (?P<nrest>next_prio=.*)$")
TASK_RE = re.compile(r"^comm=(?P<c>.*) pid=(?P<p>\d+)(?P<rest> .*)?$")
FORK_RE = re.compile(r"^comm=(?P<c>.*) pid=(?P<p>\d+) child_comm=(?P<cc>.*) "
                     r"child_pid=(?P<cp>\d+)$")
TS_RE = re.compile(r"\]\s+(?:\S+\s+)?(\d+\.\d+):")


class TraceUnavailable(Exception):
    """No tracefs, no root, or the kernel refused: the run goes on untraced."""


class TraceFilter:
    """Keeps the events of the benchmark's tasks (the roots and whatever they fork) and of
    what ran on the same CPUs in between, renamed to the per-CPU "other" placeholder."""

    def __init__(self, roots):
        self.tracked = set(roots)
        self.exited = set()
        self.live = set()  # benchmark tasks seen and not yet gone: the benchmark is running
        self.kept = 0

    def placeholder(self, cpu):
        return OTHER_COMM, str(OTHER_PID_BASE + int(cpu))

    def mine(self, pid):
        return pid in self.tracked

    def side(self, comm, pid, cpu):
        if pid == "0" or int(pid) in self.tracked:
            return comm, pid
        return self.placeholder(cpu)

    def line(self, text):
        """The line as it should be kept, or None to drop it."""
        if not text.strip() or text.startswith("#"):
            return text if text.startswith("#") else None
        m = TRACE_LINE_RE.match(text)
        if m is None:
            return text if "LOST" in text and text.startswith("CPU:") else None
        # The prefix first: a switch line can end its task's tracking (exit, then out).
        comm, pid = self.side(m.group("comm").strip(), m.group("pid"), m.group("cpu"))
        body = self.body(m.group("event"), m.group("body"), m.group("cpu"))
        if body is None:
            return None
        self.kept += 1
        return f"{comm:>16}-{pid:<7} {m.group('mid').lstrip()}{m.group('event')}: {body}"

    def body(self, event, body, cpu):
        if event == "sched_switch":
            return self.switch(body, cpu)
        if event == "sched_process_fork":
            return self.fork(body, cpu)
        m = TASK_RE.match(body)
        if m is None or event not in TRACE_EVENTS or not self.mine(int(m.group("p"))):
            return None
        if event == "sched_process_exit":
            self.exited.add(int(m.group("p")))
        return body

    def switch(self, body, cpu):
        m = SWITCH_RE.match(body)
        if m is None:
            return None
        prev, nxt = int(m.group("pp")), int(m.group("np"))
        if not (self.mine(prev) or self.mine(nxt)) and not (
                self.live and (prev == 0) != (nxt == 0)):
            # Kept besides the benchmark's own: another program taking or leaving an idle
            # CPU while the benchmark lives, which bounds the time others held each CPU.
            return None
        pc, pp = self.side(m.group("pc"), m.group("pp"), cpu)
        nc, np_ = self.side(m.group("nc"), m.group("np"), cpu)
        self.live.update(p for p in (prev, nxt) if self.mine(p))
        if prev in self.exited:  # its last switch out: the pid may be reused after this
            self.exited.discard(prev)
            self.tracked.discard(prev)
            self.live.discard(prev)
        return (f"prev_comm={pc} prev_pid={pp} {m.group('pmid')} ==> next_comm={nc} "
                f"next_pid={np_} {m.group('nrest')}")

    def fork(self, body, cpu):
        m = FORK_RE.match(body)
        if m is None:
            return None
        parent, child = int(m.group("p")), int(m.group("cp"))
        if not (self.mine(parent) or self.mine(child)):
            return None
        self.tracked.add(child)
        self.live.add(child)
        pc, pp = self.side(m.group("c"), m.group("p"), cpu)
        return f"comm={pc} pid={pp} child_comm={m.group('cc')} child_pid={child}"


def autogroup_setting(root="/"):
    """"1" or "0": whether the kernel puts each session in its own task group (autogroup);
    a kernel with /proc/sys/kernel but no sched_autogroup_enabled has no CONFIG_SCHED_AUTOGROUP.
    None when /proc/sys/kernel cannot be read (unknown)."""
    value = read_value(root, "/proc/sys/kernel/sched_autogroup_enabled")
    if value in ("0", "1"):
        return value
    return "0" if os.path.isdir(under(root, "/proc/sys/kernel")) else None


def trace_timestamp(line, last):
    m = TS_RE.search(line)
    return float(m.group(1)) if m else last


def timed_lines(path):
    """(timestamp, seq, line) of a raw recording; markers without a time keep the last one."""
    last = 0.0
    with open(path, encoding="utf-8", errors="replace", newline="\n") as f:
        for seq, line in enumerate(f):
            last = trace_timestamp(line, last)
            yield last, seq, line.rstrip("\n")


def merge_recordings(paths):
    """The channels' lines in time order (each channel's trace_pipe already is)."""
    import heapq
    streams = [((ts, index, seq, line) for ts, seq, line in timed_lines(path))
               for index, path in enumerate(paths)]
    for _, _, _, line in heapq.merge(*streams):
        yield line


def filter_trace(lines, roots, out, autogroup=None):
    """Writes the kept lines to the text file `out`; returns the TraceFilter (counts).
    `autogroup`: the kernel's sched_autogroup_enabled ("0" / "1"), written in the header for
    the replay (simulator/replay.py reads it); None writes nothing (unknown)."""
    keep = TraceFilter(roots)
    out.write("# tracer: nop\n#\n# recorded by schedbench.py " + HARNESS_VERSION
              + f"; tasks outside the benchmark appear as {OTHER_COMM}-"
              + f"{OTHER_PID_BASE}+cpu"
              + (f"; sched_autogroup_enabled={autogroup}" if autogroup is not None else "")
              + "\n")
    for text in lines:
        kept = keep.line(text)
        if kept is not None:
            out.write(kept + "\n")
    return keep


def write_tracefs(path, value, append=False):
    # os.open, not open(): Python's append mode seeks, and tracefs files refuse to seek.
    # O_TRUNC is how set_event and set_event_pid are emptied.
    fd = os.open(path, os.O_WRONLY | (os.O_APPEND if append else os.O_TRUNC | os.O_CREAT))
    try:
        if value:
            os.write(fd, value.encode("ascii"))
    finally:
        os.close(fd)


def find_tracefs(root="/"):
    """The tracing directory, mounting tracefs (or debugfs) when needed; (dir, mounted)."""
    for path, _, _ in TRACEFS_MOUNTS:
        if os.path.exists(under(root, path + "/trace_pipe")):
            return under(root, path), None
    if os.path.abspath(root) != "/":
        raise TraceUnavailable("no tracefs under " + root)
    for path, fstype, mountpoint in TRACEFS_MOUNTS:
        done = subprocess.run(["mount", "-t", fstype, "nodev", mountpoint],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              check=False) if shutil.which("mount") else None
        if done is not None and done.returncode == 0 and os.path.isfile(path + "/trace_pipe"):
            return path, mountpoint
    raise TraceUnavailable("tracefs is not mounted and could not be mounted")


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def remove_stale_instances(tracing):
    """Instances left by a harness that was killed outright (SIGKILL): nothing else can."""
    for path in glob.glob(os.path.join(tracing, "instances", INSTANCE_PREFIX + "*")):
        owner = re.match(r"(\d+)", os.path.basename(path)[len(INSTANCE_PREFIX):])
        if owner and not pid_alive(int(owner.group(1))):
            with contextlib.suppress(OSError):
                os.rmdir(path)


class TraceChannel:
    """One tracing buffer (an instance, or the top level) and the thread draining it."""

    def __init__(self, directory, events, pid_filter, raw_path, recorder):
        self.dir = directory
        self.events = events
        self.pid_filter = pid_filter
        self.raw_path = raw_path
        self.recorder = recorder
        self.fd = None
        self.thread = None

    def file(self, name):
        return os.path.join(self.dir, name)

    def setup(self):
        write_tracefs(self.file("tracing_on"), "0")
        write_tracefs(self.file("buffer_size_kb"), str(TRACE_BUFFER_KB))
        write_tracefs(self.file("set_event"), "")
        write_tracefs(self.file("set_event_pid"), "")
        for event in self.events:
            write_tracefs(self.file("set_event"), f"sched:{event}\n", append=True)
        self.fd = os.open(self.file("trace_pipe"), os.O_RDONLY | os.O_NONBLOCK)
        self.thread = threading.Thread(target=self.drain, daemon=True)
        self.thread.start()

    def arm(self):
        """Filter and switch on, once every drain thread exists: event-fork would add a
        thread the harness starts after the pid filter is set, and its reads to the trace."""
        if self.pid_filter:
            # The kernel keeps only events of this pid, what it forks later (event-fork) and
            # the switches/wakeups touching them: cheap enough on a busy box.
            write_tracefs(self.file("options/event-fork"), "1")
            write_tracefs(self.file("set_event_pid"), self.pid_filter)
        write_tracefs(self.file("tracing_on"), "1")

    def drain(self):
        import select
        with open(self.raw_path, "wb") as out:
            while True:
                stopping = self.recorder.stopping.is_set()
                ready = select.select([self.fd], [], [], 0.1)[0]
                chunk = self.read_chunk() if ready or stopping else b""
                if chunk:
                    allowed = self.recorder.take(len(chunk))
                    if allowed < len(chunk):  # the cap: keep whole lines up to it, then stop
                        out.write(chunk[:chunk.rfind(b"\n", 0, allowed) + 1])
                        return
                    out.write(chunk)
                elif stopping:
                    return
                elif ready:  # end of file (a FIFO standing in for trace_pipe): not a spin
                    time.sleep(0.05)

    def read_chunk(self):
        try:
            return os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return b""
        except OSError:
            return b""

    def stop(self):
        with contextlib.suppress(OSError):
            write_tracefs(self.file("tracing_on"), "0")

    def close(self):
        if self.thread is not None:
            self.thread.join(timeout=10)
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class TopLevelState:
    """The top-level tracing settings we change, read before and written back after."""

    FILES = ("tracing_on", "current_tracer", "buffer_size_kb", "set_event", "set_event_pid",
             "options/event-fork")

    def __init__(self, tracing):
        self.tracing = tracing
        self.saved = {}

    def save(self):
        for name in self.FILES:
            text = read_text("/", os.path.join(self.tracing, name))
            if text is not None:
                self.saved[name] = text

    def restore(self):
        failures = []
        for name in ("tracing_on", "set_event", "set_event_pid", "options/event-fork",
                     "current_tracer", "buffer_size_kb"):
            if name in self.saved:
                try:
                    self.put_back(name, self.saved[name])
                except OSError as err:
                    failures.append(f"{name} ({err.strerror or err})")
        write_tracefs(os.path.join(self.tracing, "tracing_on"), self.saved.get(
            "tracing_on", "1").strip() or "1")
        return failures

    def put_back(self, name, text):
        path = os.path.join(self.tracing, name)
        if name == "set_event":
            write_tracefs(path, "")
            for event in text.split():
                write_tracefs(path, event + "\n", append=True)
        elif name == "set_event_pid":
            write_tracefs(path, " ".join(text.split()))
        elif name == "buffer_size_kb":
            # "7 (expanded: 1408)": never used yet; our use expanded it, so it stays so.
            m = re.search(r"expanded:\s*(\d+)", text)
            value = m.group(1) if m else text.split()[0] if text.split() else ""
            if value.isdigit():
                write_tracefs(path, value)
        elif name == "tracing_on":
            write_tracefs(path, "0")  # switched on again last, once the rest is back
        else:
            write_tracefs(path, text.strip())


class SignalsToExceptions:
    """SIGTERM and SIGHUP unwind like Ctrl-C does, so the tracing state is always restored."""

    SIGNALS = ("SIGTERM", "SIGHUP")

    def __enter__(self):
        import signal
        self.previous = {}
        if threading.current_thread() is not threading.main_thread():
            return self
        for name in self.SIGNALS:
            number = getattr(signal, name, None)
            if number is not None:
                self.previous[number] = signal.signal(number, self.raise_terminated)
        return self

    @staticmethod
    def raise_terminated(number, frame):
        raise Terminated(number)

    def __exit__(self, *exc):
        import signal
        for number, handler in self.previous.items():
            signal.signal(number, handler)
        return False


class Terminated(KeyboardInterrupt):
    def __init__(self, number):
        KeyboardInterrupt.__init__(self, number)
        self.signal = number


class TraceRecorder:
    """Records while the benchmark runs: `with TraceRecorder(...) as rec: ... rec.add_root()`.

    Prefers a tracing instance of its own (others' tracing stays untouched); on kernels
    without instances it uses the top level and puts every setting it changed back."""

    def __init__(self, max_bytes, workdir, root="/", use_instances=True):
        self.max_bytes = max_bytes
        self.workdir = workdir
        self.root = root
        self.use_instances = use_instances
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.bytes = 0
        self.capped = False
        self.roots = []
        self.channels = []
        self.instances = []
        self.top_state = None
        self.mounted = None
        self.tracing = None
        self.started = None

    def take(self, size):
        """Called by the drain threads with a chunk's size: how much of it fits the cap."""
        with self.lock:
            allowed = max(0, min(size, self.max_bytes - self.bytes))
            self.bytes += allowed
            if allowed == size:
                return size
            if not self.capped:
                self.capped = True
                warn(f"trace: reached the {self.max_bytes // (1 << 20)} MB cap after "
                     f"{time.monotonic() - self.started:.1f} s; the rest of the run is untraced")
                for channel in self.channels:
                    channel.stop()
            return allowed

    def add_root(self, pid):
        self.roots.append(pid)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()
        return False

    def start(self):
        if os.path.abspath(self.root) == "/" and os.geteuid() != 0:
            raise TraceUnavailable("tracing needs root")
        self.tracing, self.mounted = find_tracefs(self.root)
        self.started = time.monotonic()
        me = os.getpid()
        try:
            if self.use_instances and os.path.isdir(os.path.join(self.tracing, "instances")):
                remove_stale_instances(self.tracing)
                # The migrations go to a buffer of their own without the pid filter: the
                # kernel files them under whichever task does the moving (a balancer, the
                # waker), so a pid-filtered buffer would miss most of them.
                # pid 0 (idle) too: a CPU going idle or busy with another program is then seen.
                self.open_channel(self.make_instance(f"{me}"), TRACE_EVENTS[:5], f"0 {me}")
                self.open_channel(self.make_instance(f"{me}-mig"), TRACE_EVENTS[5:], None)
            else:
                self.top_state = TopLevelState(self.tracing)
                self.top_state.save()
                write_tracefs(os.path.join(self.tracing, "current_tracer"), "nop")
                self.open_channel(self.tracing, TRACE_EVENTS, f"0 {me}")
            for channel in self.channels:
                channel.arm()
        except OSError as err:
            raise TraceUnavailable(f"tracefs refused: {err}") from None

    def make_instance(self, suffix):
        path = os.path.join(self.tracing, "instances", INSTANCE_PREFIX + suffix)
        os.mkdir(path)
        self.instances.append(path)
        return path

    def open_channel(self, directory, events, pid_filter):
        raw = os.path.join(self.workdir, f"raw-{len(self.channels)}.txt")
        channel = TraceChannel(directory, events, pid_filter, raw, self)
        self.channels.append(channel)
        channel.setup()

    def cleanup(self):
        """Stop, drain, and leave tracefs as it was; safe to call more than once."""
        for channel in self.channels:
            channel.stop()
        self.stopping.set()
        for channel in self.channels:
            channel.close()
            if channel.dir in self.instances:
                self.quiet_write(channel.file("set_event"), "")
        for path in self.instances:
            try:
                os.rmdir(path)
            except OSError as err:
                warn(f"trace: could not remove the tracing instance {path}: {err}")
        self.instances = []
        if self.top_state is not None:
            for failure in self.top_state.restore():
                warn(f"trace: could not restore {failure}")
            self.top_state = None
        if self.mounted:
            subprocess.run(["umount", self.mounted], check=False)
            self.mounted = None

    @staticmethod
    def quiet_write(path, value):
        with contextlib.suppress(OSError):
            write_tracefs(path, value)

    def write(self, path):
        """The filtered trace, gzip-compressed, to `path`; returns a summary dict."""
        raws = [c.raw_path for c in self.channels if os.path.exists(c.raw_path)]
        with gzip.open(path, "wt", encoding="utf-8", newline="\n") as out:
            kept = filter_trace(merge_recordings(raws), self.roots, out,
                                autogroup=autogroup_setting(self.root))
        return {"file": path, "events": kept.kept, "recorded_bytes": self.bytes,
                "capped": self.capped, "roots": list(self.roots)}


# --------------------------------------------------------------------------------------
# Running the benchmark and building the submission
# --------------------------------------------------------------------------------------

class CommandFailed(Exception):
    def __init__(self, message, status):
        Exception.__init__(self, message)
        self.status = status


def run_once(command, on_start=None):
    """Run the command once; its stdout and stderr are kept verbatim through one pipe, in the
    order it wrote them (stress-ng writes its metrics to stderr, dbench its errors).
    on_start(pid) learns the process id (the trace follows that task and its children)."""
    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except FileNotFoundError:
        raise CommandFailed(f"command not found: {command[0]}", 127) from None
    except PermissionError:
        raise CommandFailed(f"cannot execute: {command[0]}", 126) from None
    with proc:
        if on_start is not None:
            on_start(proc.pid)
        try:
            output = proc.communicate()[0]
        except BaseException:  # Ctrl-C or SIGTERM: the benchmark goes down with us
            proc.kill()
            proc.wait()
            raise
    return proc.returncode, output.decode("utf-8", "replace")


def run_repeats(command, repeat, on_start=None):
    outputs, durations = [], []
    for i in range(repeat):
        log(f"repeat {i + 1}/{repeat}: {' '.join(shlex.quote(c) for c in command)}")
        start = time.monotonic()
        status, output = run_once(command, on_start)
        durations.append(round(time.monotonic() - start, 3))
        if not QUIET:
            sys.stderr.write(output)
        if status != 0:
            raise CommandFailed(f"repeat {i + 1} exited with status {status}; nothing submitted",
                                status if status > 0 else EXIT_ERROR)
        outputs.append(output)
    return outputs, durations


def join_outputs(outputs):
    # A missing final newline would glue one repeat's last line to the next one's first.
    return "".join(o if not o or o.endswith("\n") else o + "\n" for o in outputs)


def param_value(text):
    """Numbers become numbers; "10k", "40M", "1G" too (decimal, as loop sizes are quoted)."""
    match = _SUFFIX_RE.match(text.strip())
    if match:
        value = float(match.group(1)) * _SUFFIXES[match.group(2).lower()]
        return int(value) if value == int(value) else value
    return to_number(text)


def parse_params(items):
    params = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--param wants key=value, got {item!r}")
        params[key.strip()] = param_value(value)
    return params


# --------------------------------------------------------------------------------------
# What the tool's command line says that its output does not
# --------------------------------------------------------------------------------------

def split_options(args):
    """[(option, value or None)] and the positional words of a command's arguments.
    `--name=value`, `--name value`, `-x value` and `-xvalue`-less flags alike: an option takes
    the next word as its value when that word is not itself an option."""
    options, words, i = [], [], 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-") and len(arg) > 1 and not _NUMBER_ARG_RE.match(arg):
            name, sep, value = arg.lstrip("-").partition("=")
            if not sep and i + 1 < len(args) and not args[i + 1].startswith("-"):
                value, i = args[i + 1], i + 1
            options.append((name, value if (sep or value) else None))
        else:
            words.append(arg)
        i += 1
    return options, words


_NUMBER_ARG_RE = re.compile(r"-\d")


def _option(options, *names):
    for name, value in reversed(options):
        if name in names:
            return value if value is not None else True
    return None


def _int(value):
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _hackbench_params(args):
    # rt-tests' flags take no value; everything else does.
    flags = {"p", "pipe", "T", "threads", "P", "process", "i", "inet", "F", "fifo"}
    options, _ = split_options([a for a in args if a.lstrip("-") not in flags] + [])
    present = {a.lstrip("-") for a in args}
    params = {"mode": "thread" if present & {"T", "threads"} else "process",
              "transport": "pipe" if present & {"p", "pipe"} else
              "inet" if present & {"i", "inet"} else "socket"}
    for names, key in ((("g", "groups"), "groups"), (("l", "loops"), "loops"),
                       (("s", "datasize"), "message_bytes")):
        value = _int(_option(options, *names))
        if value is not None:
            params[key] = value
    return params


def _perf_params(args):
    words = [a for a in args if not a.startswith("-")]
    if words[:2] != ["bench", "sched"] or len(words) < 3:
        return {}
    flags = {"p", "pipe", "t", "thread", "T", "threaded"}
    options, _ = split_options([a for a in args if a.lstrip("-") not in flags])
    present = {a.lstrip("-") for a in args}
    if words[2] == "pipe":
        loops = _int(_option(options, "l", "loop"))
        return {} if loops is None else {"ops": loops}
    if words[2] != "messaging":
        return {}
    params = {"transport": "pipe" if present & {"p", "pipe"} else "socket"}
    for names, key in ((("g", "group"), "groups"), (("l", "nr_loops"), "loops")):
        value = _int(_option(options, *names))
        if value is not None:
            params[key] = value
    return params


SYSBENCH_SKIPPED = {"time", "events", "report-interval", "warmup-time", "rand-seed",
                    "percentile", "histogram", "verbosity", "validate", "debug", "forced-shutdown"}
SYSBENCH_NAMES = {"threads": "threads", "cpu-max-prime": "prime_limit"}
SYSBENCH_COMMANDS = {"run", "prepare", "cleanup", "help"}


def _sysbench_params(args):
    options, words = split_options(args)
    tests = [w for w in words if w not in SYSBENCH_COMMANDS]
    params = {"test": tests[0]} if tests else {}
    for name, value in options:
        # The memory test prints its own options (block size, total size, operation, scope).
        if name in SYSBENCH_SKIPPED or name.startswith("memory-") or value in (None, True):
            continue
        params[SYSBENCH_NAMES.get(name, name.replace("-", "_"))] = param_value(value)
    return params


STRESS_NG_GENERAL = {"t", "timeout", "taskset", "backoff", "v", "verbose", "metrics",
                     "metrics-brief", "log-file", "yaml", "temp-path", "times", "tz",
                     "aggressive", "sched", "sched-prio", "ionice-class", "ionice-level",
                     "x", "exclude", "seq", "all", "class", "k", "keep-name", "perf"}


def _stress_ng_params(args):
    flags = {"metrics", "metrics-brief", "v", "verbose", "times", "tz", "aggressive", "perf",
             "k", "keep-name"}
    options, _ = split_options([a for a in args if a.lstrip("-") not in flags])
    stressors = [(name, _int(value)) for name, value in options
                 if name not in STRESS_NG_GENERAL and "-" not in name and _int(value) is not None]
    params = {}
    if len(stressors) == 1:
        params.update(stressor=stressors[0][0], instances=stressors[0][1])
    timeout = _int(_option(options, "t", "timeout"))
    if timeout is not None:
        params["timeout_s"] = timeout
    return params


def _cyclictest_params(args):
    flags = {"q", "quiet", "m", "mlockall", "n", "nanosleep", "S", "smp", "N", "nsecs",
             "v", "verbose", "u", "unbuffered"}
    options, _ = split_options([a for a in args if a.lstrip("-") not in flags])
    params = {}
    for names, key in ((("t", "threads"), "threads"), (("p", "priority"), "priority"),
                       (("h", "histogram"), "histogram_buckets")):
        value = _int(_option(options, *names))
        if value is not None:
            params[key] = value
    return params


def _schbench_params(args):
    options, _ = split_options(args)
    params = {}
    for names, key in ((("m", "message-threads"), "message_threads"),
                       (("r", "runtime"), "runtime_s")):
        value = _int(_option(options, *names))
        if value is not None:
            params[key] = value
    return params


def _count(value):
    """threadtest's own count syntax: digits with an optional k/M/G suffix."""
    found = _SUFFIX_RE.match(value) if isinstance(value, str) else None
    if found:
        return int(float(found.group(1)) * _SUFFIXES[found.group(2).lower()])
    return _int(value)


def _threadtest_params(args, counter):
    """harness/src/threadtest.c's options, its defaults filled in (-n 500, -l 10000), named as
    the simulator's threadtest params, so a simulated twin can be matched to the run. `counter`:
    the harness builds `threadtest` -O2 (register) and `threadtest-O0` (memory)."""
    options, _ = split_options(args)
    found = {"iterations": _count(_option(options, "n")) or 500,
             "loops": _count(_option(options, "l")) or 10000,
             "yield_in_spin": bool(_option(options, "y")), "pin": bool(_option(options, "a")),
             "head_start_us": 1 if _option(options, "s") else 0, "counter": counter}
    return found


def _burn_params(args):
    """harness/src/threadtest_burn.c's options with its defaults (-n 100, -b 10000)."""
    options, _ = split_options(args)
    return {"iterations": _count(_option(options, "n")) or 100,
            "burn_us": _count(_option(options, "b")) or 10000,
            "yield_in_spin": bool(_option(options, "y")),
            "clock": "cpu" if _option(options, "c") else "wall"}


TOOL_PARAMS = {"hackbench": _hackbench_params, "perf": _perf_params,
               "sysbench": _sysbench_params, "stress-ng": _stress_ng_params,
               "cyclictest": _cyclictest_params, "schbench": _schbench_params,
               # the harness's own benchmarks, as `build` names them
               "threadtest": lambda args: _threadtest_params(args, "register"),
               "threadtest-O0": lambda args: _threadtest_params(args, "memory"),
               "threadtest_burn": _burn_params}


def command_params(command):
    """Params a known tool's command line gives that its output leaves out or cannot say:
    `hackbench -p -T -g 4 -l 200` -> mode, transport, groups, loops; `sysbench threads` ->
    test; `perf bench sched pipe -l 100000` -> ops; `stress-ng --switch 2` -> stressor,
    instances. Named as the portal's parsers name them, so they agree with the output."""
    if not command:
        return {}
    reader = TOOL_PARAMS.get(os.path.basename(command[0]))
    return reader(list(command[1:])) if reader else {}


_TRUE_WORDS = {"1", "true", "yes", "on"}
_FALSE_WORDS = {"0", "false", "no", "off"}


def _as_bool(value):
    """True, False, or None when the value is no spelling of either."""
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    return True if word in _TRUE_WORDS else False if word in _FALSE_WORDS else None


def _same_param(derived, given):
    if isinstance(derived, bool):
        return _as_bool(given) is derived
    if isinstance(given, (int, float)) and isinstance(derived, (int, float)):
        return given == derived
    return str(given) == str(derived)


def run_params(command, param_items):
    """The run's params: what the tool's command line says (command_params), and --param.
    A --param the command line contradicts (`--param loops=1M -- threadtest -l 10k`) is
    refused: the run would be stored under a value it never ran with."""
    derived, given = command_params(command), parse_params(param_items)
    for key, value in given.items():
        if key in derived and not _same_param(derived[key], value):
            runs = derived[key]
            raise UsageError(f"--param {key}={value} disagrees with the command, which runs "
                             f"{key}={runs}: drop the --param or change the command")
    return {**derived, **given}


def safe_name(text, limit=80):
    # Bounded so benchmark + host + stamp stays well inside a 255-character filename.
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:limit] or "unknown"


def make_filename(benchmark, host, when):
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(when))
    return f"{safe_name(benchmark)}-{safe_name(host)}-{stamp}.txt"


def build_payload(env, benchmark, command, outputs, durations, params=None, policy=None,
                  series=None, started=None, recipe=None):
    """`recipe` says how the run was made: {"harness_argv", "vmstat_interval_s",
    "tunables_set"}; it is kept in the run's environment so the portal can show it."""
    started = time.time() if started is None else started
    measured = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))
    environment = dict(env["environment"])
    environment.update(recipe or {})
    environment.update({
        "command": list(command),
        "repeat": len(outputs),
        "harness_version": HARNESS_VERSION,
        "durations_s": durations,
        "started": measured,
    })
    return {
        "text": join_outputs(outputs),
        "filename": make_filename(benchmark, env["machine"]["name"], started),
        "benchmark": benchmark,
        "kernel": env["kernel"],
        "machine": env["machine"],
        "policy": policy,
        "params": params or {},
        "tunables": env["tunables"],
        "series": series or {},
        "environment": environment,
        "measured": measured,  # the run's start, UTC: the portal's measured_at
        "idempotency_key": str(uuid.uuid4()),
    }


# --------------------------------------------------------------------------------------
# Talking to the portal
# --------------------------------------------------------------------------------------

class Transient(Exception):
    """No HTTP answer at all: refused, reset, timed out, DNS failure."""


class Reply:
    def __init__(self, outcome, status=None, body=None, detail=""):
        self.outcome = outcome  # ok | retry | config | rejected
        self.status = status
        self.body = body if isinstance(body, dict) else {}
        self.detail = detail


class NoRedirect(urllib.request.HTTPRedirectHandler):
    # urllib would turn a redirected POST into a GET without the body; better to say so.
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def check_url(url):
    try:
        parts = urllib.parse.urlsplit(url or "")
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"the portal URL must look like http(s)://host[:port], got {url!r}")
    return url


def upload_endpoint(url):
    return check_url(url).rstrip("/") + UPLOAD_PATH


def decode_body(raw):
    text = raw.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except ValueError:
        return {"_raw": text[:500]}
    return body if isinstance(body, dict) else {"_raw": text[:500]}


def post_json(endpoint, token, data, timeout, content_type="application/json"):
    """POST once -> (status, JSON body, headers); raises Transient when no answer came."""
    request = urllib.request.Request(endpoint, data=data, method="POST", headers={
        "Content-Type": content_type,
        "Accept": "application/json",
        "Authorization": "Token " + token,
        "User-Agent": "schedbench-harness/" + HARNESS_VERSION,
    })
    opener = urllib.request.build_opener(NoRedirect)
    try:
        try:
            with opener.open(request, timeout=timeout) as response:
                return response.status, decode_body(response.read()), response.headers
        except urllib.error.HTTPError as err:
            return err.code, decode_body(err.read()), err.headers
    except (OSError, http.client.HTTPException) as err:
        reason = getattr(err, "reason", None) or err
        raise Transient(f"{type(err).__name__}: {reason}") from None


def classify(status):
    if 200 <= status < 300:
        return "ok"
    if status in (408, 425, 429) or status >= 500:
        return "retry"
    if status in (401, 403) or 300 <= status < 400:
        return "config"  # wrong token or URL: the data itself is fine
    return "rejected"


def retry_delay(attempt, backoff, headers):
    after = headers.get("Retry-After") if headers is not None else None
    if after and after.strip().isdigit():
        return min(float(after), MAX_BACKOFF)
    return min(backoff * (2 ** attempt), MAX_BACKOFF)


def describe(status, headers):
    if 300 <= status < 400 and headers is not None:
        return f"HTTP {status} redirect to {headers.get('Location')}; check --url"
    return f"HTTP {status}"


def send(endpoint, token, data, retries=4, backoff=1.0, timeout=30.0,
         content_type="application/json"):
    """POST with exponential backoff on transient failures; returns a Reply."""
    reply = Reply("retry", detail="not attempted")
    for attempt in range(retries + 1):
        headers = None
        try:
            status, body, headers = post_json(endpoint, token, data, timeout, content_type)
            reply = Reply(classify(status), status, body, describe(status, headers))
        except Transient as err:
            reply = Reply("retry", detail=str(err))
        if reply.outcome != "retry" or attempt == retries:
            return reply
        delay = retry_delay(attempt, backoff, headers)
        log(f"portal unavailable ({reply.detail}); retry {attempt + 1}/{retries} in {delay:.1f}s")
        time.sleep(delay)
    return reply


def absolute(base_url, url):
    return urllib.parse.urljoin(base_url.rstrip("/") + "/", url)


def verdict_line(verdict):
    """`time_ms +168% vs 2.6.22 (p=0.008): regression`, from one entry of the portal's
    `verdicts` (change is a ratio: median of the run over median of the other kernel)."""
    try:
        percent = (float(verdict["change"]) - 1) * 100
    except (KeyError, TypeError, ValueError):
        return None
    p_value = verdict.get("p_value")
    p_text = "p=n/a, needs repeats" if p_value is None else f"p={float(p_value):.3g}"
    outcome = "regression" if verdict.get("regression") else \
        "needs repeats" if verdict.get("needs_repeats") else "no regression"
    return f"  {verdict.get('metric')} {percent:+.0f}% vs {verdict.get('against')} " \
           f"({p_text}): {outcome}"


def report_verdicts(body, run_id):
    for verdict in body.get("verdicts") or []:
        if isinstance(verdict, dict) and verdict.get("run") == run_id:
            line = verdict_line(verdict)
            if line:
                print(line)


def previous_regressions(body):
    """Verdicts of the reply that are regressions against the kernel just before the run's.
    The portal sends one verdict when the series' oldest kernel is also the previous one
    (role "baseline"), so a baseline verdict without a previous one for its run and metric
    counts as the previous kernel's."""
    verdicts = [v for v in body.get("verdicts") or [] if isinstance(v, dict)]
    has_previous = {(v.get("run"), v.get("metric")) for v in verdicts
                    if v.get("role") == "previous"}
    return [v for v in verdicts if v.get("regression") and (
        v.get("role") == "previous" or "previous" in (v.get("roles") or [])
        or (v.get("role") == "baseline" and (v.get("run"), v.get("metric")) not in has_previous))]


def report_accepted(base_url, reply):
    runs = reply.body.get("runs") or []
    for run in runs:
        if isinstance(run, dict) and run.get("url"):
            print(absolute(base_url, str(run["url"])))
        elif isinstance(run, dict):
            print(f"run {run.get('id')}")
        if isinstance(run, dict):
            report_verdicts(reply.body, run.get("id"))
    report_bisect(reply.body.get("bisect"))
    sys.stdout.flush()
    for warning in reply.body.get("warnings") or []:
        warn(f"warning: {warning}")
    if not runs:
        artifact = reply.body.get("artifact")
        warn(f"the portal stored the upload (artifact {artifact}) but found no runs in it")


def report_bisect(answer):
    """The bisection step the runs joined: its verdict on stderr, the line to type on stdout."""
    if not isinstance(answer, dict):
        return
    what = (f"the {answer.get('side')} end" if answer.get("side")
            else f"commit {answer.get('commit')}")
    warn(f"bisection {answer.get('id')}: {what} is {answer.get('verdict')} "
         f"({answer.get('reason')})")
    if answer.get("first_bad"):
        warn(f"bisection {answer.get('id')}: first bad commit {answer['first_bad']}")
    elif answer.get("next"):
        print(answer["next"])
    elif answer.get("next_hint"):
        warn(f"bisection {answer.get('id')}: {answer['next_hint']}")
    if answer.get("steps_left") is not None:
        warn(f"bisection {answer.get('id')}: about {answer['steps_left']} steps left")


def report_refusal(reply):
    body = reply.body
    message = body.get("error") or body.get("detail") or body.get("_raw") or "(no details)"
    where = f" (line {body['line']})" if body.get("line") is not None else ""
    warn(f"the portal refused the submission ({reply.detail}): {message}{where}")
    if body.get("layout"):
        warn(f"closest layout: {body['layout']}" +
             (f" (example: {body['help']})" if body.get("help") else ""))
    if body.get("formats"):
        warn("formats it knows: " + ", ".join(str(f) for f in body["formats"]))


# --------------------------------------------------------------------------------------
# The spool: submissions the portal has not acknowledged yet. The token is never stored.
# --------------------------------------------------------------------------------------

def spool_dir_from(value):
    return os.path.expanduser(value or os.environ.get("SCHEDBENCH_SPOOL") or DEFAULT_SPOOL)


def write_private_json(path, data):
    """Write atomically (a crash never leaves half a file to flush) and readable by us only."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, stat.S_IRUSR | stat.S_IWUSR)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def spool_name(payload):
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return f"{stamp}-{payload.get('idempotency_key') or uuid.uuid4()}.json"


def spool_write(spool_dir, url, payload, trace=None, run=None):
    """The entry, plus the trace file moved beside it; `run` when the run itself is already
    delivered and only its trace is left to send."""
    name = spool_name(payload)
    entry = {"spool_version": 1, "url": url, "payload": payload,
             "spooled": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if trace:
        entry["trace"] = keep_trace_file(trace, spool_dir, name[:-len(".json")] + ".trace.gz")
    if run is not None:
        entry["run"] = run
    return write_private_json(os.path.join(spool_dir, name), entry)


def keep_trace_file(path, directory, name):
    os.makedirs(directory, mode=0o700, exist_ok=True)
    target = os.path.join(directory, name)
    shutil.move(path, target)
    os.chmod(target, stat.S_IRUSR | stat.S_IWUSR)
    return name


def save_rejected(spool_dir, payload, path=None):
    """Keep refused data out of the spool (flush would fail forever) but do not lose it."""
    target = os.path.join(spool_dir, "rejected", os.path.basename(path or spool_name(payload)))
    if path:
        os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
        os.replace(path, target)
        return target
    return write_private_json(target, {"spool_version": 1, "payload": payload})


def load_spooled(path):
    try:
        with open(path, encoding="utf-8") as f:
            entry = json.load(f)
    except (OSError, ValueError) as err:
        warn(f"{path}: unreadable ({err})")
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("payload"), dict):
        warn(f"{path}: not a schedbench spool file")
        return None
    return entry


def settle(reply, url, payload, spool_dir, trace=None):
    """What `run` does with the final reply; returns the exit status."""
    if reply.outcome == "ok":
        report_accepted(url, reply)
        return 0
    if reply.outcome == "rejected":
        report_refusal(reply)
        kept = save_rejected(spool_dir, payload)
        if trace:
            keep_trace_file(trace, os.path.dirname(kept),
                            os.path.basename(kept)[:-len(".json")] + ".trace.gz")
        warn("not spooled (sending the same data again would fail the same way); "
             f"a copy is in {kept}")
        return EXIT_ERROR
    if reply.outcome == "config":
        report_refusal(reply)
    else:
        warn(f"could not deliver to {url} ({reply.detail})")
    path = spool_write(spool_dir, url, payload, trace=trace)
    warn(f"submission spooled in {path}; send it later with: schedbench.py flush")
    return EXIT_SPOOLED


def trace_endpoint(url):
    return check_url(url).rstrip("/") + TRACE_PATH


def multipart(fields, filename, data):
    """A multipart/form-data body with text `fields` and one `file`; (body, content type)."""
    boundary = "schedbench-" + uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                     f"{value}\r\n".encode())
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                 f'filename="{safe_name(filename)}"\r\n'
                 "Content-Type: application/gzip\r\n\r\n".encode())
    parts.append(data)
    parts.append(f"\r\n--{boundary}--\r\n".encode())
    return b"".join(parts), "multipart/form-data; boundary=" + boundary


def first_run_id(reply):
    runs = reply.body.get("runs") or []
    return runs[0].get("id") if runs and isinstance(runs[0], dict) else None


def send_trace(url, token, path, run, opts):
    with open(path, "rb") as f:
        body, content_type = multipart({"run": str(run)}, os.path.basename(path), f.read())
    return send(trace_endpoint(url), token, body, content_type=content_type, **opts)


def report_trace(url, reply):
    print(absolute(url, str(reply.body.get("url") or "")))
    sys.stdout.flush()
    log(f"trace: {reply.body.get('events')} events, {reply.body.get('tasks')} tasks, "
        f"{reply.body.get('duration_ms')} ms")
    for warning in reply.body.get("warnings") or []:
        warn(f"trace warning: {warning}")


def deliver_trace(url, token, trace, run, payload, spool_dir, opts):
    """Attach the trace to the run just created; spooled (with the run id) when the portal is
    away. Returns the exit status."""
    if run is None:
        warn("trace: the portal created no run to attach it to; not sent")
        return EXIT_ERROR
    reply = send_trace(url, token, trace, run, opts)
    if reply.outcome == "ok":
        report_trace(url, reply)
        os.remove(trace)
        return 0
    if reply.outcome == "retry":
        warn(f"could not deliver the trace to {url} ({reply.detail})")
    else:
        report_refusal(reply)
    if reply.outcome == "rejected":
        kept = keep_trace_file(trace, os.path.join(spool_dir, "rejected"),
                               f"run-{run}-{os.path.basename(trace)}")
        warn(f"trace not spooled; a copy is in {os.path.join(spool_dir, 'rejected', kept)}")
        return EXIT_ERROR
    path = spool_write(spool_dir, url, payload, trace=trace, run=run)
    warn(f"trace spooled in {path}; send it later with: schedbench.py flush")
    return EXIT_SPOOLED


def flush_trace(path, entry, url, token, opts):
    """The trace part of a spooled entry whose run the portal already has."""
    trace = os.path.join(os.path.dirname(path), entry.get("trace") or "")
    if not entry.get("trace") or not os.path.isfile(trace):
        warn(f"{path}: its trace file is gone; dropping the entry")
        os.remove(path)
        return Reply("ok")
    reply = send_trace(url, token, trace, entry["run"], opts)
    if reply.outcome == "ok":
        report_trace(url, reply)
        os.remove(trace)
        os.remove(path)
    return reply


def flush_one(path, url, token, opts, unreachable):
    """Send one spooled file; returns "sent", "kept" or "rejected"."""
    entry = load_spooled(path)
    if entry is None:
        save_rejected(os.path.dirname(path), {}, path)
        return "rejected"
    url = url or entry.get("url") or os.environ.get("SCHEDBENCH_URL")
    if not url:
        warn(f"{path}: no portal URL recorded; pass --url")
        return "kept"
    if url in unreachable:  # do not wait out the backoff again for every file
        return "kept"
    if entry.get("run") is None:
        data = json.dumps(entry["payload"]).encode("utf-8")
        reply = send(upload_endpoint(url), token, data, **opts)
        if reply.outcome == "ok":
            report_accepted(url, reply)
            if not entry.get("trace"):
                os.remove(path)  # only now: a 2xx means the portal has it
                return "sent"
            entry["run"] = first_run_id(reply)  # the trace goes on its own from here
            write_private_json(path, entry)
    if entry.get("run") is not None:
        reply = flush_trace(path, entry, url, token, opts)
    if reply.outcome == "ok":
        return "sent"
    if reply.outcome == "rejected":
        report_refusal(reply)
        warn("moved to " + save_rejected(os.path.dirname(path), {}, path))
        if entry.get("trace"):
            trace = os.path.join(os.path.dirname(path), entry["trace"])
            if os.path.exists(trace):
                keep_trace_file(trace, os.path.join(os.path.dirname(path), "rejected"),
                                entry["trace"])
        return "rejected"
    if reply.outcome == "config":
        report_refusal(reply)
    else:
        warn(f"could not deliver to {url} ({reply.detail})")
    unreachable.add(url)
    return "kept"


# --------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------

def portal_opts(args):
    return {"retries": args.retries, "backoff": args.backoff, "timeout": args.timeout}


def resolve_portal(args, need):
    url = args.url or os.environ.get("SCHEDBENCH_URL")
    token = args.token or os.environ.get("SCHEDBENCH_TOKEN")
    if need and not url:
        raise UsageError("no portal URL: pass --url or set SCHEDBENCH_URL")
    if need and not token:
        raise UsageError("no API token: pass --token or set SCHEDBENCH_TOKEN")
    if url:
        check_url(url)
    return url, token


def cmd_run(args, command):
    if not command:
        raise UsageError("nothing to run: put the benchmark command after --")
    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    # The tool's own options (what its output leaves out), and --param where they agree.
    params = run_params(command, args.param)
    settings = parse_settings(args.set, args.root)
    # Checked before the benchmark runs: nobody should wait an hour to learn the token is missing.
    url, token = resolve_portal(args, need=not args.dry_run)
    if args.trace_max_mb <= 0:
        raise UsageError("--trace-max-mb must be above 0")
    with TunablesSet(settings) as tunables_set:
        env = collect_environment(args.root)  # read with the --set values in place
        env["environment"]["load"] = load_at_start(args.root)
        started = time.time()
        sampler = start_sampler(args.vmstat, args.root) if args.vmstat else None
        try:
            outputs, durations, trace = run_traced(args, command)
        finally:
            vmstat = sampler.stop() if sampler else None
    recipe = {"harness_argv": recorded_argv(getattr(args, "argv", [])),
              "vmstat_interval_s": args.vmstat, "tunables_set": tunables_set}
    payload = build_payload(env, args.benchmark, command, outputs, durations, params=params,
                            policy=args.label, series=series_from(vmstat) if sampler else {},
                            started=started, recipe=recipe)
    if args.bisect is not None:
        payload["bisect"] = args.bisect
        commit = args.commit or env["environment"].get("kernel_commit")
        if commit:
            payload["commit"] = commit
    if args.dry_run:
        print(json.dumps(dict(payload, trace=trace) if trace else payload, indent=2))
        return 0
    data = json.dumps(payload).encode("utf-8")
    reply = send(upload_endpoint(url), token, data, **portal_opts(args))
    spool_dir = spool_dir_from(args.spool_dir)
    status = settle(reply, url, payload, spool_dir, trace=trace and trace["file"])
    if status == 0 and trace:
        status = deliver_trace(url, token, trace["file"], first_run_id(reply), payload,
                               spool_dir, portal_opts(args))
    if status == 0 and args.fail_on_regression and previous_regressions(reply.body):
        warn("--fail-on-regression: a regression against the previous kernel "
             f"(exit status {EXIT_REGRESSION})")
        return EXIT_REGRESSION
    return status


def load_at_start(root):
    """The box's load just before the benchmark starts, kept with the run; a warning when busy:
    other work sharing the CPUs shows in the result, and a reader of the run should know."""
    load = sample_load(root)
    reasons = busy_reasons(load)
    load["busy"] = bool(reasons)
    if reasons:
        warn("warning: the machine is busy (" + "; ".join(reasons) + "): other work shares "
             "the CPUs with the benchmark, and its result will show it. The load is recorded "
             "with the run (environment.load).")
    return load


def start_trace(args, workdir):
    """A started TraceRecorder, or None (said in one line) when this box cannot trace."""
    if not args.trace:
        return None
    recorder = TraceRecorder(int(args.trace_max_mb * (1 << 20)), workdir, args.root)
    try:
        recorder.start()
    except TraceUnavailable as err:
        recorder.cleanup()
        warn(f"trace: not recorded ({err}); running untraced")
        return None
    log(f"trace: recording scheduler events through {recorder.tracing}")
    return recorder


def trace_output(args):
    if args.trace_file:
        return os.path.abspath(args.trace_file)
    fd, path = tempfile.mkstemp(prefix="schedbench-", suffix=".trace.gz")
    os.close(fd)
    return path


def run_traced(args, command):
    """run_repeats, recorded when --trace asks; (outputs, durations, trace summary | None)."""
    with tempfile.TemporaryDirectory(prefix="schedbench-trace-") as workdir:
        with SignalsToExceptions():
            recorder = start_trace(args, workdir)
            try:
                outputs, durations = run_repeats(
                    command, args.repeat, recorder.add_root if recorder else None)
            finally:
                if recorder is not None:
                    recorder.cleanup()
        if recorder is None:
            return outputs, durations, None
        trace = recorder.write(trace_output(args))
    log(f"trace: {trace['events']} events kept in {trace['file']}"
        + (" (stopped at the size cap)" if trace["capped"] else ""))
    if args.trace_file or args.dry_run:
        trace["kept"] = True
    return outputs, durations, trace


def cmd_flush(args, command):
    spool_dir = spool_dir_from(args.spool_dir)
    paths = sorted(glob.glob(os.path.join(spool_dir, "*.json")))
    if not paths:
        log(f"nothing to flush in {spool_dir}")
        return 0
    _, token = resolve_portal(args, need=False)
    if not token:
        raise UsageError("no API token: pass --token or set SCHEDBENCH_TOKEN")
    counts = {"sent": 0, "kept": 0, "rejected": 0}
    unreachable = set()
    for path in paths:
        counts[flush_one(path, args.url, token, portal_opts(args), unreachable)] += 1
    log(f"flush: {counts['sent']} sent, {counts['kept']} still spooled, "
        f"{counts['rejected']} rejected")
    if counts["kept"]:
        return EXIT_SPOOLED
    return EXIT_ERROR if counts["rejected"] else 0


def cmd_env(args, command):
    print(json.dumps(collect_environment(args.root), indent=2))
    return 0


def default_src():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "src")


def build_targets(sources, cflags):
    """(name, source, flags) for each binary; threadtest also unoptimised, as in the threads."""
    targets = []
    for source in sources:
        name = os.path.splitext(os.path.basename(source))[0]
        targets.append((name, source, cflags))
        if name == "threadtest":
            plain = [f for f in cflags if not f.startswith("-O")]
            targets.append((name + "-O0", source, plain + ["-O0"]))
    return targets


def compile_one(cc, flags, source, output):
    command = cc + flags + ["-pthread", "-o", output, source]
    log(" ".join(shlex.quote(c) for c in command))
    # Compiler diagnostics go straight to the user's terminal.
    if subprocess.run(command, check=False).returncode != 0:
        warn(f"failed to build {os.path.basename(output)}")
        return False
    print(output)
    return True


def copy_scripts(src, out):
    for script in sorted(glob.glob(os.path.join(src, "*.sh"))):
        target = os.path.join(out, os.path.basename(script))
        shutil.copyfile(script, target)
        os.chmod(target, 0o755)
        print(target)


def _download(url, timeout):
    request = urllib.request.Request(url, headers={"User-Agent": f"schedbench/{HARNESS_VERSION}"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read()


def fetch_sources(url, dest, timeout=30.0):
    """Download the sources the portal serves at URL/harness/src/ into dest, each checked
    against the sha256 its index gives. Returns the names fetched."""
    import hashlib

    index_url = url.rstrip("/") + SOURCES_PATH
    try:
        listing = json.loads(_download(index_url, timeout).decode("utf-8"))
        names = []
        os.makedirs(dest, exist_ok=True)
        for entry in listing.get("files", []):
            name = entry.get("name", "")
            if not SOURCE_NAME.fullmatch(name):
                raise CommandFailed(f"{index_url} lists an odd file name {name!r}", EXIT_ERROR)
            # Fetched beside the index, whatever host the index names: it is this portal's.
            data = _download(index_url + name, timeout)
            if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
                raise CommandFailed(f"{name} from {index_url} does not match its sha256",
                                    EXIT_ERROR)
            with tempfile.NamedTemporaryFile(dir=dest, delete=False) as out:
                out.write(data)
            os.replace(out.name, os.path.join(dest, name))
            os.chmod(os.path.join(dest, name), 0o644)
            names.append(name)
    except (OSError, ValueError, http.client.HTTPException) as err:
        raise CommandFailed(f"cannot fetch the benchmark sources from {index_url}: {err}",
                            EXIT_ERROR) from None
    return names


def source_dir(args):
    """--src, else src/ next to this script; when that has no sources and a portal URL is
    known, they are fetched from it (into src/, or ~/.cache/schedbench/src when the script's
    folder is read-only)."""
    if args.src:
        return os.path.abspath(args.src)
    src = default_src()
    if glob.glob(os.path.join(src, "*.c")):
        return src
    url = getattr(args, "url", None) or os.environ.get("SCHEDBENCH_URL")
    if not url:
        return src
    for dest in (src, os.path.expanduser(os.path.join("~", ".cache", "schedbench", "src"))):
        if glob.glob(os.path.join(dest, "*.c")):
            return dest
        try:
            os.makedirs(dest, exist_ok=True)
            writable = os.access(dest, os.W_OK)
        except OSError:
            writable = False
        if writable:
            names = fetch_sources(url, dest, getattr(args, "timeout", 30.0))
            log(f"fetched {', '.join(names)} from {url.rstrip('/')}{SOURCES_PATH} into {dest}")
            return dest
    return src


def cmd_build(args, command):
    src = source_dir(args)
    sources = sorted(glob.glob(os.path.join(src, "*.c")))
    if not sources:
        warn(f"no benchmark sources found in {src}\n{SOURCES_HINT}")
        return EXIT_ERROR
    cc = shlex.split(os.environ.get("CC") or "gcc")
    if not shutil.which(cc[0]):
        warn(f"{cc[0]} not found: install a C compiler (Debian/Ubuntu: apt-get install gcc)")
        return EXIT_ERROR
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    ok = [compile_one(cc, flags, source, os.path.join(out, name))
          for name, source, flags in build_targets(sources, shlex.split(args.cflags))]
    copy_scripts(src, out)
    return 0 if all(ok) else EXIT_ERROR


# --------------------------------------------------------------------------------------
# calibrate: micro-measurements of this machine for the simulator's machine model
# --------------------------------------------------------------------------------------

CALIBRATION_PATH = "/api/v1/machines/calibration/"
CALIBRATE_HELPER = "calibrate"
# Figures the helper must deliver; without them there is no calibration at all.
CALIBRATION_REQUIRED = ("loop_ns", "thread_create_join_us", "wakeup_local_us",
                        "context_switch_us")


def parse_cpu_list(text):
    """'0-3,8,10-11' (sysfs cpulist) -> [0, 1, 2, 3, 8, 10, 11]; [] for None or junk."""
    cpus = []
    for part in (text or "").split(","):
        low, sep, high = part.strip().partition("-")
        if not low.isdigit() or (sep and not high.isdigit()):
            return []
        cpus.extend(range(int(low), int(high) + 1) if sep else [int(low)])
    return cpus


def smt_siblings(root, cpu):
    path = f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
    return set(parse_cpu_list(read_value(root, path))) | {cpu}


def choose_cpus(root, allowed):
    """(A, B, loaded): B and the loaded CPUs avoid A's SMT siblings when the box allows.

    The remote wakeup is then a real cross-core one, and the contention figure is the
    slowdown other cores cause (shared cache, memory, host), not SMT sharing.
    """
    allowed = sorted(allowed)
    cpu_a = allowed[0]
    siblings = smt_siblings(root, cpu_a)
    others = [c for c in allowed if c not in siblings]
    fallback = [c for c in allowed if c != cpu_a]
    cpu_b = (others or fallback or [None])[0]
    return cpu_a, cpu_b, others


def find_calibrate_helper(bin_dir, src_dir, workdir):
    """The compiled helper: from `build`'s output, else compiled now; None without gcc."""
    built = os.path.join(bin_dir, CALIBRATE_HELPER)
    if os.path.isfile(built) and os.access(built, os.X_OK):
        return built
    source = os.path.join(src_dir, CALIBRATE_HELPER + ".c")
    cc = shlex.split(os.environ.get("CC") or "gcc")
    if not os.path.isfile(source) or not shutil.which(cc[0]):
        return None
    output = os.path.join(workdir, CALIBRATE_HELPER)
    command = cc + shlex.split(DEFAULT_CFLAGS) + ["-pthread", "-o", output, source]
    log(f"{built} not found; compiling: " + " ".join(shlex.quote(c) for c in command))
    # Diagnostics go to stderr: stdout carries the JSON.
    ok = subprocess.run(command, stdout=sys.stderr, check=False).returncode == 0
    return output if ok else None


def parse_helper_output(text):
    """{name: {"median", "min", "max", "runs"}} and {name: reason} for what it could not."""
    figures, missing = {}, {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[1] == "none":
            missing[fields[0]] = " ".join(fields[2:]) or "not measured"
            continue
        if len(fields) != 5 or fields[0] == HALT_POLL_SWEEP:  # the sweep: parse_sweep_output
            continue
        values = [to_number(f) for f in fields[1:]]
        if all(isinstance(v, (int, float)) and v == v and abs(v) != float("inf")
               for v in values):
            figures[fields[0]] = {"median": values[0], "min": values[1], "max": values[2],
                                  "runs": values[3]}
    return figures, missing


# The host's halt-polling window (virtualised machines only). KVM polls a halted vCPU for up to
# kvm.halt_poll_ns (KVM_HALT_POLL_NS_DEFAULT 200000, arch/x86/include/asm/kvm_host.h) before
# the host schedules its thread out, so a vCPU woken within the window wakes faster; the guest
# cannot read the host's value, so calibrate finds the window from the wakeups themselves: a
# thread on B woken after B idled each span of the sweep (the helper's -p FROM:TO:STEP, us),
# every span in each of --repeat rounds, the median of 100 x --scale wakes per span and round.
HALT_POLL_SWEEP = "halt_poll_sweep_us"
HALT_POLL_SPANS_US = (50, 400, 25)  # from, to, step: around KVM's default 200 us
# The step rule (docs/harness.md, "The host's halt-polling window"): the window lies between
# spans k-1 and k for the first k at which the lowest latency from span k on exceeds the highest
# before it by more than max(10 % of the median before it, 1 us), with at least two spans on
# each side. A steady climb (deeper idle, no window) has no such jump; a step that falls back
# within the sweep is no step. The rule runs on each span's median over the rounds; the step
# counts only when at least half the rounds, each alone, show one too (the host stops polling
# while its CPU has other work, so a busy spell hides the window from a round).
HALT_POLL_STEP_FRACTION = 0.10
HALT_POLL_STEP_MIN_US = 1.0
HALT_POLL_SIDE_SPANS = 2
# what every note without a measured window ends with
KEEPS_KVM_DEFAULT = "the simulator keeps KVM's default 200 us"


def helper_can_sweep(helper):
    """Whether the helper knows -p (one built before the sweep existed does not)."""
    try:
        proc = subprocess.run([helper, "-h"], capture_output=True, check=False, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"-p FROM:TO:STEP" in proc.stderr


def run_calibrate_helper(helper, cpu_a, cpu_b, loaded, repeats, scale, sweep=None):
    """(figures, missing, sweep text): the helper's output; the sweep's lines stay in the
    text (parse_sweep_output) and are there only when ``sweep`` (from, to, step) was asked."""
    command = [helper, "-a", str(cpu_a), "-r", str(repeats), "-s", repr(scale),
               "-c", ",".join(str(c) for c in loaded)]
    if cpu_b is not None:
        command += ["-b", str(cpu_b)]
    if sweep is not None:
        command += ["-p", ":".join(str(v) for v in sweep)]
    log("measuring: " + " ".join(shlex.quote(c) for c in command))
    try:
        proc = subprocess.run(command, stdout=subprocess.PIPE, check=False)
    except OSError as err:
        raise CommandFailed(f"cannot run {helper}: {err}", EXIT_ERROR) from None
    if proc.returncode != 0:
        raise CommandFailed(f"{helper} exited with status {proc.returncode}; nothing "
                            "measured", EXIT_ERROR)
    text = proc.stdout.decode("utf-8", "replace")
    return (*parse_helper_output(text), text)


def parse_sweep_output(text):
    """{span_us: [each round's median wake latency, us]} from the helper's sweep lines."""
    sweep = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 3 or fields[0] != HALT_POLL_SWEEP:
            continue
        values = [to_number(f) for f in fields[1:]]
        if all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in values):
            sweep[values[0]] = [float(v) for v in values[1:]]
    return sweep


def find_halt_poll_step(latencies):
    """The step in wake latency over ascending idle spans: (k, below, jump) for the first k
    where min(latencies[k:]) - max(latencies[:k]) = jump exceeds max(HALT_POLL_STEP_FRACTION x
    below, HALT_POLL_STEP_MIN_US), below being the median of latencies[:k], with
    HALT_POLL_SIDE_SPANS or more latencies on each side; None when no k qualifies."""
    for k in range(HALT_POLL_SIDE_SPANS, len(latencies) - HALT_POLL_SIDE_SPANS + 1):
        below = statistics.median(latencies[:k])
        jump = min(latencies[k:]) - max(latencies[:k])
        if jump > max(HALT_POLL_STEP_FRACTION * below, HALT_POLL_STEP_MIN_US):
            return k, below, jump
    return None


def halt_poll_from_sweep(sweep):
    """details.halt_poll from the sweep {span_us: [round medians]}: the window and its spread,
    or measured false and why. The rule runs on each span's median over the rounds (the
    estimate) and on each round alone (the spread)."""
    spans = sorted(sweep)
    rounds = min((len(sweep[s]) for s in spans), default=0)
    medians = [statistics.median(sweep[s]) for s in spans]
    table = {f"{s:g}": {"median": round(medians[i], 3), "min": round(min(sweep[s]), 3),
                        "max": round(max(sweep[s]), 3), "runs": len(sweep[s])}
             for i, s in enumerate(spans)}
    found = {"measured": False, "halt_poll_us": None, "sweep": table,
             "rule": {"step_fraction": HALT_POLL_STEP_FRACTION,
                      "step_min_us": HALT_POLL_STEP_MIN_US, "side_spans": HALT_POLL_SIDE_SPANS}}
    if len(spans) < 2 * HALT_POLL_SIDE_SPANS or rounds < 1:
        found["note"] = (f"only {len(spans)} idle spans swept: too few to find a step; "
                         + KEEPS_KVM_DEFAULT)
        return found
    step = find_halt_poll_step(medians)
    per_round = []
    for r in range(rounds):
        at = find_halt_poll_step([sweep[s][r] for s in spans])
        per_round.append(None if at is None else (spans[at[0] - 1] + spans[at[0]]) / 2)
    found["round_estimates_us"] = per_round
    if step is None:
        found["note"] = (f"no step in the wake latency over {spans[0]:g}-{spans[-1]:g} us of "
                         f"idle (medians {min(medians):.1f}-{max(medians):.1f} us): the host "
                         "polled through the whole sweep, or not at all, or it was too noisy "
                         "to tell; " + KEEPS_KVM_DEFAULT)
        return found
    k, below, jump = step
    above = statistics.median(medians[k:])
    seen = [e for e in per_round if e is not None]
    found.update({"bracket_us": [spans[k - 1], spans[k]], "below_us": round(below, 3),
                  "above_us": round(above, 3), "jump_us": round(jump, 3)})
    if 2 * len(seen) < rounds:
        found["note"] = (f"the medians step between {spans[k - 1]:g} and {spans[k]:g} us of "
                         f"idle ({below:.1f} to {above:.1f} us), but only {len(seen)} of "
                         f"{rounds} rounds show a step alone: the host was too busy to trust "
                         "it; " + KEEPS_KVM_DEFAULT)
        return found
    found.update({
        "measured": True, "halt_poll_us": (spans[k - 1] + spans[k]) / 2,
        "note": (f"wakes after {spans[0]:g}-{spans[k - 1]:g} us of idle took {below:.1f} us "
                 f"(median), after {spans[k]:g}-{spans[-1]:g} us {above:.1f} us (at least "
                 f"{jump:.1f} us more than any before): the window is {spans[k - 1]:g}-"
                 f"{spans[k]:g} us, written as {(spans[k - 1] + spans[k]) / 2:g}; each round "
                 f"alone shows a step in {len(seen)} of {rounds}"
                 + (f", at {min(seen):g}-{max(seen):g} us" if seen else ""))})
    return found


def figure(figures, name, digits=4):
    found = figures.get(name)
    return None if found is None else round(float(found["median"]), digits)


def derive_calibration(figures, virtualization, halt_poll=None):
    """The calibration object from the helper's figures; see docs/harness.md for each.
    ``halt_poll``: details.halt_poll (halt_poll_from_sweep), in a guest that swept."""
    missing = [name for name in CALIBRATION_REQUIRED if name not in figures]
    if missing:
        raise CommandFailed("the helper could not measure " + ", ".join(missing)
                            + "; nothing submitted", EXIT_ERROR)
    virtualised = virtualization not in (None, "none")
    local = figure(figures, "wakeup_local_us")
    remote_busy = figure(figures, "wakeup_remote_busy_us")
    idle = figure(figures, "wakeup_idle_us")
    ipi = None if remote_busy is None else round(max(0.0, remote_busy - local), 4)
    # Time a sleeping CPU adds beyond a busy one's wakeup. In a guest, leaving idle means
    # the host waking a halted vCPU, which the guest cannot tell apart from its own exit.
    idle_part = None if idle is None or remote_busy is None else round(
        max(0.0, idle - remote_busy), 4)
    contention = None
    alone, busy = figures.get("loop_alone_ns"), figures.get("loop_busy_ns")
    loaded = figures.get("loaded_cpus")
    if alone and busy and loaded and loaded["median"] > 0:
        slowdown = busy["median"] / alone["median"] - 1.0
        contention = round(max(0.0, slowdown) / loaded["median"], 4)
    return {
        "loop_ns": figure(figures, "loop_ns", 6),
        "loop_memory_ns": figure(figures, "loop_memory_ns", 6),
        "thread_create_join_us": figure(figures, "thread_create_join_us"),
        "wakeup_remote_us": figure(figures, "wakeup_remote_us"),
        "wakeup_local_us": local,
        "context_switch_us": figure(figures, "context_switch_us"),
        "virtualised": virtualised,
        "idle_exit_us": None if idle_part is None else (0.0 if virtualised else idle_part),
        "ipi_us": ipi,
        "vcpu_wake_us": None if idle_part is None else (idle_part if virtualised else 0.0),
        # null (the simulator's default, KVM's 200 us) unless the sweep found the step
        "halt_poll_us": (halt_poll or {}).get("halt_poll_us") if virtualised else None,
        "contention": contention,
    }


# How far the repeats of a figure may spread, (max - min) / median, before the calibration is
# called noisy. The counting loop is plain CPU work: on a quiet machine its repeats agree within
# a few percent. Wakeups, switches and thread creation have a natural tail (cache state, timer
# interrupts), idle wakeups a wide one (which idle state the CPU had reached).
SPREAD_LIMITS = {"loop_ns": 0.25, "loop_memory_ns": 0.25, "loop_alone_ns": 0.25,
                 "loop_busy_ns": 0.5, "wakeup_idle_us": 3.0}
SPREAD_LIMIT = 1.0  # every other figure
SPREAD_SKIP = ("cpu_a", "cpu_b", "loaded_cpus")  # facts, not measurements


def figure_spreads(figures):
    """{figure: (max - min) / median} for every figure measured at least three times."""
    spreads = {}
    for name, found in figures.items():
        if name in SPREAD_SKIP or found["runs"] < 3 or found["median"] <= 0:
            continue
        spreads[name] = round((found["max"] - found["min"]) / found["median"], 3)
    return spreads


def assess_calibration(figures, before, after, steal_during):
    """calibrate's verdict on itself: {"noisy", "reasons", "load", "spread", "limits"}.

    Noisy when the box was busy before or after the measurement (other runnable tasks, steal)
    or steal was high during it, or a figure's repeats spread beyond its limit."""
    reasons = busy_reasons(before, " before measuring") + busy_reasons(after, " after")
    if steal_during is not None and steal_during > BUSY_STEAL_PCT:
        reasons.append(f"steal time {steal_during:g}% of CPU time while measuring (more than "
                       f"{BUSY_STEAL_PCT:g}%)")
    spreads = figure_spreads(figures)
    for name, spread in sorted(spreads.items()):
        limit = SPREAD_LIMITS.get(name, SPREAD_LIMIT)
        if spread > limit:
            found = figures[name]
            reasons.append(f"{name} spread {spread:.0%} over {found['runs']} repeats "
                           f"({found['min']:g} to {found['max']:g}; limit {limit:.0%})")
    return {"noisy": bool(reasons), "reasons": reasons,
            "load": {"before": before, "after": after, "steal_pct_during": steal_during},
            "spread": spreads,
            "limits": {"runnable_others": BUSY_RUNNABLE, "steal_pct": BUSY_STEAL_PCT,
                       "spread": {**SPREAD_LIMITS, "other figures": SPREAD_LIMIT}}}


def allowed_cpus():
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def halt_poll_plan(helper, virtualization, cpu_b):
    """(the sweep to ask the helper for or None, details.halt_poll when there is none)."""
    if virtualization in (None, "none"):
        return None, {"measured": False, "note": "not virtualised: no host polls a halted "
                      "CPU (halt_poll_us applies to guests only)"}
    if cpu_b is None:
        return None, {"measured": False,
                      "note": "one CPU only: no other CPU to wake; " + KEEPS_KVM_DEFAULT}
    if not helper_can_sweep(helper):
        return None, {"measured": False, "note": "the calibrate helper predates the idle-span "
                      "sweep (run `schedbench.py build` again); " + KEEPS_KVM_DEFAULT}
    return HALT_POLL_SPANS_US, None


def measure_calibration(args):
    env = collect_environment(args.root)
    virtualization = env["machine"].get("virtualization")
    built = os.path.join(os.path.abspath(args.bin), CALIBRATE_HELPER)
    # Sources are fetched only when the helper has to be compiled.
    src = os.path.abspath(args.src or default_src()) if os.access(built, os.X_OK) \
        else source_dir(args)
    with tempfile.TemporaryDirectory(prefix="schedbench-calibrate-") as workdir:
        helper = find_calibrate_helper(os.path.abspath(args.bin), src, workdir)
        if helper is None:
            raise CommandFailed(
                "calibrate needs its compiled helper and none was found: run "
                "`schedbench.py build` (needs gcc and harness/src/calibrate.c) and pass "
                "--bin DIR. Timing threads, wakeups and context switches from Python would "
                "measure the interpreter, not the machine; the only figure available without "
                f"it is the virtualisation ({virtualization or 'unknown'}).", EXIT_ERROR)
        cpu_a, cpu_b, loaded = choose_cpus(args.root, allowed_cpus())
        sweep, halt_poll = halt_poll_plan(helper, virtualization, cpu_b)
        log("reading the load before measuring")
        before = sample_load(args.root, samples=10)
        cpu_start = read_stat_load(args.root)[0]
        figures, missing, text = run_calibrate_helper(helper, cpu_a, cpu_b, loaded,
                                                      args.repeat, args.scale, sweep)
        steal_during = steal_pct(cpu_start, read_stat_load(args.root)[0])
        after = sample_load(args.root, samples=10)
    if sweep is not None:
        halt_poll = halt_poll_from_sweep(parse_sweep_output(text))
    calibration = derive_calibration(figures, virtualization, halt_poll)
    quality = assess_calibration(figures, before, after, steal_during)
    calibration["noisy"] = quality["noisy"]
    for name, reason in sorted(missing.items()):
        log(f"not measured: {name} ({reason})")
    log(f"host halt-polling window: {halt_poll['note']}")
    return {
        "machine": env["machine"],
        "kernel": env["kernel"],
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "calibration": calibration,
        "details": {
            "harness_version": HARNESS_VERSION,
            "virtualization": virtualization,
            "cpus": {"a": cpu_a, "b": cpu_b, "loaded": loaded},
            "repeats": args.repeat,
            "scale": args.scale,
            "figures": figures,
            "not_measured": missing,
            "quality": quality,
            "halt_poll": halt_poll,
        },
    }


def print_calibration(calibration):
    for name, value in calibration.items():
        log(f"  {name:<22} {'not measured' if value is None else value}")


def judge_calibration(payload, accept_noisy):
    """Say what the calibration thinks of itself; refuse a noisy one unless told to keep it."""
    quality = payload["details"]["quality"]
    spreads = ", ".join(f"{name} {spread:.0%}" for name, spread in quality["spread"].items())
    log(f"spread of the repeats, (max - min) / median: {spreads or 'none repeated'}")
    load = quality["load"]
    for when in ("before", "after"):
        found = load[when]
        log(f"load {when}: {found['runnable_others']} other tasks runnable on average (peak "
            f"{found['runnable_others_max']}), steal {found['steal_pct']}%, load average "
            f"{found['loadavg']}")
    if not quality["noisy"]:
        log("the machine was quiet and the repeats agree: calibration not noisy")
        return
    reasons = "".join(f"\n  - {reason}" for reason in quality["reasons"])
    if accept_noisy:
        warn("warning: calibration marked noisy (--accept-noisy):" + reasons
             + "\nPredictions made with it carry the mark.")
        return
    raise CommandFailed(
        "calibration refused: the machine was busy or the figures spread too widely to trust"
        f" them:{reasons}\nNothing was sent. Calibrate again on a quiet machine, or pass "
        f"--accept-noisy to keep it marked noisy (exit status {EXIT_NOISY}).", EXIT_NOISY)


def calibration_endpoint(url):
    return check_url(url).rstrip("/") + CALIBRATION_PATH


def keep_calibration(spool_dir, payload):
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = os.path.join(spool_dir, "calibrations", f"calibration-{stamp}.json")
    return write_private_json(path, payload)


def cmd_calibrate(args, command):
    if not 1 <= args.repeat <= 51:
        raise UsageError("--repeat must be 1-51")
    if not 0 < args.scale <= 100:
        raise UsageError("--scale must be above 0 and at most 100")
    url, token = resolve_portal(args, need=not args.dry_run)
    if args.submit:
        try:
            with open(args.submit, encoding="utf-8") as f:
                text = f.read()
            if not text.strip():
                raise UsageError(f"{args.submit}: the file is empty (a calibration that "
                                 "calibrate refused, exit status 4, writes nothing)")
            payload = json.loads(text)
        except (OSError, ValueError) as err:
            raise UsageError(f"{args.submit}: {err}") from None
    else:
        payload = measure_calibration(args)
        log("calibration:")
        print_calibration(payload["calibration"])
        judge_calibration(payload, args.accept_noisy)
    if args.dry_run:
        print(json.dumps(payload, indent=2))
        return 0
    reply = send(calibration_endpoint(url), token, json.dumps(payload).encode("utf-8"),
                 **portal_opts(args))
    if reply.outcome == "ok":
        print(absolute(url, str(reply.body.get("url") or "")))
        return 0
    if reply.outcome == "retry":
        warn(f"could not deliver to {url} ({reply.detail})")
    else:
        report_refusal(reply)
    kept = keep_calibration(spool_dir_from(args.spool_dir), payload)
    warn(f"calibration kept in {kept}; send it later with: schedbench.py calibrate "
         f"--submit {kept}")
    return EXIT_ERROR if reply.outcome == "rejected" else EXIT_SPOOLED


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------

def add_portal_options(parser):
    parser.add_argument("--url", help="portal base URL (default $SCHEDBENCH_URL)")
    parser.add_argument("--token", help="API token (default $SCHEDBENCH_TOKEN)")
    parser.add_argument("--spool-dir", metavar="DIR",
                        help=f"spool directory (default $SCHEDBENCH_SPOOL or {DEFAULT_SPOOL})")
    parser.add_argument("--retries", type=int, default=4, metavar="N",
                        help="retries after a connection error, timeout or 5xx (default 4)")
    parser.add_argument("--backoff", type=float, default=1.0, metavar="SECONDS",
                        help="first retry delay, doubled each time (default 1.0)")
    parser.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                        help="HTTP timeout per attempt (default 30)")


def add_run_parser(sub):
    run = sub.add_parser("run", help="run a benchmark N times and submit the results",
                         usage="%(prog)s --benchmark NAME [options] -- COMMAND [ARGS...]")
    run.add_argument("--benchmark", required=True, help="benchmark name, e.g. threadtest")
    run.add_argument("--param", action="append", default=[], metavar="K=V",
                     help="a benchmark parameter (repeatable); numbers become numbers")
    run.add_argument("--set", action="append", default=[], metavar="TUNABLE=V",
                     help="write a scheduler tunable (/proc/sys/kernel/TUNABLE) for this run "
                     "and put the old value back afterwards (repeatable; needs root)")
    run.add_argument("--repeat", type=int, default=1, metavar="N", help="runs (default 1)")
    run.add_argument("--vmstat", type=float, metavar="SECONDS",
                     help="sample vmstat every SECONDS while the benchmark runs")
    run.add_argument("--label", "--policy", dest="label", metavar="TEXT",
                     help="policy label, e.g. 'sched_yield in spin' or 'SCHED_BATCH'")
    run.add_argument("--bisect", type=int, metavar="ID",
                     help="join these runs to bisection ID at the commit under test (read "
                     "from uname -r, e.g. 6.8.0-rc3-00042-gabcdef123456, or --commit); "
                     "prints the `git bisect good|bad` line to type")
    run.add_argument("--commit", metavar="SHA",
                     help="the commit under test, when the kernel's name does not carry it")
    run.add_argument("--fail-on-regression", action="store_true",
                     help=f"exit {EXIT_REGRESSION} when the portal's verdict against the "
                          "previous kernel is a regression (for CI jobs)")
    run.add_argument("--dry-run", action="store_true",
                     help="print the JSON that would be sent, send nothing")
    run.add_argument("--root", default="/", metavar="DIR",
                     help="read /proc and /sys under DIR (default /)")
    run.add_argument("--trace", action="store_true",
                     help="record the scheduler events of the benchmark's tasks through "
                     "tracefs and submit them with the run (needs root)")
    run.add_argument("--trace-max-mb", type=float, default=64, metavar="N",
                     help="stop recording after N MB of raw events (default 64)")
    run.add_argument("--trace-file", metavar="FILE",
                     help="also keep the trace (gzip) in FILE")
    run.add_argument("-q", "--quiet", action="store_true",
                     help="do not echo progress and the benchmark's output to stderr")
    add_portal_options(run)
    run.set_defaults(func=cmd_run)


def add_calibrate_parser(sub):
    calibrate = sub.add_parser(
        "calibrate", help="measure this machine's scheduling costs for the simulator")
    calibrate.add_argument("--dry-run", action="store_true",
                           help="print the JSON that would be sent, send nothing")
    calibrate.add_argument("--bin", default="schedbench-bin", metavar="DIR",
                           help="where `build` put the calibrate helper (default "
                           "./schedbench-bin; compiled on the fly when missing)")
    calibrate.add_argument("--src", metavar="DIR", help="source directory (default: src/ "
                           "next to this script)")
    calibrate.add_argument("--repeat", type=int, default=5, metavar="N",
                           help="runs of each micro-measurement; the median is kept "
                           "(default 5)")
    calibrate.add_argument("--scale", type=float, default=1.0, metavar="X",
                           help="multiply every iteration count (default 1.0, ~10 s)")
    calibrate.add_argument("--accept-noisy", action="store_true",
                           help="keep a calibration measured on a busy machine or with widely "
                           f"spread figures, marked noisy (default: refuse it, exit {EXIT_NOISY})")
    calibrate.add_argument("--submit", metavar="FILE",
                           help="send a calibration kept earlier instead of measuring")
    calibrate.add_argument("--root", default="/", metavar="DIR",
                           help="read /proc and /sys under DIR (default /)")
    add_portal_options(calibrate)
    calibrate.set_defaults(func=cmd_calibrate, quiet=False)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="schedbench.py",
        description=f"schedbench harness {HARNESS_VERSION}: run scheduler benchmarks and "
        "submit their raw output with the machine's environment.")
    parser.add_argument("--version", action="version", version=HARNESS_VERSION)
    sub = parser.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True
    add_run_parser(sub)
    flush = sub.add_parser("flush", help="send every spooled submission")
    add_portal_options(flush)
    flush.set_defaults(func=cmd_flush, quiet=False)
    build = sub.add_parser("build", help="compile the bundled C benchmarks with gcc")
    build.add_argument("--out", default="schedbench-bin", metavar="DIR",
                       help="output directory (default ./schedbench-bin)")
    build.add_argument("--cflags", default=DEFAULT_CFLAGS, metavar="FLAGS",
                       help=f"compiler flags as one string (default {DEFAULT_CFLAGS!r})")
    build.add_argument("--src", metavar="DIR", help="source directory (default: src/ next "
                       "to this script, fetched from --url when missing)")
    build.add_argument("--url", help="portal to fetch the sources from when there is no src/ "
                       "(default $SCHEDBENCH_URL)")
    build.set_defaults(func=cmd_build, quiet=False)
    env = sub.add_parser("env", help="print the recorded environment as JSON")
    env.add_argument("--root", default="/", metavar="DIR",
                     help="read /proc and /sys under DIR (default /)")
    env.set_defaults(func=cmd_env, quiet=False)
    add_calibrate_parser(sub)
    return parser


def split_command(argv):
    """Everything after the first "--" is the benchmark command, passed on untouched."""
    if "--" in argv:
        index = argv.index("--")
        return argv[:index], argv[index + 1:]
    return argv, []


def glue_cflags(argv):
    """argparse refuses option values starting with a dash, and compiler flags always do."""
    glued, i = [], 0
    while i < len(argv):
        if argv[i] == "--cflags" and i + 1 < len(argv):
            glued.append("--cflags=" + argv[i + 1])
            i += 2
        else:
            glued.append(argv[i])
            i += 1
    return glued


def main(argv=None):
    global QUIET
    own, command = split_command(list(sys.argv[1:] if argv is None else argv))
    own = glue_cflags(own)
    args = build_parser().parse_args(own)
    args.argv = [*own, "--", *command] if command else own
    QUIET = args.quiet
    try:
        if command and args.cmd != "run":
            raise UsageError("only `run` takes a command after --")
        return args.func(args, command)
    except UsageError as err:
        warn(f"error: {err}")
        return EXIT_USAGE
    except CommandFailed as err:
        warn(str(err))
        return err.status
    except Terminated as err:
        warn("terminated")
        return 128 + err.signal
    except KeyboardInterrupt:
        warn("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""Machine topology and the scheduling-domain tree built over it.

A topology ``SxCxT`` is sockets x cores per socket x hardware threads per core.  CPU ids are
numbered socket-major, then core, then thread, as Linux usually enumerates them.  Domains follow
the 2.6-era layout: an SMT level (siblings of one core), an MC level (cores of one socket, which
share the last-level cache) and a CPU/package level spanning all sockets.  NUMA node levels are not
modelled: every socket is assumed to see the same memory.
"""

import re
from dataclasses import dataclass

from .domains import DomainLevel
from .errors import InvalidValueError

_TOPOLOGY_RE = re.compile(r"^\s*(\d+)\s*[xX]\s*(\d+)\s*[xX]\s*(\d+)\s*$")
MAX_CPUS = 1024


# The nearest cache two CPUs share, by Topology.distance(): a CPU and its SMT siblings share
# the core's L1 and L2, the cores of a socket (the MC level) the last-level cache, and sockets
# (the CPU level) none: a line comes from the other socket.  A migrated task refetches its
# working set from there (Engine.set_working_set(), docs/simulator.md, Machine model).
SHARED_CACHE = ("L1", "L2", "LLC", "remote")


@dataclass(frozen=True)
class Topology:
    sockets: int
    cores: int
    threads: int

    @property
    def ncpus(self):
        return self.sockets * self.cores * self.threads

    def label(self):
        return f"{self.sockets}x{self.cores}x{self.threads}"

    def socket_of(self, cpu):
        return cpu // (self.cores * self.threads)

    def core_of(self, cpu):
        return cpu // self.threads

    def distance(self, a, b):
        """0 same CPU, 1 SMT sibling, 2 same socket (shared LLC), 3 another socket."""
        if a == b:
            return 0
        if self.core_of(a) == self.core_of(b):
            return 1
        if self.socket_of(a) == self.socket_of(b):
            return 2
        return 3

    def siblings(self, cpu):
        base = self.core_of(cpu) * self.threads
        return [c for c in range(base, base + self.threads) if c != cpu]


def parse_topology(text, field_name="topology"):
    match = _TOPOLOGY_RE.match(str(text))
    if not match:
        raise InvalidValueError(
            field_name, f"topology {text!r} does not parse; expected SxCxT such as 1x2x1 or 2x4x2"
        )
    sockets, cores, threads = (int(g) for g in match.groups())
    topo = Topology(sockets, cores, threads)
    if min(sockets, cores, threads) < 1 or topo.ncpus > MAX_CPUS:
        raise InvalidValueError(
            field_name, f"topology {text!r} is invalid: every factor must be >= 1 and "
            f"the machine at most {MAX_CPUS} CPUs"
        )
    return topo


def topology_for_cpus(ncpus, field_name="cpus"):
    if isinstance(ncpus, bool) or not isinstance(ncpus, int):
        try:
            ncpus = int(str(ncpus), 10)
        except ValueError:
            raise InvalidValueError(field_name, f"cpus {ncpus!r} is not an integer") from None
    if ncpus < 1 or ncpus > MAX_CPUS:
        raise InvalidValueError(field_name, f"cpus {ncpus} is invalid: must be 1..{MAX_CPUS}")
    return Topology(1, ncpus, 1)


# Defaults from the 2.6.22-2.6.24 topology.h initialisers (see docs/simulator.md).
LEVEL_DEFAULTS = {
    "SMT": {"min_interval_ms": 1, "max_interval_ms": 2, "busy_factor": 64, "imbalance_pct": 110,
                "cache_nice_tries": 0},
    "MC": {"min_interval_ms": 1, "max_interval_ms": 4, "busy_factor": 64, "imbalance_pct": 125,
               "cache_nice_tries": 1},
    "CPU": {"min_interval_ms": 1, "max_interval_ms": 4, "busy_factor": 64, "imbalance_pct": 125,
                "cache_nice_tries": 1},
}


def sd_init_66(name, weight):
    """6.6's sd_init() (kernel/sched/topology.c) for a level spanning ``weight`` CPUs: the
    intervals scale with the span (min_interval = balance_interval = sd_weight ms, max_interval
    twice that), imbalance_pct 117 and cache_nice_tries 0 unless the level's flags say more:
    SMT (SD_SHARE_CPUCAPACITY) imbalance_pct 110; MC (SD_SHARE_PKG_RESOURCES) 117 with
    cache_nice_tries 1; the package level (DIE, no topology flags) cache_nice_tries 1.  The
    busy_factor (16 there) comes from the `busy_factor` tunable, the 6.6 profile's default."""
    params = {"min_interval_ms": weight, "max_interval_ms": 2 * weight, "imbalance_pct": 117,
              "cache_nice_tries": 1}
    if name == "SMT":
        params.update(imbalance_pct=110, cache_nice_tries=0)
    return params


def build_domains(topo, cpu, flags_for_level, busy_factor, *, sd_init_66_params=False):
    """The domain levels of ``cpu``, lowest first; levels spanning one CPU are dropped.  With
    ``sd_init_66_params`` a level's parameters are 6.6's sd_init(), else the 2.6-era table."""
    levels = []
    spans = []
    core_base = topo.core_of(cpu) * topo.threads
    spans.append(("SMT", tuple(range(core_base, core_base + topo.threads))))
    per_socket = topo.cores * topo.threads
    sock_base = topo.socket_of(cpu) * per_socket
    spans.append(("MC", tuple(range(sock_base, sock_base + per_socket))))
    spans.append(("CPU", tuple(range(topo.ncpus))))
    seen = set()
    for name, span in spans:
        if len(span) < 2 or span in seen:
            continue
        seen.add(span)
        params = sd_init_66(name, len(span)) if sd_init_66_params else dict(LEVEL_DEFAULTS[name])
        params["busy_factor"] = busy_factor
        level = DomainLevel(name=name, span=span, flags=frozenset(flags_for_level(name)), **params)
        levels.append(level)
    return levels

"""One level of the sched-domain tree as one CPU sees it, with that CPU's balancing state.

A plain class with typed fields, not a dataclass: the compiled build (simulator/build.py) makes
its fields C struct members, and the load balancer reads them on every balancing pass."""


class DomainLevel:
    __slots__ = ("name", "span", "min_interval_ms", "max_interval_ms", "busy_factor",
                 "imbalance_pct", "cache_nice_tries", "flags", "balance_interval_ms",
                 "nr_balance_failed", "last_balance_ns", "groups")

    def __init__(self, *, name: str, span: tuple[int, ...], min_interval_ms: float,
                 max_interval_ms: float, busy_factor: int, imbalance_pct: int,
                 cache_nice_tries: int, flags: frozenset[str]) -> None:
        self.name: str = name
        self.span: tuple[int, ...] = span
        self.min_interval_ms: float = min_interval_ms
        self.max_interval_ms: float = max_interval_ms
        self.busy_factor: int = busy_factor
        self.imbalance_pct: int = imbalance_pct
        self.cache_nice_tries: int = cache_nice_tries
        self.flags: frozenset[str] = flags
        # the interval doubles while the level looks balanced and resets after a move
        self.balance_interval_ms: float = min_interval_ms
        self.nr_balance_failed: int = 0
        self.last_balance_ns: int = 0
        # balance66.sched_groups() of this level, made at its first use (a balancing pass or a
        # wakeup walk): the spans it is built from do not change after balance.setup()
        self.groups: list[tuple[int, ...]] | None = None

    def __repr__(self) -> str:
        return f"DomainLevel({self.name}, span={self.span})"

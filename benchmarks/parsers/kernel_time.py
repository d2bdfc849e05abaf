"""`<kernel>: N ms` lines: one result set per kernel."""

from .timing import TimingLinesParser


class KernelTimeParser(TimingLinesParser):
    name = "kernel-time"
    version = 2
    description = "'<kernel>: N ms' lines"
    kind = "kernel"
    example = "2.6.30: 1234 ms"

"""`N loops time M ms` lines: one result set per loop count (params["loops"])."""

from .timing import TimingLinesParser


class LoopsTimeParser(TimingLinesParser):
    name = "loops-time"
    version = 1
    description = "'N loops time M ms' lines"
    kind = "loops"
    example = "10000000 loops time 14321 ms"

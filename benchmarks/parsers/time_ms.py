"""Plain `time N ms` lines: repeats of one threadtest setup, one sample per line."""

from .timing import TimingLinesParser


class TimeMsParser(TimingLinesParser):
    name = "time-ms"
    version = 1
    description = "plain 'time N ms' lines"
    kind = "time"
    example = "time 5210 ms"
